// RecallReader: lineage, single messages, message windows and browsing (search is in
// recall_search.cpp), each on the read-only connection.
#include "store/recall_reader.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "store/fts_rank.h"
#include "store/session_rows.h"

namespace talaria::store {
namespace {

// How long a read waits when SQLite reports the file busy. In WAL mode that happens only while
// another connection recovers the log after a crash, a short moment.
constexpr int kReaderBusyTimeoutMs = 5000;
// Lineages are short (a session, its delegated children, their children); the bound stops a
// damaged parent chain.
constexpr int kMaxLineageDepth = 64;
constexpr int kPreviewChars = 200;

constexpr const char* kRoot =
    "WITH RECURSIVE up(id, parent_id, depth) AS ("
    "  SELECT id, parent_id, 0 FROM sessions WHERE id = ?1"
    "  UNION SELECT s.id, s.parent_id, up.depth + 1 FROM sessions s JOIN up ON s.id = up.parent_id"
    "  WHERE up.depth < ?2) "
    "SELECT id FROM up ORDER BY depth DESC LIMIT 1";
constexpr const char* kDescendants =
    "WITH RECURSIVE down(id, depth) AS (SELECT ?1, 0"
    "  UNION SELECT s.id, down.depth + 1 FROM sessions s JOIN down ON s.parent_id = down.id"
    "  WHERE down.depth < ?2) "
    "SELECT " TALARIA_SESSION_COLUMNS
    " FROM sessions WHERE id IN (SELECT id FROM down) "
    "ORDER BY id = ?1 DESC, started_at_ms, id";
// ?1 the session, ?2 the roles as a JSON array ('[]': every role but system).
#define TALARIA_ROLE_FILTER                                                          \
  " AND (CASE WHEN ?2 = '[]' THEN role <> 'system' ELSE role IN (SELECT value FROM " \
  "json_each(?2)) END)"
constexpr const char* kGetMessage =
    "SELECT id, session_id, seq, role, content, tool_calls, tool_call_id, name, created_at_ms "
    "FROM messages WHERE id = ?1";
constexpr const char* kBefore =
    "SELECT id, session_id, seq, role, content, tool_calls, tool_call_id, name, created_at_ms "
    "FROM messages WHERE session_id = ?1 AND seq < ?3" TALARIA_ROLE_FILTER
    " ORDER BY seq DESC LIMIT ?4";
constexpr const char* kAfter =
    "SELECT id, session_id, seq, role, content, tool_calls, tool_call_id, name, created_at_ms "
    "FROM messages WHERE session_id = ?1 AND seq > ?3" TALARIA_ROLE_FILTER " ORDER BY seq LIMIT ?4";
constexpr const char* kCountBefore =
    "SELECT count(*) FROM messages WHERE session_id = ?1 AND seq < ?3" TALARIA_ROLE_FILTER;
constexpr const char* kCountAfter =
    "SELECT count(*) FROM messages WHERE session_id = ?1 AND seq > ?3" TALARIA_ROLE_FILTER;
constexpr const char* kBrowse =
    "SELECT " TALARIA_SESSION_COLUMNS
    ", (SELECT substr(content, 1, ?3) FROM messages m "
    "  WHERE m.session_id = s.id AND m.role = 'user' ORDER BY seq LIMIT 1) "
    "FROM sessions s WHERE (?2 = 0 OR parent_id IS NULL) "
    "ORDER BY updated_at_ms DESC, id DESC LIMIT ?1";
#undef TALARIA_ROLE_FILTER

RecallMessage ReadMessageRow(const Stmt& s) {
  RecallMessage m;
  m.id = s.Int(0);
  m.session_id = s.Text(1);
  m.seq = s.Int(2);
  m.role = s.Text(3);
  m.content = s.Text(4);
  if (!s.IsNull(5)) {
    // A damaged call list is shown as the text it is rather than failing the whole read.
    auto calls = ParseJson(s.Text(5));
    m.tool_calls = calls ? std::move(*calls) : Json(s.Text(5));
  }
  m.tool_call_id = s.Text(6);
  m.name = s.Text(7);
  m.created_at_ms = s.Int(8);
  return m;
}

std::string RolesJson(const std::vector<std::string>& roles) {
  Json array = Json::array();
  for (const std::string& r : roles) array.push_back(r);
  return DumpJson(array);
}

int64_t Clamp(size_t n) { return static_cast<int64_t>(std::min<size_t>(n, 1u << 20)); }

// Ends the read transaction however the read ended.
class ReadScope {
 public:
  explicit ReadScope(SqliteDb& db) : db_(db) {}
  ~ReadScope() { db_.EndRead(); }
  ReadScope(const ReadScope&) = delete;
  ReadScope& operator=(const ReadScope&) = delete;

 private:
  SqliteDb& db_;
};

}  // namespace

Result<SqliteDb*> RecallReader::Db() {
  if (db_ == nullptr) {
    db_ = TALARIA_TRY(SqliteDb::OpenReadOnly(path_));
    sqlite3_busy_timeout(db_->handle(), kReaderBusyTimeoutMs);
    // A file that is not (yet) a talaria database: say so instead of "no such table".
    const int64_t version = TALARIA_TRY(db_->QueryInt("PRAGMA user_version"));
    if (version < 2) {
      db_.reset();
      return Err(FailedPreconditionError(
          path_ + " has no session search index yet (schema version " + std::to_string(version) +
          "); run talaria once to create or migrate it"));
    }
    // The tail indexes (recall_search.cpp): temp tables, writable on a read-only connection;
    // and the ranking function their searches score with.
    Status made = RegisterFtsRank(*db_);
    if (made.ok())
      made = db_->Exec(
          "CREATE VIRTUAL TABLE temp.recall_tail_words USING fts5(body, tools, "
          "tokenize='unicode61 remove_diacritics 2');"
          "CREATE VIRTUAL TABLE temp.recall_tail_cjk USING fts5(body, tools, tokenize='trigram');");
    if (!made.ok()) {
      db_.reset();
      return Err(std::move(made));
    }
    tail_from_ = -1;
    tail_to_ = 0;
  }
  return db_.get();
}

Result<RecallSearchResult> RecallReader::Search(std::string_view query,
                                                const RecallSearchOptions& options) {
  std::lock_guard lock(mu_);
  SqliteDb* db = TALARIA_TRY(Db());
  TALARIA_RETURN_IF_ERROR(db->BeginRead());
  ReadScope scope(*db);
  return SearchLocked(*db, query, options);
}

Result<std::string> RecallReader::RootLocked(SqliteDb& db, std::string_view session_id) {
  Stmt s = TALARIA_TRY(db.Prepare(kRoot));
  s.Bind(1, session_id).Bind(2, int64_t{kMaxLineageDepth});
  if (!TALARIA_TRY(s.Step())) return std::string();
  return s.Text(0);
}

Result<std::vector<SessionRow>> RecallReader::Lineage(std::string_view session_id) {
  std::lock_guard lock(mu_);
  SqliteDb* db = TALARIA_TRY(Db());
  TALARIA_RETURN_IF_ERROR(db->BeginRead());
  ReadScope scope(*db);
  const std::string root = TALARIA_TRY(RootLocked(*db, session_id));
  if (root.empty()) return std::vector<SessionRow>();
  Stmt s = TALARIA_TRY(db->Prepare(kDescendants));
  s.Bind(1, root).Bind(2, int64_t{kMaxLineageDepth});
  std::vector<SessionRow> out;
  while (TALARIA_TRY(s.Step())) out.push_back(ReadSessionRow(s));
  return out;
}

Result<std::optional<RecallMessage>> RecallReader::GetMessage(int64_t message_id) {
  std::lock_guard lock(mu_);
  SqliteDb* db = TALARIA_TRY(Db());
  Stmt s = TALARIA_TRY(db->Prepare(kGetMessage));
  s.Bind(1, message_id);
  if (!TALARIA_TRY(s.Step())) return std::optional<RecallMessage>();
  return std::optional<RecallMessage>(ReadMessageRow(s));
}

Result<MessageWindow> RecallReader::ReadWindow(std::string_view session_id,
                                               const MessageWindowOptions& options) {
  std::lock_guard lock(mu_);
  SqliteDb* db = TALARIA_TRY(Db());
  TALARIA_RETURN_IF_ERROR(db->BeginRead());
  ReadScope scope(*db);
  const std::string roles = RolesJson(options.roles);
  auto rows = [&](const char* sql, int64_t seq, size_t n) -> Result<std::vector<RecallMessage>> {
    Stmt s = TALARIA_TRY(db->Prepare(sql));
    s.Bind(1, session_id).Bind(2, roles).Bind(3, seq).Bind(4, Clamp(n));
    std::vector<RecallMessage> out;
    while (TALARIA_TRY(s.Step())) out.push_back(ReadMessageRow(s));
    return out;
  };
  auto count = [&](const char* sql, int64_t seq) -> Result<int64_t> {
    Stmt s = TALARIA_TRY(db->Prepare(sql));
    s.Bind(1, session_id).Bind(2, roles).Bind(3, seq);
    if (!TALARIA_TRY(s.Step())) return int64_t{0};
    return s.Int(0);
  };

  MessageWindow w;
  if (options.around_id > 0) {
    Stmt a = TALARIA_TRY(db->Prepare(kGetMessage));
    a.Bind(1, options.around_id);
    if (!TALARIA_TRY(a.Step()) || a.Text(1) != session_id) {
      return Err(NotFoundError("message " + std::to_string(options.around_id) +
                               " is not in session " + std::string(session_id)));
    }
    RecallMessage anchor = ReadMessageRow(a);
    std::vector<RecallMessage> before = TALARIA_TRY(rows(kBefore, anchor.seq, options.window));
    std::vector<RecallMessage> after = TALARIA_TRY(rows(kAfter, anchor.seq, options.window));
    const int64_t n_before = TALARIA_TRY(count(kCountBefore, anchor.seq));
    const int64_t n_after = TALARIA_TRY(count(kCountAfter, anchor.seq));
    w.before = n_before - static_cast<int64_t>(before.size());
    w.after = n_after - static_cast<int64_t>(after.size());
    w.total = n_before + n_after + 1;
    std::reverse(before.begin(), before.end());
    w.messages = std::move(before);
    w.messages.push_back(std::move(anchor));
    for (RecallMessage& m : after) w.messages.push_back(std::move(m));
    return w;
  }
  {
    Stmt s = TALARIA_TRY(db->Prepare("SELECT 1 FROM sessions WHERE id = ?1"));
    s.Bind(1, session_id);
    if (!TALARIA_TRY(s.Step())) return Err(NotFoundError("no session " + std::string(session_id)));
  }
  w.total = TALARIA_TRY(count(kCountAfter, 0));
  const auto head = static_cast<int64_t>(options.head), tail = static_cast<int64_t>(options.tail);
  if (w.total <= head + tail) {
    w.messages = TALARIA_TRY(rows(kAfter, 0, static_cast<size_t>(w.total)));
    return w;
  }
  w.truncated = true;
  w.messages = TALARIA_TRY(rows(kAfter, 0, options.head));
  std::vector<RecallMessage> last =
      TALARIA_TRY(rows(kBefore, std::numeric_limits<int64_t>::max(), options.tail));
  std::reverse(last.begin(), last.end());
  for (RecallMessage& m : last) w.messages.push_back(std::move(m));
  return w;
}

Result<std::vector<SessionPreview>> RecallReader::Browse(const BrowseOptions& options) {
  std::lock_guard lock(mu_);
  SqliteDb* db = TALARIA_TRY(Db());
  TALARIA_RETURN_IF_ERROR(db->BeginRead());
  ReadScope scope(*db);
  // Sessions without a user message (opened and left) are skipped, so ask for some spare.
  Stmt s = TALARIA_TRY(db->Prepare(kBrowse));
  s.Bind(1, Clamp(options.limit + options.exclude_sessions.size() + 20));
  s.Bind(2, int64_t{options.skip_children ? 1 : 0}).Bind(3, int64_t{kPreviewChars});
  std::vector<SessionPreview> out;
  while (out.size() < options.limit && TALARIA_TRY(s.Step())) {
    if (s.IsNull(16)) continue;
    SessionPreview p;
    p.session = ReadSessionRow(s);
    if (std::find(options.exclude_sessions.begin(), options.exclude_sessions.end(), p.session.id) !=
        options.exclude_sessions.end()) {
      continue;
    }
    p.preview = s.Text(16);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace talaria::store
