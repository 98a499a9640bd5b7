// The background processes of one session (the original's process registry): each has an id
// ("proc_" + 12 hex digits), a rolling window of its interleaved output, and its exit status
// once it ends. A watcher thread per process drains its output so a chatty child never blocks
// and never grows memory past the window.
//
// Limits as the original's: 64 processes (the oldest finished one is dropped to make room;
// when all are running, Add fails), 200,000 bytes of output kept per process, finished
// processes forgotten after 30 minutes. Destroying the table ends every process group it holds.
//
// Notices: a process added with notify_on_complete queues one when it ends by itself (not when
// killed through the table) with the tail of its output; one with watch patterns queues one
// when output lines contain a pattern, rate limited as the original (one per 15 s per process;
// three intervals with dropped matches, or 8 notices, turn the watch into a completion notice;
// more than 15 notices in 10 s across the table pause every watch for 30 s). Front ends take
// them with TakeNotices (the queue keeps the newest 64).
// Thread-safety: thread-safe.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/spawn.h"
#include "talaria/base/status.h"

namespace talaria::env {

class NoticeBreaker;

struct ProcessTableOptions {
  size_t max_processes = 64;
  size_t max_output_bytes = 200'000;
  std::chrono::seconds keep_finished{1800};
  std::chrono::milliseconds kill_grace{2000};
  size_t notice_tail_bytes = 2000;
  size_t max_queued_notices = 64;
  std::chrono::seconds watch_interval{15};
  int watch_max_strikes = 3;
  int watch_max_hits = 8;
  size_t breaker_max_notices = 15;
  std::chrono::seconds breaker_window{10};
  std::chrono::seconds breaker_cooldown{30};
};

// What the caller wants to hear about a background process.
struct WatchRequest {
  bool notify_on_complete = false;
  std::vector<std::string> patterns;  // plain substrings, matched per output line
};

struct ProcessNotice {
  enum class Kind : unsigned char {
    kCompleted,      // exited by itself: exit_code and output (the tail) are set
    kMatched,        // output lines contained a watch pattern: output holds those lines
    kWatchDisabled,  // the watch was too noisy and now waits for completion instead
  };
  Kind kind = Kind::kCompleted;
  std::string id;
  std::string command;
  std::optional<int> exit_code;
  std::string output;
};

struct ProcessSnapshot {
  std::string id;
  std::string command;
  pid_t pid = -1;
  bool running = true;
  std::optional<int> exit_code;  // once exited: the code, or 128 + signal
  double uptime_seconds = 0;     // until now, or until it exited
  bool pty = false;
  std::string output;  // the kept window (only when asked for)
  size_t output_total_bytes = 0;
};

class ProcessTable {
 public:
  explicit ProcessTable(ProcessTableOptions options = {});
  ~ProcessTable();
  ProcessTable(const ProcessTable&) = delete;
  ProcessTable& operator=(const ProcessTable&) = delete;

  // Takes ownership of `child`. Errors: ResourceExhausted when max_processes are all running.
  Result<std::string> Add(StartedProcess child, std::string command, bool pty,
                          WatchRequest watch = {});

  // The queued notices, oldest first; the queue is empty afterwards.
  std::vector<ProcessNotice> TakeNotices();
  // Called (on a watcher thread, without the table's lock) after a notice is queued; set it
  // before adding processes. It must not call back into a blocking table method for long.
  void SetNoticeListener(std::function<void()> listener);

  // The full id for an id or a unique prefix of at least 4 characters of its hex part.
  // Errors: NotFound, InvalidArgument (too short or ambiguous).
  Result<std::string> Resolve(std::string_view id_or_prefix) const;

  std::vector<ProcessSnapshot> List() const;
  Result<ProcessSnapshot> Get(std::string_view id, bool with_output) const;
  // Waits until the process exits, `timeout` passes or `cancel` is requested; the snapshot says
  // which (running = still running).
  Result<ProcessSnapshot> Wait(std::string_view id, std::chrono::milliseconds timeout,
                               std::stop_token cancel);
  // Writes to its stdin (its terminal with pty). Errors: FailedPrecondition when stdin is
  // closed or the process has exited; InvalidArgument when the write would leave an unfinished
  // line of over 64 KiB.
  Status Write(std::string_view id, std::string_view data);
  // What was written to its stdin after the last line end (newline; on a terminal also carriage
  // return): the part of a line the process has been sent but, reading lines, not yet acted
  // on. The next write completes it, so a guard judges this text followed by that write.
  // Errors: NotFound, InvalidArgument (as Resolve).
  Result<std::string> UnfinishedInput(std::string_view id) const;
  Status CloseStdin(std::string_view id);
  // SIGTERM to its group, then SIGKILL after the grace; returns the final snapshot.
  Result<ProcessSnapshot> Kill(std::string_view id);
  // Kills if needed and forgets the process.
  Status Remove(std::string_view id);

 private:
  struct Entry;
  using EntryMap = std::map<std::string, std::shared_ptr<Entry>, std::less<>>;
  void Watch(std::shared_ptr<Entry> entry);
  static void StopWatcher(Entry& e);
  void PruneLocked();
  EntryMap::iterator Forget(EntryMap::iterator it);  // a finished entry; mu_ held
  std::shared_ptr<Entry> Find(std::string_view id) const;
  ProcessSnapshot SnapshotLocked(const Entry& e, bool with_output) const;
  // Queues a notice; mu_ held. Returns whether the listener should be told.
  bool QueueLocked(const Entry& e, ProcessNotice::Kind kind, std::string output);
  void OnOutputLocked(Entry& e, std::string_view chunk, bool& notify);
  void OnEndLocked(Entry& e, bool& notify);
  void TellListener();

  const ProcessTableOptions options_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  EntryMap entries_;                        // Guarded by mu_.
  std::deque<ProcessNotice> notices_;       // Guarded by mu_.
  std::atomic<size_t> queued_{0};           // notices_.size(), readable without mu_
  std::unique_ptr<NoticeBreaker> breaker_;  // Guarded by mu_.
  std::function<void()> listener_;          // Guarded by mu_.
};

}  // namespace talaria::env
