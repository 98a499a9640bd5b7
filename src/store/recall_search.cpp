// RecallReader::Search: session_search's message search on the read-only connection.
//
// The matching ids stream out of FTS5 in id order (newest first, or oldest first for
// sort=oldest); each is looked up (its session and role) and filtered here, so the role filter
// and the excluded sessions cost a primary-key lookup per match instead of a subquery FTS5
// would rebuild per row. Ranking by bm25 sorts the newest kRankWindow matches that pass the
// filters (as SessionStore::Search does, for the same reason: ranking every match of a common
// word reads the whole index), scored by talaria_bm25 (fts_rank.h: FTS5's own bm25 counts every
// match of each phrase in the whole index first, a fixed cost that was most of a search's time).
// Snippets are built only for the hits returned. The matches that were filtered out are counted
// by why, so an empty result can say why.
//
// The shared indexes run up to a few hundred messages behind a live writer (it indexes in
// batches). This connection cannot index them (it is read-only, and must not take the write
// lock), so it keeps the messages past the watermark in FTS5 tables of its own temp database,
// refreshed before each search, and searches both.
#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "store/fts_query.h"
#include "store/fts_rank.h"
#include "store/recall_reader.h"

namespace talaria::store {
namespace {

// (1,000, not Search's 2,000: each match here also costs a lookup of its message.)
constexpr size_t kRankWindow = 1'000;
// At most this many matches are examined: a filter that lets almost nothing through (a word
// found only in tool output, searched with the default role filter) stops here.
constexpr int64_t kScanBound = 20'000;
// As SessionStore::Search: terms shorter than a trigram are looked for in the newest CJK
// messages only (a substring scan has no index).
constexpr int64_t kSubstringScanRows = 5'000;
constexpr size_t kSubstringSnippetBytes = 80;
// The tail indexes hold at most the newest this many unindexed messages (a writer lags by a
// batch of 256; more means a process died and nobody has opened the store since).
constexpr int64_t kMaxTail = 5'000;

// ?1 the MATCH expression; ?2 (CJK) the short terms as a JSON array, each must appear.
#define TALARIA_CJK_SHORT_TERMS(table)                                            \
  " AND (?2 = '[]' OR NOT EXISTS (SELECT 1 FROM json_each(?2) WHERE instr(" table \
  ".body || ' ' || " table ".tools, value) = 0))"
// Each row: the message id, its rank, and (joined: one lookup each, in the same statement)
// its session, role and time. Which sessions have a parent is read once per search
// (kChildren), not joined per match: a lookup in sessions per match cost more than the rest.
// ?4 (ranked word statements) the search's FtsRankStats.
#define TALARIA_HIT_COLUMNS(table, rank)                                                \
  "SELECT " table ".rowid, " rank ", m.session_id, m.role, m.created_at_ms FROM " table \
  " JOIN messages m ON m.id = " table ".rowid WHERE " table " MATCH ?1"
constexpr const char* kWordIdsRanked = TALARIA_HIT_COLUMNS(
    "messages_fts", "talaria_bm25(messages_fts, ?4)") " ORDER BY messages_fts.rowid DESC";
constexpr const char* kWordIdsNewest =
    TALARIA_HIT_COLUMNS("messages_fts", "0.0") " ORDER BY messages_fts.rowid DESC";
constexpr const char* kWordIdsOldest =
    TALARIA_HIT_COLUMNS("messages_fts", "0.0") " ORDER BY messages_fts.rowid ASC";
constexpr const char* kCjkIdsNewest = TALARIA_HIT_COLUMNS("messages_cjk", "0.0")
    TALARIA_CJK_SHORT_TERMS("messages_cjk") " ORDER BY messages_cjk.rowid DESC";
constexpr const char* kCjkIdsOldest = TALARIA_HIT_COLUMNS("messages_cjk", "0.0")
    TALARIA_CJK_SHORT_TERMS("messages_cjk") " ORDER BY messages_cjk.rowid ASC";
constexpr const char* kTailWordIdsRanked = TALARIA_HIT_COLUMNS(
    "recall_tail_words",
    "talaria_bm25(recall_tail_words, ?4)") " ORDER BY recall_tail_words.rowid DESC";
constexpr const char* kTailWordIdsNewest =
    TALARIA_HIT_COLUMNS("recall_tail_words", "0.0") " ORDER BY recall_tail_words.rowid DESC";
constexpr const char* kTailWordIdsOldest =
    TALARIA_HIT_COLUMNS("recall_tail_words", "0.0") " ORDER BY recall_tail_words.rowid ASC";
constexpr const char* kTailCjkIdsNewest = TALARIA_HIT_COLUMNS("recall_tail_cjk", "0.0")
    TALARIA_CJK_SHORT_TERMS("recall_tail_cjk") " ORDER BY recall_tail_cjk.rowid DESC";
constexpr const char* kTailCjkIdsOldest = TALARIA_HIT_COLUMNS("recall_tail_cjk", "0.0")
    TALARIA_CJK_SHORT_TERMS("recall_tail_cjk") " ORDER BY recall_tail_cjk.rowid ASC";
#undef TALARIA_CJK_SHORT_TERMS
#undef TALARIA_HIT_COLUMNS
// ?3 bounds the scan of the newest CJK messages (indexed or not: it reads the messages).
constexpr const char* kSubstringIds =
    "SELECT m.id, 0.0, m.session_id, m.role, m.created_at_ms "
    "FROM (SELECT id FROM messages WHERE has_cjk ORDER BY id DESC LIMIT ?3) c "
    "JOIN messages m ON m.id = c.id WHERE NOT EXISTS "
    "(SELECT 1 FROM json_each(?2) WHERE "
    "instr(m.content || ' ' || m.name || ' ' || coalesce(m.tool_calls, ''), value) = 0) "
    "ORDER BY m.id DESC";
// Sessions with a parent (the partial index sessions_by_parent holds just these).
constexpr const char* kChildren = "SELECT id, parent_id FROM sessions WHERE parent_id IS NOT NULL";
constexpr const char* kWordSnippet =
    "SELECT snippet(messages_fts, -1, '>>>', '<<<', '...', 16) FROM messages_fts "
    "WHERE messages_fts MATCH ?1 AND rowid = ?2";
constexpr const char* kCjkSnippet =
    "SELECT snippet(messages_cjk, -1, '>>>', '<<<', '...', 48) FROM messages_cjk "
    "WHERE messages_cjk MATCH ?1 AND rowid = ?2";
constexpr const char* kTailWordSnippet =
    "SELECT snippet(recall_tail_words, -1, '>>>', '<<<', '...', 16) FROM recall_tail_words "
    "WHERE recall_tail_words MATCH ?1 AND rowid = ?2";
constexpr const char* kTailCjkSnippet =
    "SELECT snippet(recall_tail_cjk, -1, '>>>', '<<<', '...', 48) FROM recall_tail_cjk "
    "WHERE recall_tail_cjk MATCH ?1 AND rowid = ?2";
constexpr const char* kPlainText =
    "SELECT content || ' ' || name || ' ' || coalesce(tool_calls, '') FROM messages WHERE id = ?1";

std::string JsonArray(const std::vector<std::string>& items) {
  Json array = Json::array();
  for (const std::string& s : items) array.push_back(s);
  return DumpJson(array);
}

// FTS5 reports an expression it cannot parse as SQLITE_ERROR with "fts5: syntax error near
// ..." (or another "fts5:" message, or "unterminated string"): that is the query's fault, not
// the database's.
bool IsQueryError(const Status& s) {
  const std::string& m = s.message();
  return m.find("fts5:") != std::string::npos || m.find("unterminated string") != std::string::npos;
}

struct Candidate {
  RecallHit hit;
  bool tail = false;  // from the tail indexes (its snippet comes from there)
};

}  // namespace

Status RecallReader::RefreshTailLocked(SqliteDb& db) {
  const int64_t mark = TALARIA_TRY(db.QueryInt("SELECT indexed_through FROM search_index_state"));
  const int64_t last = TALARIA_TRY(db.QueryInt("SELECT coalesce(max(id), 0) FROM messages"));
  if (mark != tail_from_) {
    // The writer indexed a batch (or the file changed under us): what the tail held is in the
    // shared indexes now.
    TALARIA_RETURN_IF_ERROR(
        db.Exec("DELETE FROM temp.recall_tail_words; DELETE FROM temp.recall_tail_cjk"));
    tail_from_ = mark;
    tail_to_ = mark;
  }
  if (last <= tail_to_) return Status::Ok();
  const int64_t from = std::max(tail_to_, last - kMaxTail);
  for (const char* sql :
       {"INSERT INTO temp.recall_tail_words (rowid, body, tools) SELECT id, body, tools "
        "FROM main.messages_fts_source WHERE id > ?1 AND id <= ?2",
        "INSERT INTO temp.recall_tail_cjk (rowid, body, tools) SELECT id, body, tools "
        "FROM main.messages_cjk_source WHERE id > ?1 AND id <= ?2"}) {
    Stmt s = TALARIA_TRY(db.Prepare(sql));
    s.Bind(1, from).Bind(2, last);
    TALARIA_RETURN_IF_ERROR(s.Run());
  }
  tail_to_ = last;
  return Status::Ok();
}

Result<RecallSearchResult> RecallReader::SearchLocked(SqliteDb& db, std::string_view query,
                                                      const RecallSearchOptions& options) {
  RecallSearchResult result;
  const FtsQuery q = BuildFtsQuery(query, {.operators = true});
  result.note = q.note;
  if (q.empty()) {
    result.empty_reason = "no_terms";
    return result;
  }
  if (options.limit == 0) return result;
  const bool substring_only = q.cjk && q.match.empty();
  const bool oldest = options.order == RecallOrder::kOldest;
  // bm25 ranks word matches; CJK matches come in id order (bm25 over trigrams mostly measures
  // how common the characters are).
  const bool ranked = !q.cjk && options.order == RecallOrder::kRank;
  const size_t want = ranked ? std::max(kRankWindow, options.limit) : options.limit;
  const std::string substrings = JsonArray(q.substrings);
  if (!substring_only) TALARIA_RETURN_IF_ERROR(RefreshTailLocked(db));

  // The id streams in the order they are read: newest first reads the tail (the newest ids)
  // first, oldest first reads it last; ranking reads both and sorts.
  struct Source {
    const char* sql;
    bool tail;
  };
  std::vector<Source> sources;
  if (substring_only) {
    sources.push_back({kSubstringIds, false});
  } else if (ranked) {
    // The shared index first: its first match fills the statistics both are scored with.
    sources = {{kWordIdsRanked, false}, {kTailWordIdsRanked, true}};
  } else {
    const Source main = {!q.cjk ? (oldest ? kWordIdsOldest : kWordIdsNewest)
                                : (oldest ? kCjkIdsOldest : kCjkIdsNewest),
                         false};
    const Source tail = {!q.cjk ? (oldest ? kTailWordIdsOldest : kTailWordIdsNewest)
                                : (oldest ? kTailCjkIdsOldest : kTailCjkIdsNewest),
                         true};
    if (oldest) {
      sources = {main, tail};
    } else {
      sources = {tail, main};
    }
  }
  FtsRankStats stats;
  stats.max_rowid = tail_to_;  // the highest message id (RefreshTailLocked read it)

  const std::unordered_set<std::string> roles(options.roles.begin(), options.roles.end());
  const std::unordered_set<std::string> excluded(options.exclude_sessions.begin(),
                                                 options.exclude_sessions.end());
  const std::unordered_set<std::string> only(options.only_sessions.begin(),
                                             options.only_sessions.end());
  std::set<std::string> other_roles;
  int64_t excluded_matches = 0;
  std::unordered_map<std::string, std::string> parents;  // child session -> its parent
  {
    Stmt children = TALARIA_TRY(db.Prepare(kChildren));
    while (TALARIA_TRY(children.Step())) parents.emplace(children.Text(0), children.Text(1));
  }
  std::vector<Candidate> passing;
  for (const Source& source : sources) {
    // Ranking takes `want` from each source; id order stops once `want` are in.
    const size_t stop_at = ranked ? passing.size() + want : want;
    Stmt ids = TALARIA_TRY(db.Prepare(source.sql));
    if (!substring_only) ids.Bind(1, q.match);
    if (q.cjk) ids.Bind(2, substrings);
    if (substring_only) ids.Bind(3, kSubstringScanRows);
    if (ranked) BindFtsRankStats(ids, 4, &stats);
    for (int64_t scanned = 0; passing.size() < stop_at && scanned < kScanBound; ++scanned) {
      auto row = ids.Step();
      if (!row) {
        if (!IsQueryError(row.error())) return Err(row.error());
        result.empty_reason = "syntax";
        result.detail = row.error().message();
        return result;
      }
      if (!*row) break;
      Candidate c;
      c.tail = source.tail;
      c.hit.message_id = ids.Int(0);
      c.hit.rank = ids.Real(1);
      c.hit.session_id = ids.Text(2);
      c.hit.role = ids.Text(3);
      c.hit.created_at_ms = ids.Int(4);
      if (auto child = parents.find(c.hit.session_id); child != parents.end()) {
        c.hit.parent_session_id = child->second;
      }
      if ((!only.empty() && !only.contains(c.hit.session_id)) ||
          excluded.contains(c.hit.session_id)) {
        ++excluded_matches;
        continue;
      }
      if (!roles.empty() && !roles.contains(c.hit.role)) {
        other_roles.insert(c.hit.role);
        continue;
      }
      passing.push_back(std::move(c));
    }
  }
  if (ranked) {
    std::stable_sort(passing.begin(), passing.end(), [](const Candidate& a, const Candidate& b) {
      return a.hit.rank < b.hit.rank;
    });
  } else if (substring_only && oldest) {
    std::reverse(passing.begin(), passing.end());
  }
  // Lineages: a session without a parent is its own root (most are: no query); a child's root
  // is looked up once per parent chain.
  std::unordered_map<std::string, std::string> root_of;
  std::unordered_set<std::string> roots;
  std::vector<Candidate> kept;
  for (Candidate& c : passing) {
    if (c.hit.parent_session_id.empty()) {
      c.hit.root_session_id = c.hit.session_id;
    } else {
      auto it = root_of.find(c.hit.session_id);
      if (it == root_of.end()) {
        std::string root = TALARIA_TRY(RootLocked(db, c.hit.session_id));
        it = root_of.emplace(c.hit.session_id, root.empty() ? c.hit.session_id : root).first;
      }
      c.hit.root_session_id = it->second;
    }
    const bool first_of_lineage = roots.insert(c.hit.root_session_id).second;
    if (kept.size() < options.limit && (first_of_lineage || !options.one_per_lineage)) {
      kept.push_back(std::move(c));
    }
  }
  result.lineages = roots.size();
  passing = std::move(kept);

  for (Candidate& c : passing) {
    RecallHit& hit = c.hit;
    if (substring_only) {
      Stmt s = TALARIA_TRY(db.Prepare(kPlainText));
      s.Bind(1, hit.message_id);
      if (TALARIA_TRY(s.Step())) {
        hit.snippet = SubstringSnippet(s.Text(0), q.substrings.front(), kSubstringSnippetBytes);
      }
    } else {
      const char* sql = c.tail ? (q.cjk ? kTailCjkSnippet : kTailWordSnippet)
                               : (q.cjk ? kCjkSnippet : kWordSnippet);
      Stmt s = TALARIA_TRY(db.Prepare(sql));
      s.Bind(1, q.match).Bind(2, hit.message_id);
      if (TALARIA_TRY(s.Step())) hit.snippet = s.Text(0);
    }
    result.hits.push_back(std::move(hit));
  }
  if (result.hits.empty()) {
    if (!other_roles.empty()) {
      result.empty_reason = "roles";
      result.matched_roles.assign(other_roles.begin(), other_roles.end());
    } else if (excluded_matches > 0) {
      result.empty_reason = "excluded";
    } else {
      result.empty_reason = "no_match";
    }
  }
  return result;
}

}  // namespace talaria::store
