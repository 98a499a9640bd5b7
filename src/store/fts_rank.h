// FtsRank: BM25 for the matches a search reads, as the SQL function talaria_bm25(<fts table>,
// <stats>), in place of FTS5's own bm25() / `rank`.
//
// Why: FTS5's bm25 first counts, for every phrase of the query, each row of the whole index that
// holds it (a full scan of the phrase), before it scores one row. At 1,000,000 messages that fixed
// cost was 60-120 ms for a phrase of common words, against 7-16 ms for the query itself; and the
// searches only rank a window of the newest matches. The document counts only weigh the phrases
// against each other (IDF), so here they are counted up to kDocCountSample matches (oldest
// first) and extrapolated from their density beyond that: a bounded cost per phrase. A query of
// one phrase needs no count at all (the same weight for every row leaves the order as it is).
//
// One FtsRankStats is shared by every statement of one search: the first row scored fills it
// from its table (row count, average length, per-phrase IDF), so the shared index and the
// reader's small tail index score on the same scale.
// Thread-safety: FtsRankStats is used by one connection at a time (the caller's lock).
#pragma once

#include <cstdint>
#include <vector>

#include "store/sqlite_db.h"

namespace talaria::store {

// Document counts are exact up to this many matches of a phrase, estimated beyond.
inline constexpr int64_t kDocCountSample = 1'000;

struct FtsRankStats {
  // Set by the caller: the highest rowid the indexes can hold (messages' max id), so a count
  // stopped at the sample extrapolates to the end of the table.
  int64_t max_rowid = 0;
  // Filled by the first row scored.
  bool ready = false;
  int64_t rows = 0;           // rows in the index
  double average_length = 0;  // tokens per row, all columns
  std::vector<double> idf;    // per phrase of the MATCH expression
  std::vector<int64_t> docs;  // the document count (or estimate) behind each idf
};

// Registers talaria_bm25 on `db`'s connection. Use it as
//   SELECT talaria_bm25(<table>, ?n) ... WHERE <table> MATCH ?1
// with ?n bound by BindFtsRankStats: the result is the row's BM25 score negated (lower is
// better, as FTS5's rank), weights k1 = 1.2, b = 0.75 as FTS5's.
Status RegisterFtsRank(SqliteDb& db);

// Binds `stats` (which must outlive the statement's steps) as parameter `index`.
void BindFtsRankStats(Stmt& stmt, int index, FtsRankStats* stats);

}  // namespace talaria::store
