// SqliteSessionStore: SessionStore over one SQLite connection (schema in schema.cpp).
// Thread-safe: every method holds mu_ for its whole run (one connection, one transaction at a
// time); other processes coordinate through SQLite's locks and the busy timeout.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>  // StoredMessage holds a Json by value

#include "store/sqlite_db.h"
#include "talaria/store/session_store.h"

namespace talaria::store {

class SqliteSessionStore final : public SessionStore {
 public:
  explicit SqliteSessionStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}
  // Indexes what is still unindexed, so a clean exit leaves nothing behind.
  ~SqliteSessionStore() override;
  SqliteSessionStore(const SqliteSessionStore&) = delete;
  SqliteSessionStore& operator=(const SqliteSessionStore&) = delete;

  // Adds the messages appended since the last batch (by any process) to the search indexes, in
  // one write transaction with the watermark. Open calls it, so a crash's unindexed tail is
  // indexed on the next start.
  Status IndexPending();

  Result<SessionRow> CreateSession(const NewSession& session) override;
  Result<std::optional<SessionRow>> GetSession(std::string_view id) override;
  Result<std::vector<SessionRow>> ListSessions(const ListOptions& options) override;
  Result<std::optional<SessionRow>> LatestSession(std::string_view cwd) override;
  Status SetTitle(std::string_view id, std::string_view title) override;
  Status EndSession(std::string_view id, std::string_view reason) override;
  Status DeleteSession(std::string_view id) override;

  Status AppendMessage(std::string_view session_id, StoredMessage& message) override;
  Status AppendMessages(std::string_view session_id, std::vector<StoredMessage>& messages) override;
  Result<std::vector<StoredMessage>> LoadHistory(std::string_view session_id) override;
  Result<std::vector<StoredMessage>> LoadTranscript(std::string_view session_id) override;
  Status AppendCompaction(std::string_view session_id, std::string_view summary,
                          const std::vector<StoredMessage>& replacement) override;
  Result<size_t> RepairInterrupted(std::string_view session_id) override;

  Status PutState(std::string_view session_id, std::string_view key, const Json& value) override;
  Result<std::optional<Json>> GetState(std::string_view session_id, std::string_view key) override;

  Result<TokenTotals> SumUsage(std::string_view cwd) override;
  Result<std::vector<SearchHit>> Search(std::string_view query,
                                        const SearchOptions& options) override;

 private:
  // The Locked helpers expect mu_ held (and, for writes, a write transaction open).
  Result<std::optional<SessionRow>> GetSessionLocked(std::string_view id);
  Status AppendLocked(std::string_view session_id, StoredMessage& message);
  // Messages of the session with seq > after_seq, in order.
  Result<std::vector<StoredMessage>> LoadMessagesLocked(std::string_view session_id,
                                                        int64_t after_seq);
  Result<std::vector<StoredMessage>> LoadHistoryLocked(std::string_view session_id);
  Status RequireSessionLocked(std::string_view session_id);
  Status IndexPendingLocked();
  // After a committed append of `count` messages: indexes once a batch has gathered. A failure
  // leaves the messages for the next batch (they are committed; only search lags).
  void NoteAppendedLocked(size_t count);
  // The search halves (session_search.cpp): ids with their rank, then one hit per id.
  Result<std::vector<SearchHit>> SearchLocked(std::string_view query, const SearchOptions& options);

  std::mutex mu_;
  std::unique_ptr<SqliteDb> db_;  // Guarded by mu_.
  size_t unindexed_ = 0;          // Guarded by mu_. Appended here since the last batch.
  bool index_failing_ = false;    // Guarded by mu_. The last batch failed (warned once).
};

}  // namespace talaria::store
