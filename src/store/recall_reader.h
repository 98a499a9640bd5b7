// RecallReader: the session_search reads (SessionStore's recall members) on a read-only SQLite
// connection of their own, opened on first use. WAL lets it read while any process writes: a
// search never waits for the session's appends, and never makes them wait.
// Thread-safe: one connection behind a mutex of its own (not the writer's).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>  // RecallMessage holds a Json by value

#include "store/sqlite_db.h"
#include "talaria/store/session_store.h"

namespace talaria::store {

class RecallReader {
 public:
  explicit RecallReader(std::string path) : path_(std::move(path)) {}

  Result<RecallSearchResult> Search(std::string_view query, const RecallSearchOptions& options);
  Result<std::vector<SessionRow>> Lineage(std::string_view session_id);
  Result<std::optional<RecallMessage>> GetMessage(int64_t message_id);
  Result<MessageWindow> ReadWindow(std::string_view session_id,
                                   const MessageWindowOptions& options);
  Result<std::vector<SessionPreview>> Browse(const BrowseOptions& options);

 private:
  // The connection, opened (read-only) on first use. Expects mu_ held.
  Result<SqliteDb*> Db();
  // recall_search.cpp
  Result<RecallSearchResult> SearchLocked(SqliteDb& db, std::string_view query,
                                          const RecallSearchOptions& options);
  // Brings the temp tail indexes up to date: the messages past the shared indexes' watermark
  // (appended since the writer's last batch, by any process), indexed in this connection's
  // temp database, since a read-only connection cannot move the watermark.
  Status RefreshTailLocked(SqliteDb& db);
  // The root of `session_id`'s lineage (following parent_id); the id itself when it has none.
  Result<std::string> RootLocked(SqliteDb& db, std::string_view session_id);

  std::mutex mu_;
  std::string path_;
  std::unique_ptr<SqliteDb> db_;  // Guarded by mu_.
  int64_t tail_from_ = -1;        // Guarded by mu_. The watermark the tail indexes start at.
  int64_t tail_to_ = 0;           // Guarded by mu_. The last message id they hold.
};

}  // namespace talaria::store
