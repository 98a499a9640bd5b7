#include "talaria/env/process_table.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include "output_watch.h"
#include "talaria/base/child_exit.h"
#include "talaria/base/file_io.h"
#include "talaria/base/random.h"
#include "talaria/base/scoped_sigpipe_block.h"
#include "talaria/base/unique_fd.h"

namespace talaria::env {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kIdPrefix = "proc_";
constexpr size_t kMinPrefix = 4;
// Poll period when the kernel has no pidfd (exit is then found by polling waitid).
constexpr int kFallbackPollMs = 50;
// How long a write to a child's stdin may wait for the child to read.
constexpr int kWriteTimeoutMs = 5000;

std::string NewId() { return std::string(kIdPrefix) + RandomHex(6); }

}  // namespace

struct ProcessTable::Entry {
  std::string id;
  std::string command;
  bool pty = false;
  pid_t pid = -1;
  UniqueFd pidfd;
  UniqueFd input;
  UniqueFd output;
  UniqueFd wake;  // eventfd: the watcher stops when it fires
  std::thread watcher;
  Clock::time_point started;
  // Guarded by the table's mu_:
  Clock::time_point ended;
  bool running = true;
  bool output_open = true;
  std::optional<int> exit_code;
  std::string window;  // the last bytes of output; trimmed when twice the cap
  size_t total = 0;
  bool notify_on_complete = false;
  bool killed_by_request = false;  // Kill/Remove: the caller knows; no completion notice
  OutputWatch watch;
  // What was written to stdin after the last line end: the start of the line the process
  // (a shell, typically) has not yet been handed.
  std::string unfinished_input;
};

namespace {

// Longer unfinished lines are refused rather than kept: the guard judges the whole line.
constexpr size_t kMaxUnfinishedInput = size_t{64} << 10;

// Where the line that `data` leaves unfinished starts in it (npos: no line end in `data`). On a
// terminal, a carriage return ends a line too (ICRNL).
size_t AfterLastLineEnd(std::string_view data, bool pty) {
  const size_t nl = data.find_last_of(pty ? std::string_view("\n\r") : std::string_view("\n"));
  return nl == std::string_view::npos ? std::string_view::npos : nl + 1;
}

}  // namespace

// Wakes the entry's watcher out of its poll and waits for it to return.
void ProcessTable::StopWatcher(Entry& e) {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(e.wake.get(), &one, sizeof one);
  if (e.watcher.joinable()) e.watcher.join();
}

ProcessTable::ProcessTable(ProcessTableOptions options)
    : options_(options),
      breaker_(std::make_unique<NoticeBreaker>(BreakerLimits{
          options.breaker_max_notices, options.breaker_window, options.breaker_cooldown})) {}

ProcessTable::~ProcessTable() {
  std::map<std::string, std::shared_ptr<Entry>, std::less<>> entries;
  {
    std::lock_guard lock(mu_);
    entries.swap(entries_);
  }
  for (auto& [id, e] : entries) {
    bool alive;
    {
      std::lock_guard lock(mu_);
      alive = e->running || e->output_open;
    }
    // After the leader is reaped its group id is only safe to signal while members hold our pipe.
    if (alive) ::kill(-e->pid, SIGKILL);
    StopWatcher(*e);
  }
}

Result<std::string> ProcessTable::Add(StartedProcess child, std::string command, bool pty,
                                      WatchRequest watch) {
  auto e = std::make_shared<Entry>();
  e->command = std::move(command);
  e->pty = pty;
  e->notify_on_complete = watch.notify_on_complete;
  if (!watch.patterns.empty()) {
    WatchLimits limits;
    limits.interval = options_.watch_interval;
    limits.max_strikes = options_.watch_max_strikes;
    limits.max_hits = options_.watch_max_hits;
    e->watch = OutputWatch(std::move(watch.patterns), limits);
  }
  e->pid = child.pid;
  e->pidfd = std::move(child.pidfd);
  e->input = std::move(child.input);
  e->output = std::move(child.output);
  e->wake.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  e->started = Clock::now();
  {
    std::lock_guard lock(mu_);
    PruneLocked();
    if (entries_.size() >= options_.max_processes) {
      // Room is made by forgetting the process that finished first; one still running (or whose
      // group still writes output) is never dropped.
      auto oldest = entries_.end();
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        const Entry& c = *it->second;
        if (!c.running && !c.output_open &&
            (oldest == entries_.end() || c.ended < oldest->second->ended))
          oldest = it;
      }
      if (oldest == entries_.end()) {
        ::kill(-e->pid, SIGKILL);
        siginfo_t info{};
        ::waitid(P_PID, static_cast<id_t>(e->pid), &info, WEXITED);
        return Err(ResourceExhaustedError(
            "too many background processes (" + std::to_string(options_.max_processes) +
            " still running); kill or close some with the process tool first"));
      }
      Forget(oldest);
    }
    do {
      e->id = NewId();
    } while (entries_.contains(e->id));
    entries_.emplace(e->id, e);
  }
  e->watcher = std::thread([this, e] { Watch(e); });
  return e->id;
}

void ProcessTable::Watch(std::shared_ptr<Entry> e) {
  char buf[64 * 1024];
  bool running = true;
  bool output_open = e->output.valid();
  while (running || output_open) {
    enum { kOut, kPid, kWake, kSlots };
    pollfd p[kSlots] = {{output_open ? e->output.get() : -1, POLLIN, 0},
                        {running && e->pidfd.valid() ? e->pidfd.get() : -1, POLLIN, 0},
                        {e->wake.get(), POLLIN, 0}};
    const int timeout = running && !e->pidfd.valid() ? kFallbackPollMs : -1;
    if (::poll(p, kSlots, timeout) < 0 && errno != EINTR) break;
    if (p[kWake].revents != 0) break;
    if (p[kOut].revents != 0) {
      const ssize_t n = ::read(e->output.get(), buf, sizeof buf);
      if (n > 0) {
        bool notify = false;
        {
          std::lock_guard lock(mu_);
          e->window.append(buf, static_cast<size_t>(n));
          e->total += static_cast<size_t>(n);
          if (e->window.size() > 2 * options_.max_output_bytes) {
            e->window.erase(0, e->window.size() - options_.max_output_bytes);
          }
          OnOutputLocked(*e, std::string_view(buf, static_cast<size_t>(n)), notify);
        }
        if (notify) TellListener();
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        output_open = false;  // EOF, or EIO from a pty whose last slave closed
        std::lock_guard lock(mu_);
        e->output_open = false;
      }
    }
    if (running && (p[kPid].revents != 0 || !e->pidfd.valid())) {
      siginfo_t info{};
      const int flags = WEXITED | (e->pidfd.valid() ? 0 : WNOHANG);
      const int rc = e->pidfd.valid()
                         ? ::waitid(P_PIDFD, static_cast<id_t>(e->pidfd.get()), &info, flags)
                         : ::waitid(P_PID, static_cast<id_t>(e->pid), &info, flags);
      if (rc == 0 && info.si_pid == e->pid) {
        running = false;
        std::lock_guard lock(mu_);
        e->running = false;
        e->exit_code = ShellExitCode(info);
        e->ended = Clock::now();
        e->input.reset();
      }
    }
    changed_.notify_all();
  }
  if (running) {
    // Stopped early (table destroyed or entry dropped): the child was killed; reap it.
    siginfo_t info{};
    ::waitid(P_PID, static_cast<id_t>(e->pid), &info, WEXITED);
  } else if (!output_open) {
    bool notify = false;
    {
      std::lock_guard lock(mu_);
      OnEndLocked(*e, notify);
    }
    if (notify) TellListener();
  }
  changed_.notify_all();
}

void ProcessTable::OnOutputLocked(Entry& e, std::string_view chunk, bool& notify) {
  if (!e.watch.active()) return;
  OutputWatch::Outcome seen = e.watch.Feed(chunk, Clock::now(), *breaker_);
  if (seen.event == OutputWatch::Event::kMatched) {
    notify |= QueueLocked(e, ProcessNotice::Kind::kMatched, std::move(seen.lines));
  } else if (seen.event == OutputWatch::Event::kDisabled) {
    notify |= QueueLocked(e, ProcessNotice::Kind::kWatchDisabled, {});
  }
  // A watch that ran out of hits or strikes hands over to a completion notice.
  if (!e.watch.active()) e.notify_on_complete = true;
}

void ProcessTable::OnEndLocked(Entry& e, bool& notify) {
  if (!e.notify_on_complete || e.killed_by_request) return;
  const size_t keep = std::min(e.window.size(), options_.notice_tail_bytes);
  notify |=
      QueueLocked(e, ProcessNotice::Kind::kCompleted, e.window.substr(e.window.size() - keep));
}

bool ProcessTable::QueueLocked(const Entry& e, ProcessNotice::Kind kind, std::string output) {
  ProcessNotice notice;
  notice.kind = kind;
  notice.id = e.id;
  notice.command = e.command;
  notice.exit_code = e.exit_code;
  notice.output = std::move(output);
  notices_.push_back(std::move(notice));
  while (notices_.size() > options_.max_queued_notices) notices_.pop_front();
  queued_.store(notices_.size(), std::memory_order_release);
  return static_cast<bool>(listener_);
}

void ProcessTable::TellListener() {
  std::function<void()> listener;
  {
    std::lock_guard lock(mu_);
    listener = listener_;
  }
  if (listener) listener();
}

std::vector<ProcessNotice> ProcessTable::TakeNotices() {
  // Asked after every tool call: without notices it must not contend with the watchers' lock.
  if (queued_.load(std::memory_order_acquire) == 0) return {};
  std::lock_guard lock(mu_);
  queued_.store(0, std::memory_order_release);
  std::vector<ProcessNotice> out(std::make_move_iterator(notices_.begin()),
                                 std::make_move_iterator(notices_.end()));
  notices_.clear();
  return out;
}

void ProcessTable::SetNoticeListener(std::function<void()> listener) {
  std::lock_guard lock(mu_);
  listener_ = std::move(listener);
}

void ProcessTable::PruneLocked() {
  const auto now = Clock::now();
  for (auto it = entries_.begin(); it != entries_.end();) {
    const Entry& e = *it->second;
    if (!e.running && !e.output_open && now - e.ended > options_.keep_finished) {
      it = Forget(it);
    } else {
      ++it;
    }
  }
}

ProcessTable::EntryMap::iterator ProcessTable::Forget(EntryMap::iterator it) {
  // Only finished entries come here: their watcher has left its loop and takes no lock again,
  // so joining under mu_ cannot deadlock.
  std::shared_ptr<Entry> e = it->second;
  if (e->watcher.joinable()) e->watcher.join();
  return entries_.erase(it);
}

Result<std::string> ProcessTable::Resolve(std::string_view query) const {
  std::string_view hex = query;
  if (hex.starts_with(kIdPrefix)) hex.remove_prefix(kIdPrefix.size());
  std::lock_guard lock(mu_);
  if (entries_.contains(query)) return std::string(query);
  if (hex.size() < kMinPrefix) {
    return Err(InvalidArgumentError("session_id '" + std::string(query) +
                                    "' is too short: give at least " + std::to_string(kMinPrefix) +
                                    " characters of the id"));
  }
  std::vector<std::string> hits;
  for (const auto& [id, e] : entries_) {
    if (std::string_view(id).substr(kIdPrefix.size()).starts_with(hex)) hits.push_back(id);
  }
  if (hits.empty())
    return Err(NotFoundError("no background process with id '" + std::string(query) + "'"));
  if (hits.size() > 1) {
    return Err(InvalidArgumentError("session_id '" + std::string(query) + "' matches " +
                                    std::to_string(hits.size()) +
                                    " processes; give more characters"));
  }
  return hits.front();
}

std::shared_ptr<ProcessTable::Entry> ProcessTable::Find(std::string_view query) const {
  auto id = Resolve(query);
  if (!id) return nullptr;
  std::lock_guard lock(mu_);
  auto it = entries_.find(*id);
  return it == entries_.end() ? nullptr : it->second;
}

ProcessSnapshot ProcessTable::SnapshotLocked(const Entry& e, bool with_output) const {
  ProcessSnapshot s;
  s.id = e.id;
  s.command = e.command;
  s.pid = e.pid;
  s.running = e.running;
  s.exit_code = e.exit_code;
  s.uptime_seconds =
      std::chrono::duration<double>((e.running ? Clock::now() : e.ended) - e.started).count();
  s.pty = e.pty;
  s.output_total_bytes = e.total;
  if (with_output) {
    const size_t keep = std::min(e.window.size(), options_.max_output_bytes);
    s.output = e.window.substr(e.window.size() - keep);
  }
  return s;
}

std::vector<ProcessSnapshot> ProcessTable::List() const {
  std::lock_guard lock(mu_);
  std::vector<ProcessSnapshot> out;
  for (const auto& [id, e] : entries_) out.push_back(SnapshotLocked(*e, false));
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.uptime_seconds > b.uptime_seconds; });
  return out;
}

Result<ProcessSnapshot> ProcessTable::Get(std::string_view query, bool with_output) const {
  const std::string id = TALARIA_TRY(Resolve(query));
  std::lock_guard lock(mu_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return Err(NotFoundError("no background process with id '" + id + "'"));
  return SnapshotLocked(*it->second, with_output);
}

Result<ProcessSnapshot> ProcessTable::Wait(std::string_view query,
                                           std::chrono::milliseconds timeout,
                                           std::stop_token cancel) {
  std::shared_ptr<Entry> e = Find(query);
  if (!e) return Get(query, false);  // the lookup's error
  std::unique_lock lock(mu_);
  const auto deadline = Clock::now() + timeout;
  // condition_variable (not _any) keeps the notify path simple: poll the stop token in slices.
  while (e->running && !cancel.stop_requested() && Clock::now() < deadline) {
    changed_.wait_until(lock, std::min(deadline, Clock::now() + std::chrono::milliseconds(50)));
  }
  return SnapshotLocked(*e, true);
}

Result<std::string> ProcessTable::UnfinishedInput(std::string_view query) const {
  std::shared_ptr<Entry> e = Find(query);
  if (!e) return Err(Get(query, false).error());
  std::lock_guard lock(mu_);
  return e->unfinished_input;
}

Status ProcessTable::Write(std::string_view query, std::string_view data) {
  std::shared_ptr<Entry> e = Find(query);
  if (!e) return Get(query, false).error();
  UniqueFd fd;
  {
    std::lock_guard lock(mu_);
    if (!e->running) return FailedPreconditionError("process " + e->id + " has exited");
    if (!e->input) return FailedPreconditionError("stdin of process " + e->id + " is closed");
    const size_t line_start = AfterLastLineEnd(data, e->pty);
    const size_t unfinished = line_start == std::string_view::npos
                                  ? e->unfinished_input.size() + data.size()
                                  : data.size() - line_start;
    if (unfinished > kMaxUnfinishedInput) {
      return InvalidArgumentError("the input leaves a line of " + std::to_string(unfinished) +
                                  " bytes unfinished; end lines within " +
                                  std::to_string(kMaxUnfinishedInput) + " bytes");
    }
    // Recorded before the write: bytes that reach the process in part are presumed to have
    // reached it, so the next write is judged with them.
    if (line_start == std::string_view::npos) {
      e->unfinished_input.append(data);
    } else {
      e->unfinished_input.assign(data.substr(line_start));
    }
    fd.reset(::fcntl(e->input.get(), F_DUPFD_CLOEXEC, 3));
  }
  if (!fd) return InternalError("dup of stdin failed");
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) | O_NONBLOCK);
  // A child that stopped reading must not hang the call, and must not raise SIGPIPE here.
  ScopedSigpipeBlock no_sigpipe;
  WriteWait wait;
  wait.deadline = Clock::now() + std::chrono::milliseconds(kWriteTimeoutMs);
  const Status written = WriteAllUntil(fd.get(), data, wait);
  if (written.ok()) return written;
  if (written.code() == StatusCode::kDeadlineExceeded) {
    return DeadlineExceededError("the process is not reading its input");
  }
  return FailedPreconditionError("stdin of process " + e->id + " is closed");
}

Status ProcessTable::CloseStdin(std::string_view query) {
  std::shared_ptr<Entry> e = Find(query);
  if (!e) return Get(query, false).error();
  std::lock_guard lock(mu_);
  if (e->pty && e->input) {
    // On a terminal, end-of-input is the EOF character, not a closed descriptor.
    [[maybe_unused]] ssize_t n = ::write(e->input.get(), "\x04", 1);
  }
  e->input.reset();
  return {};
}

Result<ProcessSnapshot> ProcessTable::Kill(std::string_view query) {
  std::shared_ptr<Entry> e = Find(query);
  if (!e) return Get(query, false);
  std::unique_lock lock(mu_);
  e->killed_by_request = true;
  if (e->running) {
    ::kill(-e->pid, SIGTERM);
    changed_.wait_for(lock, options_.kill_grace, [&] { return !e->running; });
  }
  if (e->running || e->output_open) {
    ::kill(-e->pid, SIGKILL);  // the leader, or stragglers of its group holding the output
    changed_.wait_for(lock, std::chrono::seconds(5), [&] { return !e->running; });
  }
  return SnapshotLocked(*e, true);
}

Status ProcessTable::Remove(std::string_view query) {
  std::shared_ptr<Entry> e = Find(query);
  if (!e) return Get(query, false).error();
  if (auto killed = Kill(e->id); !killed) return killed.error();
  {
    std::lock_guard lock(mu_);
    entries_.erase(e->id);
  }
  StopWatcher(*e);
  return {};
}

}  // namespace talaria::env
