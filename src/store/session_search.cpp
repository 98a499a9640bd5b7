// SqliteSessionStore::Search: FTS5 over the word index (unicode61) or, for CJK queries, the
// trigram index over the messages holding CJK text.
//
// Two steps. First the matching ids and their BM25 rank (talaria_bm25, fts_rank.h), newest first
// and at most kSearchRankWindow of them (FTS5 streams rowids in order, so this stops early; ranking
// every match of a word that is in every message would read the whole index), then sorted by
// rank. Then one lookup per hit for its message and snippet: snippets are built for `limit`
// rows, not for every match.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "store/fts_query.h"
#include "store/fts_rank.h"
#include "store/sqlite_session_store.h"

namespace talaria::store {
namespace {

// bm25 ranks at most this many of the newest matches. Queries matching fewer (the specific ones
// a search is for) are ranked whole; at 1,000,000 messages a window of 10,000 cost 20 ms for a
// word in most messages and 90 ms for a common CJK phrase.
constexpr int64_t kSearchRankWindow = 2'000;
// Terms too short for a trigram are looked for in at most this many of the newest CJK messages:
// a substring scan has no index, and bounding it bounds the query (20,000 rows took ~100 ms).
constexpr int64_t kSearchSubstringScanRows = 5'000;
constexpr size_t kSearchSubstringSnippetBytes = 80;  // each side of a substring hit

// Step 1 for each index. ?1 MATCH, ?2 the excluded session, ?3 the window, ?4 the short
// substrings as a JSON array (each must appear in the message); kWordHits: ?5 the FtsRankStats.
constexpr const char* kWordHits =
    "SELECT rowid, talaria_bm25(messages_fts, ?5) FROM messages_fts WHERE messages_fts MATCH ?1 "
    "AND rowid NOT IN (SELECT id FROM messages WHERE session_id = ?2) "
    "ORDER BY rowid DESC LIMIT ?3";
// CJK hits come newest first (rank 0), stopping at ?3 = limit: bm25 over trigrams mostly
// measures how common the characters are, and ranking meant reading every match (a phrase of
// common characters took 60-180 ms at 1,000,000 messages).
constexpr const char* kTrigramHits =
    "SELECT rowid, 0.0 FROM messages_cjk WHERE messages_cjk MATCH ?1 "
    "AND rowid NOT IN (SELECT id FROM messages WHERE session_id = ?2) "
    "ORDER BY rowid DESC LIMIT ?3";
constexpr const char* kTrigramAndSubstringHits =
    "SELECT rowid, 0.0 FROM messages_cjk WHERE messages_cjk MATCH ?1 "
    "AND rowid NOT IN (SELECT id FROM messages WHERE session_id = ?2) "
    "AND NOT EXISTS (SELECT 1 FROM json_each(?4) "
    "  WHERE instr(messages_cjk.body || ' ' || messages_cjk.tools, value) = 0) "
    "ORDER BY rowid DESC LIMIT ?3";
// Only terms shorter than a trigram: a scan of the newest CJK messages (a partial index holds
// their ids), newest first, stopping at ?3 hits; ?5 bounds the scan. The first term (?6) is
// checked column by column (no copy of the row's text); the others (?4, usually none) through
// json_each, which costs a virtual table per row and is skipped when ?7 is 0.
constexpr const char* kSubstringHits =
    "SELECT m.id, 0.0 FROM (SELECT id FROM messages WHERE has_cjk ORDER BY id DESC LIMIT ?5) c "
    "JOIN messages m ON m.id = c.id WHERE m.session_id <> ?2 "
    "AND (instr(m.content, ?6) > 0 OR instr(m.name, ?6) > 0 "
    "  OR instr(coalesce(m.tool_calls, ''), ?6) > 0) "
    "AND (?7 = 0 OR NOT EXISTS (SELECT 1 FROM json_each(?4) WHERE instr(m.content || ' ' || "
    "  m.name || ' ' || coalesce(m.tool_calls, ''), value) = 0)) "
    "ORDER BY m.id DESC LIMIT ?3";

// Step 2.
constexpr const char* kWordHit =
    "SELECT m.session_id, m.seq, m.role, "
    "snippet(messages_fts, -1, '>>>', '<<<', '...', 16) "
    "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
    "WHERE messages_fts MATCH ?1 AND messages_fts.rowid = ?2";
constexpr const char* kTrigramHit =
    "SELECT m.session_id, m.seq, m.role, "
    "snippet(messages_cjk, -1, '>>>', '<<<', '...', 48) "
    "FROM messages_cjk JOIN messages m ON m.id = messages_cjk.rowid "
    "WHERE messages_cjk MATCH ?1 AND messages_cjk.rowid = ?2";
constexpr const char* kPlainHit =
    "SELECT session_id, seq, role, content || ' ' || name || ' ' || coalesce(tool_calls, '') "
    "FROM messages WHERE id = ?2";

int64_t ClampSearchLimit(size_t limit) {
  return static_cast<int64_t>(std::min<size_t>(limit, 1u << 20));
}

std::string SubstringsJson(const std::vector<std::string>& substrings) {
  Json array = Json::array();
  for (const std::string& s : substrings) array.push_back(s);
  return DumpJson(array);
}

}  // namespace

Result<std::vector<SearchHit>> SqliteSessionStore::SearchLocked(std::string_view query,
                                                                const SearchOptions& options) {
  const FtsQuery q = BuildFtsQuery(query);
  std::vector<SearchHit> hits;
  if (q.empty() || options.limit == 0) return hits;
  const std::string substrings = SubstringsJson(q.substrings);

  const char* hits_sql = !q.cjk                 ? kWordHits
                         : q.match.empty()      ? kSubstringHits
                         : q.substrings.empty() ? kTrigramHits
                                                : kTrigramAndSubstringHits;
  const char* hit_sql = !q.cjk ? kWordHit : !q.match.empty() ? kTrigramHit : kPlainHit;

  struct Ranked {
    int64_t id;
    double rank;
  };
  std::vector<Ranked> ranked;
  FtsRankStats stats;
  {
    Stmt s = TALARIA_TRY(db_->Prepare(hits_sql));
    s.Bind(1, q.match).Bind(2, options.exclude_session);
    if (hits_sql == kWordHits) {
      s.Bind(3, kSearchRankWindow);
      stats.max_rowid = TALARIA_TRY(db_->QueryInt("SELECT coalesce(max(id), 0) FROM messages"));
      BindFtsRankStats(s, 5, &stats);
    } else {
      // CJK hits all rank 0: the newest `limit` are the answer.
      s.Bind(3, ClampSearchLimit(options.limit));
      if (hits_sql != kTrigramHits) s.Bind(4, substrings);
      if (hits_sql == kSubstringHits) {
        s.Bind(5, kSearchSubstringScanRows).Bind(6, q.substrings.front());
        s.Bind(7, static_cast<int64_t>(q.substrings.size() - 1));
      }
    }
    while (TALARIA_TRY(s.Step())) ranked.push_back({s.Int(0), s.Real(1)});
  }
  // Best rank first; among equals (substring hits all rank 0) the newest.
  const size_t keep = std::min(ranked.size(), options.limit);
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep),
                    ranked.end(), [](const Ranked& a, const Ranked& b) {
                      return a.rank != b.rank ? a.rank < b.rank : a.id > b.id;
                    });
  ranked.resize(keep);

  for (const Ranked& r : ranked) {
    Stmt s = TALARIA_TRY(db_->Prepare(hit_sql));
    if (hit_sql != kPlainHit) s.Bind(1, q.match);
    s.Bind(2, r.id);
    if (!TALARIA_TRY(s.Step())) continue;
    SearchHit hit;
    hit.session_id = s.Text(0);
    hit.seq = s.Int(1);
    hit.role = s.Text(2);
    hit.snippet = hit_sql == kPlainHit ? SubstringSnippet(s.Text(3), q.substrings.front(),
                                                          kSearchSubstringSnippetBytes)
                                       : s.Text(3);
    hit.rank = r.rank;
    hits.push_back(std::move(hit));
  }
  return hits;
}

}  // namespace talaria::store
