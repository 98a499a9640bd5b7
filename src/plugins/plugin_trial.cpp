#include "plugins/plugin_trial.h"

#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>

#include "talaria/base/child_exit.h"
#include "talaria/base/file_io.h"
#include "talaria/base/paths.h"
#include "talaria/base/poll_timeout.h"

namespace talaria::plugins {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kTrialProgram = "talaria-plugin-trial";
constexpr size_t kOutputKept = 4096;
constexpr size_t kOutputQuoted = 200;
// Without a pidfd (old kernels) the child's exit is looked for this often.
constexpr std::chrono::milliseconds kExitPollPeriod{10};

// The last non-empty line of what the trial process printed (an abort message, a sanitizer's
// first words), shortened.
std::string LastLine(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  const size_t newline = text.rfind('\n');
  if (newline != std::string_view::npos) text.remove_prefix(newline + 1);
  if (text.size() > kOutputQuoted) text = text.substr(0, kOutputQuoted);
  return std::string(text);
}

std::string Seconds(std::chrono::milliseconds ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", static_cast<double>(ms.count()) / 1000.0);
  return text;
}

}  // namespace

std::string FindTrialExecutable() {
  return FindBesideLibrary("TALARIA_PLUGIN_TRIAL", kTrialProgram);
}

PluginTrial::PluginTrial(std::string executable, std::vector<std::string> paths,
                         std::chrono::milliseconds per_plugin_timeout)
    : executable_(std::move(executable)),
      paths_(std::move(paths)),
      per_plugin_timeout_(per_plugin_timeout),
      verdicts_(paths_.size()),
      progress_at_(Clock::now()) {
  if (!paths_.empty()) (void)Start(0);  // runs ahead while the loader does other work
}

PluginTrial::~PluginTrial() {
  if (!attempt_) return;
  const pid_t pid = attempt_->child.pid;
  ::kill(-pid, SIGKILL);
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED) != 0 && errno == EINTR) {
  }
}

void PluginTrial::Judge(size_t index, TrialVerdict verdict) {
  if (index != judged_ || index >= verdicts_.size()) return;  // verdicts come in order
  verdicts_[index] = std::move(verdict);
  judged_ = index + 1;
  progress_at_ = Clock::now();
}

void PluginTrial::JudgeRestNotRun(size_t first, const std::string& why) {
  const std::string reason = "the plugin trial process could not run (" + executable_ + "): " + why;
  for (size_t i = first; i < paths_.size(); ++i)
    Judge(i, TrialVerdict{TrialVerdict::Outcome::kNotRun, reason});
}

bool PluginTrial::Start(size_t first) {
  const auto not_run = [&](const std::string& why) {
    JudgeRestNotRun(first, why);
    return false;
  };
  // The list goes in a memory file, not a pipe: the child reads it whole before anything else,
  // however long it is, and nobody has to feed it.
  UniqueFd list(::memfd_create("talaria-trial-list", MFD_CLOEXEC));
  if (!list) return not_run(std::string("memfd_create: ") + std::strerror(errno));
  std::string text;
  for (size_t i = first; i < paths_.size(); ++i) {
    text += paths_[i];
    text += '\0';
  }
  if (Status written = WriteAll(list.get(), text); !written.ok()) return not_run(written.message());
  if (::lseek(list.get(), 0, SEEK_SET) != 0) return not_run(std::strerror(errno));

  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) return not_run(std::string("pipe: ") + std::strerror(errno));
  UniqueFd read_end(ends[0]), write_end(ends[1]);
  // Only our end is non-blocking: a full pipe must pause the child, not fail its write.
  if (::fcntl(read_end.get(), F_SETFL, O_NONBLOCK) != 0) return not_run(std::strerror(errno));

  SpawnOptions options;
  options.argv = {executable_};
  options.inherit_fd = write_end.get();
  StartOptions start;
  start.stdin_fd = list.get();
  auto child = StartProcess(options, start);
  if (!child) return not_run(child.error().message());
  // Assigned whole rather than emplace()d: clang 14 (clang-tidy's) cannot default-construct a
  // nested struct with member initializers inside its enclosing class.
  attempt_ = Attempt{.child = std::move(*child),
                     .protocol = std::move(read_end),
                     .first = first,
                     .ready = false,
                     .pending = {},
                     .output = {}};
  progress_at_ = Clock::now();
  return true;
}

void PluginTrial::ReadProtocol() {
  Attempt& a = *attempt_;
  if (!a.protocol) return;
  if (!ReadAvailable(a.protocol.get(), a.pending)) a.protocol.reset();
  size_t start = 0;
  for (size_t end; (end = a.pending.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string_view line(a.pending.data() + start, end - start);
    size_t n = 0;
    if (line == "ready") {
      a.ready = true;
      progress_at_ = Clock::now();  // the first plugin's time starts now
    } else if (line.starts_with("done ") &&
               std::from_chars(line.data() + 5, line.data() + line.size(), n).ec == std::errc()) {
      Judge(a.first + n, TrialVerdict{TrialVerdict::Outcome::kPassed, {}});
    }
  }
  a.pending.erase(0, start);
}

void PluginTrial::DrainOutput() {
  Attempt& a = *attempt_;
  if (!a.child.output) return;
  if (!ReadAvailable(a.child.output.get(), a.output)) a.child.output.reset();
  if (a.output.size() > 2 * kOutputKept) a.output.erase(0, a.output.size() - kOutputKept);
}

siginfo_t PluginTrial::Reap(bool kill_first) {
  Attempt& a = *attempt_;
  const pid_t pid = a.child.pid;
  if (kill_first) ::kill(-pid, SIGKILL);
  siginfo_t info{};
  // Waited for without reaping, so the group's id cannot be reused before the group is killed.
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
  }
  ::kill(-pid, SIGKILL);  // stragglers it started, which may hold its pipes open
  siginfo_t reaped{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &reaped, WEXITED) != 0 && errno == EINTR) {
  }
  ReadProtocol();  // what it wrote before it ended
  DrainOutput();
  return info;
}

void PluginTrial::Abandon(const std::string& why) {
  (void)Reap(/*kill_first=*/true);
  attempt_.reset();
  JudgeRestNotRun(judged_, why);
}

void PluginTrial::Finish(bool hung) {
  const size_t out_of_time = judged_;  // when hung: the plugin the deadline was for
  const siginfo_t info = Reap(/*kill_first=*/hung);
  Attempt& a = *attempt_;
  const size_t culprit = judged_;
  const size_t first = a.first;
  const bool ready = a.ready;
  std::string last = LastLine(a.output);
  attempt_.reset();
  if (culprit >= paths_.size()) return;
  if (!ready) {
    // The trial program itself failed: nobody is to blame, and the loader goes on without it.
    std::string why = "it " + DescribeChildExit(info) + " before reading its list";
    if (!last.empty()) why += ": " + last;
    JudgeRestNotRun(culprit, why);
    return;
  }
  if (hung && culprit != out_of_time) {
    // It finished just as its time ran out (its verdict came in while the process was killed):
    // the one after it had no time at all, so nobody is blamed and the rest go on anew.
    (void)Start(culprit);
    return;
  }
  if (culprit > first && !hung) {
    // Plugins loaded before it in that process (a thread or timer of theirs) may be what died:
    // the suspect is tried again alone before it is blamed.
    (void)Start(culprit);
    return;
  }
  std::string why;
  if (hung) {
    why = "did not finish loading and registering within " + Seconds(per_plugin_timeout_) +
          " in the trial process";
  } else {
    why = "the trial process " + DescribeChildExit(info) + " while loading or registering";
  }
  if (!last.empty()) why += "; output: " + last;
  Judge(culprit, TrialVerdict{TrialVerdict::Outcome::kFailed, std::move(why)});
}

void PluginTrial::Pump() {
  Attempt& a = *attempt_;
  const auto now = Clock::now();
  const auto deadline = progress_at_ + per_plugin_timeout_;
  if (now >= deadline) return Finish(/*hung=*/true);
  const bool has_pidfd = a.child.pidfd.valid();
  int timeout = PollTimeoutMs(now, deadline);
  if (!has_pidfd) timeout = std::min<int>(timeout, static_cast<int>(kExitPollPeriod.count()));
  // Level-triggered: a verdict written while nobody waited is reported at once.
  pollfd fds[3] = {{a.protocol ? a.protocol.get() : -1, POLLIN, 0},
                   {a.child.output ? a.child.output.get() : -1, POLLIN, 0},
                   {has_pidfd ? a.child.pidfd.get() : -1, POLLIN, 0}};
  if (::poll(fds, 3, timeout) < 0 && errno != EINTR) {
    // Our failure, not the plugin's: nobody is blamed, and the loader goes on without a trial.
    return Abandon(std::string("poll: ") + std::strerror(errno));
  }
  if (fds[0].revents != 0) ReadProtocol();
  if (fds[1].revents != 0) DrainOutput();
  bool exited = fds[2].revents != 0;
  if (!has_pidfd) {
    siginfo_t info{};
    exited =
        ::waitid(P_PID, static_cast<id_t>(a.child.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == a.child.pid;
  }
  if (exited) Finish(/*hung=*/false);
}

TrialVerdict PluginTrial::Await(size_t index) {
  if (index >= verdicts_.size()) {
    return TrialVerdict{TrialVerdict::Outcome::kNotRun, "no such candidate"};
  }
  // Only time spent waiting here counts against a plugin: while the loader was busy with its own
  // work the trial may have been stalled on a full pipe nobody read.
  if (!verdicts_[index]) progress_at_ = std::max(progress_at_, Clock::now());
  while (!verdicts_[index]) {
    if (attempt_) {
      Pump();
    } else {
      (void)Start(judged_);  // after a culprit: the rest, in a new process
    }
  }
  return *verdicts_[index];
}

}  // namespace talaria::plugins
