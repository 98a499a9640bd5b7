#include "sandboxes/remote_environment.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "sandboxes/api_http.h"
#include "sandboxes/remote_jobs.h"
#include "talaria/base/base64.h"
#include "talaria/base/random.h"
#include "talaria/base/shell_words.h"
#include "talaria/base/subprocess.h"
#include "talaria/base/utf8.h"
#include "talaria/env/remote_shell.h"

namespace talaria::sandboxes {
namespace {

using std::chrono::milliseconds;

// How long past its timeout a call the service should have ended may go on before the
// environment ends it itself (a service that lost the deadline, a dropped poll).
constexpr milliseconds kServiceDeadlineGrace{10'000};

// Ends a running call once, from another thread: at its deadline or when cancelled.
class CallWatcher {
 public:
  CallWatcher(std::stop_token cancel, milliseconds timeout, std::function<void(bool)> end)
      : end_(std::move(end)) {
    thread_ = std::jthread([this, cancel, timeout](std::stop_token done) {
      std::mutex mu;
      std::condition_variable_any cv;
      std::unique_lock lock(mu);
      std::stop_callback on_cancel(cancel, [&] {
        std::lock_guard l(mu);
        cv.notify_all();
      });
      const auto wake = [&] { return done.stop_requested() || cancel.stop_requested(); };
      if (timeout > milliseconds::zero()) {
        cv.wait_for(lock, done, timeout, wake);
      } else {
        cv.wait(lock, done, wake);
      }
      if (done.stop_requested()) return;
      const bool cancelled = cancel.stop_requested();
      lock.unlock();
      fired_ = true;
      cancelled_ = cancelled;
      end_(cancelled);
    });
  }
  // Stops watching (the call ended); waits for an end in progress.
  void Finish() {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
  }
  ~CallWatcher() { Finish(); }
  bool fired() const { return fired_; }
  bool cancelled() const { return cancelled_; }

 private:
  std::function<void(bool)> end_;
  std::atomic<bool> fired_{false};
  std::atomic<bool> cancelled_{false};
  std::jthread thread_;
};

class RemoteEnvironment final : public env::Environment {
 public:
  RemoteEnvironment(std::unique_ptr<SandboxApi> api, std::string cwd)
      : api_(std::move(api)),
        kind_(api_->kind()),
        state_dir_("/tmp/.talaria-shell-" + RandomHex(6)),
        marker_("__TALARIA_CWD_" + RandomHex(8) + "__"),
        cwd_(std::move(cwd)) {}

  ~RemoteEnvironment() override {
    jobs_.reset();  // background jobs end (and their relays stop) while the sandbox is there
    (void)api_->Destroy();
  }

  Status Prepare() {
    ExecCall call;
    call.exec_id = NewExecId();
    call.script = env::PrepareRemoteShellCommandLine(state_dir_, cwd_);
    call.timeout = milliseconds(60'000);
    ExecAnswer answer = TALARIA_TRY(api_->Exec(call, {}));
    std::string dir = answer.output;
    while (!dir.empty() && (dir.back() == '\n' || dir.back() == '\r')) dir.pop_back();
    if (answer.exit_code != 0 || dir.empty() || dir.front() != '/') {
      return UnavailableError(std::string(kind_) + ": the sandbox does not run commands (exit " +
                              std::to_string(answer.exit_code) +
                              "): " + answer.output.substr(0, 200));
    }
    std::lock_guard lock(mu_);
    cwd_ = std::move(dir);
    jobs_ = std::make_unique<RemoteJobs>(*api_, state_dir_);
    return Status::Ok();
  }

  std::string_view kind() const override { return kind_; }
  bool RunsScriptsRemotely() const override { return true; }
  std::string cwd() const override {
    std::lock_guard lock(mu_);
    return cwd_;
  }

  Result<env::CommandOutcome> Run(std::string_view command,
                                  const env::CommandOptions& options) override {
    std::lock_guard run(run_mu_);
    const std::string token = RandomHex(8);
    ExecCall call;
    call.exec_id = NewExecId();
    call.script = env::RemoteShellCommandLine(
        state_dir_, options.workdir.empty() ? cwd() : options.workdir, marker_, token, command,
        /*persist=*/true,
        options.workdir.empty() ? env::StartDir::kSession : env::StartDir::kOneOff);
    call.stdin_data = options.stdin_data;
    call.timeout = options.timeout;
    // The services take JSON text: bytes that are not UTF-8 travel as base64 and are decoded
    // in the sandbox (two more processes, paid only then).
    if (!IsValidUtf8(call.script)) {
      call.script =
          "exec bash -c \"$(printf %s " + ShellQuote(Base64Encode(call.script)) + " | base64 -d)\"";
    }
    if (!IsValidUtf8(call.stdin_data)) {
      call.script = ScriptWithStdin(call.script, call.stdin_data);
      call.stdin_data.clear();
    }
    ExecAnswer answer = TALARIA_TRY(api_->ServiceEndsCalls() ? RunEndedByService(call, options)
                                                             : RunEndedByUs(call, token, options));
    env::RemoteShellReport report = env::SplitRemoteShellOutput(std::move(answer.output), marker_);
    if (report.found && !report.cwd.empty()) {
      std::lock_guard lock(mu_);
      cwd_ = std::move(report.cwd);
    }
    env::CommandOutcome out;
    out.output_total_bytes = report.output.size();
    out.output = TruncateHeadTail(report.output, options.max_output_bytes);
    out.exit_code = answer.exit_code;
    out.timed_out = answer.timed_out;
    out.cancelled = answer.cancelled;
    if (out.cancelled) out.exit_code = kExitCodeCancelled;
    if (out.timed_out) out.exit_code = kExitCodeTimedOut;
    return out;
  }

  // Detached in the sandbox and relayed to a local stand-in process (remote_jobs.h).
  Result<StartedProcess> Start(std::string_view command, const env::CommandOptions& options,
                               const StartOptions& start) override {
    return jobs_->Start(command, options.workdir.empty() ? cwd() : options.workdir, start);
  }

 private:
  std::string NewExecId() { return NewUuid(); }

  // The service times the call out and cancels it (EndExec); the environment only waits, and
  // steps in when the service misses the deadline by far.
  Result<ExecAnswer> RunEndedByService(const ExecCall& call, const env::CommandOptions& options) {
    std::stop_source wait;
    std::stop_callback forward(options.cancel, [&] { wait.request_stop(); });
    std::atomic<bool> overdue{false};
    std::optional<CallWatcher> backstop;
    if (call.timeout > milliseconds::zero()) {
      backstop.emplace(std::stop_token{}, call.timeout + kServiceDeadlineGrace, [&](bool) {
        overdue = true;
        wait.request_stop();
      });
    }
    auto answer = api_->Exec(call, wait.get_token());
    if (backstop) backstop->Finish();
    if (answer) return answer;
    if (answer.error().code() != StatusCode::kCancelled) return answer;
    ExecAnswer ended = TALARIA_TRY(api_->EndExec(call.exec_id));
    ended.cancelled = !overdue;
    ended.timed_out = overdue;
    return ended;
  }

  // The service has no per-call timeout or cancel: at the deadline or on cancel a second
  // command kills the first one's process group, whose call then ends with its output so far.
  Result<ExecAnswer> RunEndedByUs(const ExecCall& call, const std::string& token,
                                  const env::CommandOptions& options) {
    std::optional<CallWatcher> watcher;
    if (call.timeout > milliseconds::zero() || options.cancel.stop_possible()) {
      watcher.emplace(options.cancel, call.timeout, [this, token](bool) {
        ExecCall kill;
        kill.exec_id = NewExecId();
        kill.script = env::KillRemoteShellCommandLine(state_dir_, token);
        kill.timeout = milliseconds(30'000);
        (void)api_->Exec(kill, {});
      });
    }
    ExecCall timed = call;
    timed.timeout = milliseconds::zero();
    auto answer = api_->Exec(timed, {});
    if (watcher) watcher->Finish();
    if (!answer) return answer;
    if (watcher && watcher->fired()) {
      answer->cancelled = watcher->cancelled();
      answer->timed_out = !watcher->cancelled();
    }
    return answer;
  }

  const std::unique_ptr<SandboxApi> api_;
  const std::string kind_;
  const std::string state_dir_;
  const std::string marker_;
  mutable std::mutex mu_;
  std::string cwd_;  // Guarded by mu_.
  std::mutex run_mu_;
  std::unique_ptr<RemoteJobs> jobs_;  // set once by Prepare
};

}  // namespace

Result<std::shared_ptr<env::Environment>> OpenRemoteEnvironment(std::unique_ptr<SandboxApi> api,
                                                                std::string initial_cwd) {
  if (Status created = api->Create(); !created.ok()) {
    (void)api->Destroy();  // a sandbox made but never ready is not left behind
    return Err(created);
  }
  auto env = std::make_shared<RemoteEnvironment>(std::move(api), std::move(initial_cwd));
  TALARIA_RETURN_IF_ERROR(env->Prepare());  // a failure deletes the sandbox with env
  return std::shared_ptr<env::Environment>(std::move(env));
}

}  // namespace talaria::sandboxes
