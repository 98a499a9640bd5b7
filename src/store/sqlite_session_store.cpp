#include "store/sqlite_session_store.h"

#include <algorithm>
#include <chrono>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "store/fts_query.h"
#include "store/interrupted_calls.h"
#include "store/message_json.h"
#include "store/session_id.h"
#include "store/session_rows.h"
#include "talaria/base/log.h"

namespace talaria::store {
namespace {

constexpr const char* kGetSession =
    "SELECT " TALARIA_SESSION_COLUMNS " FROM sessions WHERE id = ?1";
constexpr const char* kListAll = "SELECT " TALARIA_SESSION_COLUMNS
                                 " FROM sessions ORDER BY updated_at_ms DESC, id DESC LIMIT ?1";
constexpr const char* kListInCwd =
    "SELECT " TALARIA_SESSION_COLUMNS
    " FROM sessions WHERE cwd = ?2 ORDER BY updated_at_ms DESC, id DESC LIMIT ?1";

bool IsKnownRole(std::string_view role) {
  return role == "system" || role == "developer" || role == "user" || role == "assistant" ||
         role == "tool";
}

Status NoSession(std::string_view id) { return NotFoundError("no session " + std::string(id)); }

// Search indexing (see the header): a chunk of messages per indexing transaction, so an append
// arriving meanwhile waits at most one chunk (~10 ms); the quiet time after an append before
// the indexer starts, short against any model's answer; and the backlog an append indexes
// itself rather than let it grow (a batch this size indexes at ~30 us a message, against
// ~50 us in batches of 256: larger segments, fewer merges).
constexpr int64_t kIndexChunk = 256;
constexpr auto kIndexWhenIdleFor = std::chrono::milliseconds(20);
constexpr int64_t kIndexBacklogCap = 4096;
// WAL sizes in pages (4 KB): the indexer checkpoints a WAL past the first while idle (SQLite's
// own default), an append a backlog past the second (a store never idle long enough).
constexpr int kCheckpointWhenIdle = 1000;
constexpr int kCheckpointInline = 8000;
// After a failed chunk (another process holding the write lock past the busy timeout).
constexpr auto kIndexRetryAfter = std::chrono::seconds(2);

int64_t ClampLimit(size_t limit) { return static_cast<int64_t>(std::min<size_t>(limit, 1u << 30)); }

}  // namespace

SqliteSessionStore::SqliteSessionStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {
  // Replaces the automatic checkpoint (itself a WAL hook): only records the size.
  sqlite3_wal_hook(
      db_->handle(),
      [](void* self, sqlite3*, const char*, int frames) {
        static_cast<SqliteSessionStore*>(self)->NoteWalFrames(frames);
        return SQLITE_OK;
      },
      this);
}

void SqliteSessionStore::NoteWalFrames(int frames) {
  // A WAL shorter than what was copied back has been restarted: none of it is copied yet.
  if (frames < wal_backfilled_.load(std::memory_order_relaxed)) {
    wal_backfilled_.store(0, std::memory_order_relaxed);
  }
  wal_frames_.store(frames, std::memory_order_relaxed);
}

int SqliteSessionStore::UncheckpointedFrames() const {
  return std::max(0, wal_frames_.load(std::memory_order_relaxed) -
                         wal_backfilled_.load(std::memory_order_relaxed));
}

bool SqliteSessionStore::IdleCheckpointDue() const {
  // A WAL past the threshold is copied back whenever anything in it is not yet, however
  // little: only a checkpoint that catches up with the last commit lets the next append
  // start the WAL over (the file stops growing).
  return wal_frames_.load(std::memory_order_relaxed) >= kCheckpointWhenIdle &&
         UncheckpointedFrames() > 0;
}

bool SqliteSessionStore::Checkpoint(SqliteDb& db, int pages) {
  if (UncheckpointedFrames() < pages) return true;
  int log = 0, copied = 0;
  const int rc =
      sqlite3_wal_checkpoint_v2(db.handle(), nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &copied);
  // Busy (another process is checkpointing), or -1: not in WAL mode (a connection that has not
  // read yet).
  if (rc != SQLITE_OK || log < 0) return false;
  wal_backfilled_.store(copied, std::memory_order_relaxed);
  // Short of the WAL's end: a reader (another process) still needs frames past `copied`.
  // Frames committed while this ran are not counted in `log`: they wait for the next idle time.
  return copied == log;
}

SqliteSessionStore::~SqliteSessionStore() {
  StopIndexer();
  checkpoint_db_.reset();
  std::lock_guard lock(mu_);
  if (unindexed_ > 0) (void)IndexPendingLocked();
}

void SqliteSessionStore::StopIndexer() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  indexer_wake_.notify_all();
  if (indexer_.joinable()) indexer_.join();
}

Status SqliteSessionStore::IndexPending() {
  std::lock_guard lock(mu_);
  return IndexPendingLocked();
}

Result<int64_t> SqliteSessionStore::UnindexedCount() {
  std::lock_guard lock(mu_);
  return db_->QueryInt(
      "SELECT count(*) FROM messages WHERE id > (SELECT indexed_through FROM search_index_state)");
}

Status SqliteSessionStore::IndexPendingLocked(int64_t limit) {
  int64_t left = 0;
  Status s = WithWriteTransaction(*db_, [&]() -> Status {
    const int64_t from =
        TALARIA_TRY(db_->QueryInt("SELECT indexed_through FROM search_index_state"));
    const int64_t last = TALARIA_TRY(db_->QueryInt("SELECT coalesce(max(id), 0) FROM messages"));
    if (last <= from) return Status::Ok();
    // Ids are dense but for deleted sessions' rows, so an id range approximates `limit` rows.
    const int64_t to = last - from > limit ? from + limit : last;
    left = last - to;
    Stmt words = TALARIA_TRY(
        db_->Prepare("INSERT INTO messages_fts (rowid, body, tools) "
                     "SELECT id, body, tools FROM messages_fts_source WHERE id > ?1 AND id <= ?2"));
    words.Bind(1, from).Bind(2, to);
    TALARIA_RETURN_IF_ERROR(words.Run());
    Stmt trigrams =
        TALARIA_TRY(db_->Prepare("INSERT INTO messages_cjk (rowid, body, tools) "
                                 "SELECT id, body, tools FROM messages_cjk_source "
                                 "WHERE id > ?1 AND id <= ?2"));
    trigrams.Bind(1, from).Bind(2, to);
    TALARIA_RETURN_IF_ERROR(trigrams.Run());
    Stmt mark = TALARIA_TRY(db_->Prepare("UPDATE search_index_state SET indexed_through = ?1"));
    mark.Bind(1, to);
    return mark.Run();
  });
  if (s.ok()) unindexed_ = left;
  // The messages are committed either way; only search lags until a batch succeeds. Said once
  // per run of failures, not at every attempt.
  if (!s.ok() && !index_failing_) {
    LogWarn("session store: indexing messages for search failed (" + s.message() +
            "); search lags until it succeeds");
  }
  index_failing_ = !s.ok();
  return s.WithContext("indexing messages for search");
}

void SqliteSessionStore::NoteAppendedLocked(size_t count) {
  if (count == 0) return;
  unindexed_ += static_cast<int64_t>(count);
  last_append_ = std::chrono::steady_clock::now();
  if (unindexed_ >= kIndexBacklogCap) (void)IndexPendingLocked();
  (void)Checkpoint(*db_, kCheckpointInline);
  if (!indexer_.joinable() && !stopping_) {
    try {
      indexer_ = std::thread([this] { IndexWhenIdle(); });
    } catch (const std::system_error&) {
      // No thread to be had: the backlog cap (and Search) index instead.
    }
  }
  // Only a parked indexer needs waking: one waiting for the idle time wakes on its own and
  // measures from this append (a wake per append cost a context switch and a lock handoff).
  if (indexer_parked_) indexer_wake_.notify_one();
}

void SqliteSessionStore::IndexWhenIdle() {
  using Clock = std::chrono::steady_clock;
  std::unique_lock lock(mu_);
  auto not_before = Clock::time_point::min();             // set after a failed chunk
  auto checkpoint_not_before = Clock::time_point::min();  // set while a reader holds frames
  while (!stopping_) {
    const bool checkpoint_due = IdleCheckpointDue() && Clock::now() >= checkpoint_not_before;
    if (unindexed_ <= 0 && !checkpoint_due) {
      indexer_parked_ = true;
      indexer_wake_.wait(lock);
      indexer_parked_ = false;
      continue;
    }
    const auto due = std::max(last_append_ + kIndexWhenIdleFor, not_before);
    if (Clock::now() < due) {
      indexer_wake_.wait_until(lock, due);
      continue;
    }
    if (unindexed_ > 0) {
      const bool done = IndexPendingLocked(kIndexChunk).ok();
      not_before = done ? Clock::time_point::min() : Clock::now() + kIndexRetryAfter;
      continue;
    }
    if (checkpoint_db_ == nullptr) {
      auto opened = SqliteDb::Open(db_->path());
      // A connection opens the WAL with its first read; until then a checkpoint through it
      // does nothing and says so only by a log of -1 frames.
      if (opened && (*opened)->QueryInt("PRAGMA schema_version")) {
        checkpoint_db_ = std::move(*opened);
      }
    }
    bool caught_up = false;
    if (checkpoint_db_ != nullptr) {
      lock.unlock();  // appends go on meanwhile: they only add to the WAL
      caught_up = Checkpoint(*checkpoint_db_, 1);
      lock.lock();
    }
    // Blocked (busy, or a reader's snapshot): try again later, without holding indexing back.
    checkpoint_not_before = caught_up ? Clock::time_point::min() : Clock::now() + kIndexRetryAfter;
  }
}

Result<SessionRow> SqliteSessionStore::CreateSession(const NewSession& session) {
  std::lock_guard lock(mu_);
  const int64_t now = NowUnixMs();
  if (!session.parent_id.empty()) {
    auto parent = TALARIA_TRY(GetSessionLocked(session.parent_id));
    if (!parent) return Err(NotFoundError("no parent session " + session.parent_id));
  }
  // A 24-bit suffix: two sessions started in the same second collide with odds of 1 in 16
  // million; a collision just draws again.
  for (int attempt = 0;; ++attempt) {
    SessionRow row;
    row.id = NewSessionId(now);
    row.parent_id = session.parent_id;
    row.cwd = session.cwd;
    row.model = session.model;
    row.title = session.title;
    row.source = session.source;
    row.started_at_ms = now;
    row.updated_at_ms = now;
    Stmt s = TALARIA_TRY(
        db_->Prepare("INSERT OR IGNORE INTO sessions (id, parent_id, cwd, model, title, source, "
                     "started_at_ms, updated_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)"));
    s.Bind(1, row.id).Bind(3, row.cwd).Bind(4, row.model).Bind(5, row.title).Bind(6, row.source);
    s.Bind(7, now);
    if (row.parent_id.empty()) {
      s.BindNull(2);
    } else {
      s.Bind(2, row.parent_id);
    }
    TALARIA_RETURN_IF_ERROR(s.Run());
    if (db_->changes() == 1) return row;
    if (attempt == 8) return Err(InternalError("could not draw an unused session id"));
  }
}

Result<std::optional<SessionRow>> SqliteSessionStore::GetSessionLocked(std::string_view id) {
  Stmt s = TALARIA_TRY(db_->Prepare(kGetSession));
  s.Bind(1, id);
  bool row = TALARIA_TRY(s.Step());
  if (!row) return std::optional<SessionRow>();
  return std::optional<SessionRow>(ReadSessionRow(s));
}

Result<std::optional<SessionRow>> SqliteSessionStore::GetSession(std::string_view id) {
  std::lock_guard lock(mu_);
  return GetSessionLocked(id);
}

Status SqliteSessionStore::RequireSessionLocked(std::string_view session_id) {
  Stmt s = TALARIA_TRY(db_->Prepare("SELECT 1 FROM sessions WHERE id = ?1"));
  s.Bind(1, session_id);
  bool row = TALARIA_TRY(s.Step());
  return row ? Status::Ok() : NoSession(session_id);
}

Result<std::vector<SessionRow>> SqliteSessionStore::ListSessions(const ListOptions& options) {
  std::lock_guard lock(mu_);
  Stmt s = TALARIA_TRY(db_->Prepare(options.cwd.empty() ? kListAll : kListInCwd));
  s.Bind(1, ClampLimit(options.limit));
  if (!options.cwd.empty()) s.Bind(2, options.cwd);
  std::vector<SessionRow> out;
  while (TALARIA_TRY(s.Step())) out.push_back(ReadSessionRow(s));
  return out;
}

Result<std::optional<SessionRow>> SqliteSessionStore::LatestSession(std::string_view cwd) {
  std::lock_guard lock(mu_);
  Stmt s = TALARIA_TRY(db_->Prepare(kListInCwd));
  s.Bind(1, int64_t{1}).Bind(2, cwd);
  bool row = TALARIA_TRY(s.Step());
  if (!row) return std::optional<SessionRow>();
  return std::optional<SessionRow>(ReadSessionRow(s));
}

Status SqliteSessionStore::SetTitle(std::string_view id, std::string_view title) {
  std::lock_guard lock(mu_);
  Stmt s = TALARIA_TRY(db_->Prepare("UPDATE sessions SET title = ?2 WHERE id = ?1"));
  s.Bind(1, id).Bind(2, title);
  TALARIA_RETURN_IF_ERROR(s.Run());
  return db_->changes() == 1 ? Status::Ok() : NoSession(id);
}

Status SqliteSessionStore::EndSession(std::string_view id, std::string_view reason) {
  std::lock_guard lock(mu_);
  Stmt s = TALARIA_TRY(db_->Prepare(
      "UPDATE sessions SET ended_at_ms = ?2, updated_at_ms = ?2, end_reason = ?3 WHERE id = ?1"));
  s.Bind(1, id).Bind(2, NowUnixMs()).Bind(3, reason);
  TALARIA_RETURN_IF_ERROR(s.Run());
  return db_->changes() == 1 ? Status::Ok() : NoSession(id);
}

Status SqliteSessionStore::DeleteSession(std::string_view id) {
  std::lock_guard lock(mu_);
  // Messages, compactions and state go by ON DELETE CASCADE, the FTS rows by the messages'
  // delete trigger; children keep living with parent_id set to NULL.
  return WithWriteTransaction(*db_, [&]() -> Status {
    Stmt s = TALARIA_TRY(db_->Prepare("DELETE FROM sessions WHERE id = ?1"));
    s.Bind(1, id);
    TALARIA_RETURN_IF_ERROR(s.Run());
    if (db_->changes() != 1) return NoSession(id);
    // Message ids are max(id) + 1: had the deleted session held the newest messages, the next
    // ones would reuse ids at or below the watermark and never be indexed. Bring it down to
    // what is left (the deleted rows' index entries went with them, by the trigger).
    return db_->Exec(
        "UPDATE search_index_state SET indexed_through = min(indexed_through, "
        "(SELECT coalesce(max(id), 0) FROM messages))");
  });
}

Status SqliteSessionStore::AppendLocked(std::string_view session_id, StoredMessage& message) {
  if (!IsKnownRole(message.role)) {
    return InvalidArgumentError("unknown message role '" + message.role + "'");
  }
  const int64_t now = NowUnixMs();
  const TokenTotals& u = message.usage;
  // One statement checks the session exists, numbers the message and adds its usage.
  Stmt bump = TALARIA_TRY(
      db_->Prepare("UPDATE sessions SET message_count = message_count + 1, updated_at_ms = ?2, "
                   "input_tokens = input_tokens + ?3, cached_tokens = cached_tokens + ?4, "
                   "output_tokens = output_tokens + ?5, reasoning_tokens = reasoning_tokens + ?6, "
                   "cost_usd = cost_usd + ?7 WHERE id = ?1 RETURNING message_count"));
  bump.Bind(1, session_id).Bind(2, now).Bind(3, u.input_tokens).Bind(4, u.cached_tokens);
  bump.Bind(5, u.output_tokens).Bind(6, u.reasoning_tokens).Bind(7, u.cost_usd);
  bool found = TALARIA_TRY(bump.Step());
  if (!found) return NoSession(session_id);
  const int64_t seq = bump.Int(0);

  std::string tool_calls;
  if (!message.tool_calls.is_null()) tool_calls = DumpJson(message.tool_calls);
  const bool has_cjk =
      ContainsCjk(message.content) || ContainsCjk(message.name) || ContainsCjk(tool_calls);
  Stmt insert = TALARIA_TRY(db_->Prepare(
      "INSERT INTO messages (session_id, seq, role, content, reasoning, tool_calls, tool_call_id, "
      "name, input_tokens, cached_tokens, output_tokens, reasoning_tokens, cost_usd, "
      "created_at_ms, has_cjk) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"));
  insert.Bind(1, session_id).Bind(2, seq).Bind(3, message.role).Bind(4, message.content);
  insert.Bind(5, message.reasoning).Bind(7, message.tool_call_id).Bind(8, message.name);
  if (message.tool_calls.is_null()) {
    insert.BindNull(6);
  } else {
    insert.Bind(6, tool_calls);
  }
  insert.Bind(9, u.input_tokens).Bind(10, u.cached_tokens).Bind(11, u.output_tokens);
  insert.Bind(12, u.reasoning_tokens).Bind(13, u.cost_usd).Bind(14, now);
  insert.Bind(15, int64_t{has_cjk ? 1 : 0});
  TALARIA_RETURN_IF_ERROR(insert.Run());
  message.seq = seq;
  message.created_at_ms = now;
  return Status::Ok();
}

Status SqliteSessionStore::AppendMessage(std::string_view session_id, StoredMessage& message) {
  std::lock_guard lock(mu_);
  TALARIA_RETURN_IF_ERROR(
      WithWriteTransaction(*db_, [&] { return AppendLocked(session_id, message); }));
  NoteAppendedLocked(1);
  return Status::Ok();
}

Status SqliteSessionStore::AppendMessages(std::string_view session_id,
                                          std::vector<StoredMessage>& messages) {
  std::lock_guard lock(mu_);
  std::vector<StoredMessage> staged = messages;  // untouched if the transaction fails
  Status s = WithWriteTransaction(*db_, [&]() -> Status {
    for (StoredMessage& m : staged) TALARIA_RETURN_IF_ERROR(AppendLocked(session_id, m));
    return Status::Ok();
  });
  if (!s.ok()) return s;
  messages = std::move(staged);
  NoteAppendedLocked(messages.size());
  return Status::Ok();
}

Result<std::vector<StoredMessage>> SqliteSessionStore::LoadMessagesLocked(
    std::string_view session_id, int64_t after_seq) {
  Stmt s = TALARIA_TRY(db_->Prepare(
      "SELECT seq, role, content, reasoning, tool_calls, tool_call_id, name, input_tokens, "
      "cached_tokens, output_tokens, reasoning_tokens, cost_usd, created_at_ms FROM messages "
      "WHERE session_id = ?1 AND seq > ?2 ORDER BY seq"));
  s.Bind(1, session_id).Bind(2, after_seq);
  std::vector<StoredMessage> out;
  while (TALARIA_TRY(s.Step())) {
    StoredMessage m;
    m.seq = s.Int(0);
    m.role = s.Text(1);
    m.content = s.Text(2);
    m.reasoning = s.Text(3);
    if (!s.IsNull(4)) {
      auto calls = ParseJson(s.Text(4));
      if (!calls) {
        return Err(InternalError("message " + std::to_string(m.seq) + " of session " +
                                 std::string(session_id) +
                                 " has damaged tool calls: " + calls.error().message()));
      }
      m.tool_calls = std::move(*calls);
    }
    m.tool_call_id = s.Text(5);
    m.name = s.Text(6);
    m.usage.input_tokens = s.Int(7);
    m.usage.cached_tokens = s.Int(8);
    m.usage.output_tokens = s.Int(9);
    m.usage.reasoning_tokens = s.Int(10);
    m.usage.cost_usd = s.Real(11);
    m.created_at_ms = s.Int(12);
    out.push_back(std::move(m));
  }
  return out;
}

Result<std::vector<StoredMessage>> SqliteSessionStore::LoadHistoryLocked(
    std::string_view session_id) {
  TALARIA_RETURN_IF_ERROR(RequireSessionLocked(session_id));
  std::vector<StoredMessage> history;
  int64_t after_seq = 0;
  {
    Stmt s = TALARIA_TRY(
        db_->Prepare("SELECT after_seq, replacement FROM compactions WHERE session_id = ?1 "
                     "ORDER BY id DESC LIMIT 1"));
    s.Bind(1, session_id);
    if (TALARIA_TRY(s.Step())) {
      after_seq = s.Int(0);
      auto replacement = MessagesFromJson(s.Text(1));
      if (!replacement) {
        return Err(InternalError("the latest compaction of session " + std::string(session_id) +
                                 " is damaged: " + replacement.error().message()));
      }
      history = std::move(*replacement);
    }
  }
  std::vector<StoredMessage> later = TALARIA_TRY(LoadMessagesLocked(session_id, after_seq));
  history.insert(history.end(), std::make_move_iterator(later.begin()),
                 std::make_move_iterator(later.end()));
  return history;
}

Result<std::vector<StoredMessage>> SqliteSessionStore::LoadHistory(std::string_view session_id) {
  std::lock_guard lock(mu_);
  // One read transaction: another process's compaction must not land between the two reads.
  TALARIA_RETURN_IF_ERROR(db_->BeginRead());
  auto history = LoadHistoryLocked(session_id);
  db_->EndRead();
  return history;
}

Result<std::vector<StoredMessage>> SqliteSessionStore::LoadTranscript(std::string_view session_id) {
  std::lock_guard lock(mu_);
  TALARIA_RETURN_IF_ERROR(db_->BeginRead());
  auto transcript = [&]() -> Result<std::vector<StoredMessage>> {
    TALARIA_RETURN_IF_ERROR(RequireSessionLocked(session_id));
    return LoadMessagesLocked(session_id, 0);
  }();
  db_->EndRead();
  return transcript;
}

Status SqliteSessionStore::AppendCompaction(std::string_view session_id, std::string_view summary,
                                            const std::vector<StoredMessage>& replacement) {
  std::lock_guard lock(mu_);
  const std::string replacement_json = DumpJson(MessagesToJson(replacement));
  return WithWriteTransaction(*db_, [&]() -> Status {
    const int64_t now = NowUnixMs();
    Stmt bump = TALARIA_TRY(db_->Prepare(
        "UPDATE sessions SET updated_at_ms = ?2 WHERE id = ?1 RETURNING message_count"));
    bump.Bind(1, session_id).Bind(2, now);
    if (!TALARIA_TRY(bump.Step())) return NoSession(session_id);
    const int64_t after_seq = bump.Int(0);
    Stmt insert = TALARIA_TRY(db_->Prepare(
        "INSERT INTO compactions (session_id, after_seq, summary, replacement, created_at_ms) "
        "VALUES (?1, ?2, ?3, ?4, ?5)"));
    insert.Bind(1, session_id).Bind(2, after_seq).Bind(3, summary).Bind(4, replacement_json);
    insert.Bind(5, now);
    return insert.Run();
  });
}

Result<size_t> SqliteSessionStore::RepairInterrupted(std::string_view session_id) {
  std::lock_guard lock(mu_);
  size_t added = 0;
  // Read and append in one write transaction: two processes resuming the same session at once
  // must not both answer the same call.
  Status s = WithWriteTransaction(*db_, [&]() -> Status {
    std::vector<StoredMessage> history = TALARIA_TRY(LoadHistoryLocked(session_id));
    for (const UnansweredCall& call : FindUnansweredCalls(history)) {
      StoredMessage result = InterruptedResult(call);
      TALARIA_RETURN_IF_ERROR(AppendLocked(session_id, result));
      ++added;
    }
    return Status::Ok();
  });
  if (!s.ok()) return Err(std::move(s));
  NoteAppendedLocked(added);
  return added;
}

Status SqliteSessionStore::PutState(std::string_view session_id, std::string_view key,
                                    const Json& value) {
  std::lock_guard lock(mu_);
  const std::string text = DumpJson(value);
  return WithWriteTransaction(*db_, [&]() -> Status {
    TALARIA_RETURN_IF_ERROR(RequireSessionLocked(session_id));
    Stmt s = TALARIA_TRY(
        db_->Prepare("INSERT INTO session_state (session_id, key, value, updated_at_ms) "
                     "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (session_id, key) DO UPDATE SET "
                     "value = excluded.value, updated_at_ms = excluded.updated_at_ms"));
    s.Bind(1, session_id).Bind(2, key).Bind(3, text).Bind(4, NowUnixMs());
    return s.Run();
  });
}

Result<std::optional<Json>> SqliteSessionStore::GetState(std::string_view session_id,
                                                         std::string_view key) {
  std::lock_guard lock(mu_);
  Stmt s = TALARIA_TRY(
      db_->Prepare("SELECT value FROM session_state WHERE session_id = ?1 AND key = ?2"));
  s.Bind(1, session_id).Bind(2, key);
  if (!TALARIA_TRY(s.Step())) return std::optional<Json>();
  auto value = ParseJson(s.Text(0));
  if (!value) {
    return Err(InternalError("state '" + std::string(key) + "' of session " +
                             std::string(session_id) + " is damaged: " + value.error().message()));
  }
  return std::optional<Json>(std::move(*value));
}

Result<TokenTotals> SqliteSessionStore::SumUsage(std::string_view cwd) {
  std::lock_guard lock(mu_);
  Stmt s = TALARIA_TRY(db_->Prepare(
      "SELECT coalesce(sum(input_tokens), 0), coalesce(sum(cached_tokens), 0), "
      "coalesce(sum(output_tokens), 0), coalesce(sum(reasoning_tokens), 0), total(cost_usd) "
      "FROM sessions WHERE (?1 = '' OR cwd = ?1) "
      // A subagent's usage is already in its parent's totals.
      "AND NOT (source = 'delegate' AND coalesce(parent_id, '') != '')"));
  s.Bind(1, cwd);
  TokenTotals t;
  if (TALARIA_TRY(s.Step())) {
    t.input_tokens = s.Int(0);
    t.cached_tokens = s.Int(1);
    t.output_tokens = s.Int(2);
    t.reasoning_tokens = s.Int(3);
    t.cost_usd = s.Real(4);
  }
  return t;
}

Result<std::vector<SearchHit>> SqliteSessionStore::Search(std::string_view query,
                                                          const SearchOptions& options) {
  std::lock_guard lock(mu_);
  // What was appended since the last batch, here or by another process, must be findable. A
  // failure (another process holding the write lock past the busy timeout) still searches what
  // is indexed.
  auto behind = db_->QueryInt(
      "SELECT (SELECT coalesce(max(id), 0) FROM messages) > "
      "(SELECT indexed_through FROM search_index_state)");
  if (!behind || *behind != 0) (void)IndexPendingLocked();
  TALARIA_RETURN_IF_ERROR(db_->BeginRead());
  auto hits = SearchLocked(query, options);
  db_->EndRead();
  return hits;
}

}  // namespace talaria::store
