// SqliteSessionStore: SessionStore over one SQLite connection (schema in schema.cpp).
// Thread-safe: every method holds mu_ for its whole run (one connection, one transaction at a
// time); other processes coordinate through SQLite's locks and the busy timeout.
//
// Search indexing runs behind the appends: an append commits the message alone, and a thread
// started with the first append indexes the backlog once the store has been idle for a moment
// (an agent appends in bursts, then waits for its model). Indexing a ~1 KB message costs two to
// three times what committing it does, so this keeps it off the path the agent waits on. Search
// indexes whatever is still pending before it queries, so it never misses a committed message;
// a backlog past kIndexBacklogCap is indexed by the append itself, so it stays bounded.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>  // StoredMessage holds a Json by value

#include "store/recall_reader.h"
#include "store/sqlite_db.h"
#include "talaria/store/session_store.h"

namespace talaria::store {

class SqliteSessionStore final : public SessionStore {
 public:
  // Takes over checkpointing the WAL from SQLite's automatic one (see CheckpointLocked).
  explicit SqliteSessionStore(std::unique_ptr<SqliteDb> db);
  // Indexes what is still unindexed, so a clean exit leaves nothing behind.
  ~SqliteSessionStore() override;
  SqliteSessionStore(const SqliteSessionStore&) = delete;
  SqliteSessionStore& operator=(const SqliteSessionStore&) = delete;

  // Adds the messages appended since the last batch (by any process) to the search indexes, in
  // one write transaction with the watermark. Open calls it, so a crash's unindexed tail is
  // indexed on the next start.
  Status IndexPending();
  // How many committed messages (by any process) the search indexes do not hold yet.
  Result<int64_t> UnindexedCount();

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

  // Recall: on recall_'s read-only connection, never under mu_ (sqlite_session_recall.cpp).
  Result<RecallSearchResult> RecallSearch(std::string_view query,
                                          const RecallSearchOptions& options) override;
  Result<std::vector<SessionRow>> Lineage(std::string_view session_id) override;
  Result<std::optional<RecallMessage>> GetMessage(int64_t message_id) override;
  Result<MessageWindow> ReadWindow(std::string_view session_id,
                                   const MessageWindowOptions& options) override;
  Result<std::vector<SessionPreview>> Browse(const BrowseOptions& options) override;

 private:
  // The Locked helpers expect mu_ held (and, for writes, a write transaction open).
  Result<std::optional<SessionRow>> GetSessionLocked(std::string_view id);
  Status AppendLocked(std::string_view session_id, StoredMessage& message);
  // Messages of the session with seq > after_seq, in order.
  Result<std::vector<StoredMessage>> LoadMessagesLocked(std::string_view session_id,
                                                        int64_t after_seq);
  Result<std::vector<StoredMessage>> LoadHistoryLocked(std::string_view session_id);
  Status RequireSessionLocked(std::string_view session_id);
  // Indexes up to `limit` pending messages (oldest first) in one transaction; sets unindexed_
  // to what is left.
  Status IndexPendingLocked(int64_t limit = std::numeric_limits<int64_t>::max());
  // After a committed append of `count` messages: wakes the indexer, or indexes now when the
  // backlog is past its cap. A failure leaves the messages pending (they are committed; only
  // search lags).
  void NoteAppendedLocked(size_t count);
  // The indexer thread: a chunk at a time, each once the store has been idle for a moment.
  void IndexWhenIdle();
  void StopIndexer();
  // Copies the WAL back into the database once `pages` frames or more are not copied yet
  // (PASSIVE: never waits for readers or writers), through `db`; true when it reached the WAL's
  // end (or nothing was due). SQLite would do it inside whichever commit crossed 1,000 pages:
  // an fsync of 10-50 ms in the middle of an append. The indexer does it while the store is
  // idle, on a connection of its own so appends need not wait for it; an append only past a
  // much larger backlog, so it stays bounded when the store is never idle.
  bool Checkpoint(SqliteDb& db, int pages);
  // The WAL hook: the WAL's length in frames after this connection's commit.
  void NoteWalFrames(int frames);
  int UncheckpointedFrames() const;
  bool IdleCheckpointDue() const;
  // The search halves (session_search.cpp): ids with their rank, then one hit per id.
  Result<std::vector<SearchHit>> SearchLocked(std::string_view query, const SearchOptions& options);

  std::mutex mu_;
  std::unique_ptr<SqliteDb> db_;  // Guarded by mu_.
  int64_t unindexed_ = 0;         // Guarded by mu_. Known to be pending (appended here, or left).
  bool index_failing_ = false;    // Guarded by mu_. The last batch failed (warned once).
  std::chrono::steady_clock::time_point last_append_;  // Guarded by mu_.
  std::condition_variable indexer_wake_;               // With mu_: an append, or stopping.
  bool stopping_ = false;                              // Guarded by mu_.
  bool indexer_parked_ = false;  // Guarded by mu_. Waiting for an append, with no deadline.
  std::thread indexer_;          // Started by the first append.
  // The WAL's length after this connection's last commit, and how much of it a checkpoint has
  // copied back (counted from the WAL's start; 0 again once the WAL starts over). A length alone
  // is not a backlog: a checkpoint that overlaps an append copies all but the newest frames,
  // and the WAL goes on growing, not starting over, until one catches up.
  std::atomic<int> wal_frames_{0};
  std::atomic<int> wal_backfilled_{0};
  std::unique_ptr<SqliteDb> checkpoint_db_;  // The indexer thread's (opened when first needed).
  RecallReader recall_{db_->path()};         // thread-safe on its own
};

}  // namespace talaria::store
