// A remote machine over OpenSSH. Every command is one `ssh` invocation over a multiplexed
// connection (ControlMaster=auto, ControlPersist): the first invocation (OpenSsh's check)
// starts the master, later ones reuse it, so a command costs a local ssh start and a new channel
// rather than a TCP connection and a key exchange.
//
// The remote side of a command is a bash wrapper (kRunScript), exec'd by the login shell so that
// it leads the process group sshd created for the session:
//   - the command runs in a subshell started as a job in its own process group, with stderr
//     merged into stdout (one interleaved stream, in order); the subshell restores the saved
//     exports, cd's to the session cwd, evals the command and, on EXIT, saves its exports and
//     cwd to the session's private remote state directory (the local shell session's scheme);
//   - the wrapper records "<run id> <its pgid> <the job's pgid>" there, so a timed-out or
//     cancelled command can be killed remotely (killing the local ssh only closes the channel;
//     a remote `sleep 30` would live on), and kills what the command left holding the output;
//   - it then reports the new cwd on the ssh channel's stderr as "<marker><cwd>", a line no
//     command output can reach (the command's stderr went to stdout), so stdout is exactly the
//     command's output, bounded like a local command's, and no second round trip is needed.
//     The report also tells a remote exit status 255 from ssh's own failure (also 255).
// The remote login shell must be POSIX (sh, bash, dash, zsh, ksh); it only execs bash.
// Thread-safety: thread-safe; Run calls are serialized, Start and cwd() need no lock order.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "env/remote_script_session.h"
#include "env/remote_shell_scripts.h"
#include "env/ssh_command.h"
#include "talaria/base/paths.h"
#include "talaria/base/strings.h"
#include "talaria/base/subprocess.h"
#include "talaria/env/environment.h"

namespace talaria::env {
namespace {

using namespace std::chrono_literals;

// The remote command line: the login shell (any POSIX shell) execs bash on `script`.
std::string RemoteCommand(std::string_view script, const std::vector<std::string>& args) {
  std::vector<std::string> words = {std::string(script), "talaria"};
  words.insert(words.end(), args.begin(), args.end());
  return "exec bash --noprofile --norc -c " + ShellJoin(words);
}

// The ssh client in PATH, as an absolute path; empty when there is none.
std::string FindSsh() {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/bin:/bin";
  while (true) {
    const size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/ssh";
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) return "";
    dirs.remove_prefix(colon + 1);
  }
}

// sshd refuses more than MaxSessions (10 by default) channels on one connection, and every
// command is a channel (a refused one makes ssh fall back to a connection of its own: a key
// exchange per command); so at most this many environments of this process share one master
// connection, and more open further masters to the same host ("<name>-<n>.sock").
constexpr int kSessionsPerConnection = 8;

// Environments of this process sharing one master connection: the last one to go closes it
// (`ssh -O exit` would cut the others' commands off). Also serializes the first connection to a
// host: sessions opened at once would otherwise each start a master of their own, a burst of key
// exchanges that sshd's MaxStartups answers by dropping connections.
class ControlMasterUsers {
 public:
  // The control path of the connection a new environment joins (`base` or a further shard of
  // it), counted as used from now on.
  static std::string Acquire(const std::string& base) {
    std::lock_guard lock(Mu());
    for (int shard = 0;; ++shard) {
      std::string path = ShardPath(base, shard);
      int& users = Counts()[path];
      if (users < kSessionsPerConnection) {
        ++users;
        return path;
      }
    }
  }
  // True when no environment of this process uses the connection any more.
  static bool Release(const std::string& control_path) {
    std::lock_guard lock(Mu());
    auto it = Counts().find(control_path);
    if (it == Counts().end() || --it->second > 0) return false;
    Counts().erase(it);
    return true;
  }
  // Held while an environment makes its first connection through `control_path`.
  static std::shared_ptr<std::mutex> ConnectLock(const std::string& control_path) {
    std::lock_guard lock(Mu());
    std::shared_ptr<std::mutex>& m = ConnectLocks()[control_path];
    if (!m) m = std::make_shared<std::mutex>();
    return m;
  }
  // The longest control path Acquire may return for `base` (checked against sockaddr_un).
  static std::string LongestPath(const std::string& base) { return ShardPath(base, 999); }

 private:
  static std::string ShardPath(const std::string& base, int shard) {
    if (shard == 0) return base;
    const size_t dot = base.rfind(".sock");
    const std::string stem = dot == std::string::npos ? base : base.substr(0, dot);
    return stem + "-" + std::to_string(shard) + ".sock";
  }
  static std::mutex& Mu() {
    static std::mutex mu;
    return mu;
  }
  static std::map<std::string, int>& Counts() {  // Guarded by Mu().
    static std::map<std::string, int> counts;
    return counts;
  }
  static std::map<std::string, std::shared_ptr<std::mutex>>& ConnectLocks() {  // Guarded by Mu().
    static std::map<std::string, std::shared_ptr<std::mutex>> locks;
    return locks;
  }
};

enum class Tty { kNo, kYes };

class SshEnvironment final : public Environment {
 public:
  SshEnvironment(SshOptions options, std::string ssh, std::string control_path)
      : options_(std::move(options)),
        ssh_(std::move(ssh)),
        control_path_(std::move(control_path)),
        base_argv_(SshOptionArgv(options_, control_path_)),
        destination_(SshDestination(options_)),
        session_(
            [this](std::string_view script, const std::vector<std::string>& args, bool tty) {
              return Argv(RemoteCommand(script, args), tty ? Tty::kYes : Tty::kNo);
            },
            std::chrono::duration_cast<std::chrono::milliseconds>(options_.connect_timeout) + 5s) {}

  ~SshEnvironment() override {
    // Best effort: the remote state and jobs, then the master connection.
    session_.Cleanup();
    if (ControlMasterUsers::Release(control_path_)) {
      SpawnOptions exit;
      exit.argv = {ssh_};
      exit.argv.insert(exit.argv.end(), base_argv_.begin(), base_argv_.end());
      exit.argv.insert(exit.argv.end(), {"-O", "exit", destination_});
      exit.timeout = 5s;
      (void)RunProcess(exit);
    }
  }

  SshEnvironment(const SshEnvironment&) = delete;
  SshEnvironment& operator=(const SshEnvironment&) = delete;

  // Checks the connection (starting the master) and creates the remote state directory.
  Status Connect() {
    const auto timeout =
        std::chrono::duration_cast<std::chrono::milliseconds>(options_.connect_timeout) + 15s;
    const InitAnswer answer = TALARIA_TRY(session_.Init(options_.initial_cwd, timeout));
    if (answer.ready) return Status::Ok();
    const ProcessResult& r = answer.result;
    const std::string where = Where();
    if (r.timed_out) {
      return UnavailableError("ssh " + where + ": no answer within " +
                              std::to_string(timeout.count() / 1000) + " s");
    }
    const std::string err = std::string(Trim(r.stderr_text));
    if (r.exit_code == kExitNoInitialDir) {
      return NotFoundError("ssh " + where + ": remote working directory '" + options_.initial_cwd +
                           "' does not exist");
    }
    if (r.exit_code == kExitNoStateDir) {
      return UnavailableError("ssh " + where + ": cannot create a remote state directory: " + err);
    }
    if (r.exit_code == 127) {
      return UnavailableError("ssh " + where + ": the remote side has no bash: " + err);
    }
    return UnavailableError("ssh " + where + " failed (exit " + std::to_string(r.exit_code) +
                            "): " + (err.empty() ? std::string("no message") : err));
  }

  std::string_view kind() const override { return "ssh"; }
  bool RunsScriptsRemotely() const override { return true; }
  std::string cwd() const override { return session_.cwd(); }

  Result<CommandOutcome> Run(std::string_view command, const CommandOptions& options) override {
    return session_.Run(
        command, options,
        [this](int ssh_exit, const std::string& ssh_stderr,
               CommandOutcome out) -> Result<CommandOutcome> {
          // No cwd report: ssh itself failed (255; a command's own 255 comes with a report), or
          // the remote side ended before reporting (killed, or no bash): show what it said.
          if (ssh_exit == 255) {
            const std::string err = std::string(Trim(ssh_stderr));
            return Err(UnavailableError("ssh " + Where() + " failed: " +
                                        (err.empty() ? std::string("connection lost") : err)));
          }
          out.output += ssh_stderr;
          return out;
        });
  }

  Result<StartedProcess> Start(std::string_view command, const CommandOptions& options,
                               const StartOptions& start) override {
    return session_.Start(command, options, start);
  }

 private:
  std::vector<std::string> Argv(const std::string& remote_command, Tty tty) const {
    std::vector<std::string> argv = {ssh_};
    argv.insert(argv.end(), base_argv_.begin(), base_argv_.end());
    if (tty == Tty::kYes) argv.emplace_back("-tt");
    argv.insert(argv.end(), {destination_, "--", remote_command});
    return argv;
  }

  std::string Where() const { return destination_ + " port " + std::to_string(options_.port); }

  const SshOptions options_;
  const std::string ssh_;
  const std::string control_path_;
  const std::vector<std::string> base_argv_;
  const std::string destination_;
  RemoteScriptSession session_;
};

}  // namespace

Result<std::shared_ptr<Environment>> OpenSsh(SshOptions options) {
  const std::string control_dir =
      options.control_dir.empty() ? TalariaHome() + "/ssh" : options.control_dir;
  const std::string base_path =
      control_dir + "/" + ControlSocketName(options.user, options.host, options.port);
  TALARIA_RETURN_IF_ERROR(ValidateSshOptions(options, ControlMasterUsers::LongestPath(base_path)));
  std::string ssh = FindSsh();
  if (ssh.empty()) return Err(NotFoundError("no ssh client: 'ssh' is not in PATH"));
  std::error_code ec;
  std::filesystem::create_directories(control_dir, ec);
  if (ec || ::chmod(control_dir.c_str(), 0700) != 0) {
    return Err(InternalError("cannot create the ssh control directory " + control_dir));
  }
  // Counted from here on; the environment releases it (and closes the master when last).
  const std::string control_path = ControlMasterUsers::Acquire(base_path);
  auto env = std::make_shared<SshEnvironment>(std::move(options), std::move(ssh), control_path);
  {
    const std::shared_ptr<std::mutex> connecting = ControlMasterUsers::ConnectLock(control_path);
    std::lock_guard lock(*connecting);
    TALARIA_RETURN_IF_ERROR(env->Connect());
  }
  return std::shared_ptr<Environment>(std::move(env));
}

}  // namespace talaria::env
