#include "store/fts_rank.h"

#include <algorithm>
#include <cmath>

namespace talaria::store {
namespace {

constexpr const char* kStatsPointerType = "talaria_fts_rank_stats";
// FTS5's bm25 constants.
constexpr double kK1 = 1.2;
constexpr double kB = 0.75;

// The rows holding one phrase, counted oldest first up to the sample.
struct PhraseCount {
  int64_t count = 0;
  int64_t first_rowid = 0;
  int64_t last_rowid = 0;
};

int CountPhraseRow(const Fts5ExtensionApi* api, Fts5Context* fts, void* data) {
  auto* counted = static_cast<PhraseCount*>(data);
  const int64_t rowid = api->xRowid(fts);
  if (counted->count == 0) counted->first_rowid = rowid;
  counted->last_rowid = rowid;
  ++counted->count;
  // SQLITE_DONE stops the scan and makes xQueryPhrase return SQLITE_OK.
  return counted->count >= kDocCountSample ? SQLITE_DONE : SQLITE_OK;
}

// The number of rows holding phrase `phrase`: exact below the sample; past it, the sample's
// density (matches per rowid from the first match on) carried to the end of the table.
int CountPhraseDocs(const Fts5ExtensionApi* api, Fts5Context* fts, int phrase,
                    const FtsRankStats& stats, int64_t* docs) {
  PhraseCount counted;
  int rc = api->xQueryPhrase(fts, phrase, &counted, CountPhraseRow);
  if (rc != SQLITE_OK) return rc;
  *docs = counted.count;
  if (counted.count >= kDocCountSample && stats.max_rowid > counted.last_rowid) {
    const double seen = static_cast<double>(counted.last_rowid - counted.first_rowid + 1);
    const double span = static_cast<double>(stats.max_rowid - counted.first_rowid + 1);
    *docs = static_cast<int64_t>(static_cast<double>(counted.count) * span / seen);
  }
  *docs = std::clamp<int64_t>(*docs, counted.count, std::max(stats.rows, counted.count));
  return SQLITE_OK;
}

int FillStats(const Fts5ExtensionApi* api, Fts5Context* fts, FtsRankStats& stats) {
  sqlite3_int64 rows = 0;
  sqlite3_int64 tokens = 0;
  int rc = api->xRowCount(fts, &rows);
  if (rc == SQLITE_OK) rc = api->xColumnTotalSize(fts, -1, &tokens);
  if (rc != SQLITE_OK) return rc;
  stats.rows = rows;
  stats.average_length = rows > 0 ? static_cast<double>(tokens) / static_cast<double>(rows) : 1;
  if (stats.average_length <= 0) stats.average_length = 1;
  const int phrases = api->xPhraseCount(fts);
  stats.idf.assign(static_cast<size_t>(phrases), 1.0);
  stats.docs.assign(static_cast<size_t>(phrases), 0);
  // One phrase: its weight is the same for every row and cannot change their order.
  if (phrases > 1) {
    for (int i = 0; i < phrases; ++i) {
      int64_t docs = 0;
      rc = CountPhraseDocs(api, fts, i, stats, &docs);
      if (rc != SQLITE_OK) return rc;
      const auto n = static_cast<double>(rows);
      const auto d = static_cast<double>(docs);
      // FTS5's IDF, with its floor: a phrase in more than half the rows still counts a little.
      double idf = std::log((n - d + 0.5) / (d + 0.5));
      if (idf <= 0) idf = 1e-6;
      stats.idf[static_cast<size_t>(i)] = idf;
      stats.docs[static_cast<size_t>(i)] = docs;
    }
  }
  stats.ready = true;
  return SQLITE_OK;
}

void Bm25(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* ctx, int argc,
          sqlite3_value** argv) {
  auto* stats = argc == 1
                    ? static_cast<FtsRankStats*>(sqlite3_value_pointer(argv[0], kStatsPointerType))
                    : nullptr;
  if (stats == nullptr) {
    sqlite3_result_error(ctx, "talaria_bm25(table, stats): no statistics bound", -1);
    return;
  }
  int rc = SQLITE_OK;
  if (!stats->ready) rc = FillStats(api, fts, *stats);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  const int phrases = api->xPhraseCount(fts);
  if (static_cast<size_t>(phrases) != stats->idf.size()) {
    sqlite3_result_error(ctx, "talaria_bm25: one search's statements must share a MATCH", -1);
    return;
  }
  std::vector<double> hits(static_cast<size_t>(phrases), 0.0);
  int instances = 0;
  rc = api->xInstCount(fts, &instances);
  for (int i = 0; rc == SQLITE_OK && i < instances; ++i) {
    int phrase = 0;
    int column = 0;
    int offset = 0;
    rc = api->xInst(fts, i, &phrase, &column, &offset);
    if (rc == SQLITE_OK && phrase >= 0 && phrase < phrases) hits[static_cast<size_t>(phrase)] += 1;
  }
  int length = 0;
  if (rc == SQLITE_OK) rc = api->xColumnSize(fts, -1, &length);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  const double norm = kK1 * (1 - kB + kB * static_cast<double>(length) / stats->average_length);
  double score = 0;
  for (size_t i = 0; i < hits.size(); ++i) {
    score += stats->idf[i] * (hits[i] * (kK1 + 1)) / (hits[i] + norm);
  }
  sqlite3_result_double(ctx, -score);
}

}  // namespace

Status RegisterFtsRank(SqliteDb& db) {
  // The FTS5 API comes out of SELECT fts5(?1) as a pointer of type "fts5_api_ptr".
  fts5_api* fts = nullptr;
  {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db.handle(), "SELECT fts5(?1)", -1, &stmt, nullptr);
    if (rc == SQLITE_OK) {
      sqlite3_bind_pointer(stmt, 1, static_cast<void*>(&fts), "fts5_api_ptr", nullptr);
      rc = sqlite3_step(stmt);
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_ROW || fts == nullptr) {
      return SqliteStatus(rc, "reaching FTS5's API", db.handle(), db.path());
    }
  }
  const int rc = fts->xCreateFunction(fts, "talaria_bm25", nullptr, Bm25, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(rc, "registering talaria_bm25", db.handle(), db.path());
  return Status::Ok();
}

void BindFtsRankStats(Stmt& stmt, int index, FtsRankStats* stats) {
  stmt.BindPointer(index, stats, kStatsPointerType);
}

}  // namespace talaria::store
