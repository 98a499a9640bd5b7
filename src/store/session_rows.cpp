#include "store/session_rows.h"

namespace talaria::store {

SessionRow ReadSessionRow(const Stmt& s) {
  SessionRow r;
  r.id = s.Text(0);
  r.parent_id = s.Text(1);
  r.cwd = s.Text(2);
  r.model = s.Text(3);
  r.title = s.Text(4);
  r.source = s.Text(5);
  r.started_at_ms = s.Int(6);
  r.updated_at_ms = s.Int(7);
  r.ended_at_ms = s.Int(8);
  r.end_reason = s.Text(9);
  r.totals.input_tokens = s.Int(10);
  r.totals.cached_tokens = s.Int(11);
  r.totals.output_tokens = s.Int(12);
  r.totals.reasoning_tokens = s.Int(13);
  r.totals.cost_usd = s.Real(14);
  r.message_count = s.Int(15);
  return r;
}

}  // namespace talaria::store
