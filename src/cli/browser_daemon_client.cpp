// browser_daemon.h, the client side: reach the task's daemon, starting it when nobody listens,
// and hand it one call.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/browser_daemon.h"
#include "cli/unix_socket.h"
#include "talaria/base/poll_timeout.h"

extern char** environ;

namespace talaria::cli {
namespace {

using std::chrono::steady_clock;
using namespace std::chrono_literals;

// How long a starter waits for its daemon's "ready" (Runtime and socket, not Chromium), and
// how long anyone waits for the start lock (a starter holds it at most that long).
constexpr auto kStartWait = 30s;
constexpr auto kLockWait = 45s;
// The daemon greets at once; a call itself is bounded by the daemon's own deadlines (navigate
// 60 s and up, browser.command_timeout), so this only catches a daemon that stopped answering.
constexpr auto kGreetingWait = 30s;
constexpr auto kCallWait = 15min;
constexpr size_t kMaxResultBytes = 256u << 20;  // screenshots travel as content blocks

std::string ErrnoText(int err) { return std::strerror(err); }

std::string OwnProgram() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return {};
  return std::string(buf, static_cast<size_t>(n));
}

std::string LogTail(const std::string& log) {
  std::ifstream in(log);
  std::stringstream all;
  all << in.rdbuf();
  std::string text = all.str();
  if (text.size() > 600) text = text.substr(text.size() - 600);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// Holds the start lock while alive.
class StartLock {
 public:
  static Result<StartLock> Take(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd) return Err(UnavailableError("cannot open " + path + ": " + ErrnoText(errno)));
    const auto give_up = steady_clock::now() + kLockWait;
    while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) {
        return Err(UnavailableError("cannot lock " + path + ": " + ErrnoText(errno)));
      }
      if (steady_clock::now() >= give_up) {
        return Err(DeadlineExceededError("another talaria has held " + path + " too long"));
      }
      std::this_thread::sleep_for(10ms);
    }
    return StartLock(std::move(fd));
  }

 private:
  explicit StartLock(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;  // closing it releases the lock
};

// Spawns `talaria browser-daemon` in a session of its own and waits for its word.
Status SpawnDaemon(const BrowserDaemonPaths& paths, const ForwardOptions& options) {
  const std::string program = options.program.empty() ? OwnProgram() : options.program;
  if (program.empty()) return UnavailableError("cannot find the talaria program to start");
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return UnavailableError("pipe: " + ErrnoText(errno));
  UniqueFd ready_read(ready[0]);
  UniqueFd ready_write(ready[1]);

  std::vector<std::string> args = {program};
  if (!options.config_path.empty()) {
    args.insert(args.end(), {"--config", options.config_path});
  }
  args.insert(args.end(), {"browser-daemon", "--task", options.task, "--ready-fd", "3"});
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  // stdin/stdout never tie the daemon to whoever runs `talaria call` (a captured stdout would
  // otherwise stay open until the daemon ends); its stderr is the log.
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, paths.log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
  posix_spawn_file_actions_adddup2(&actions, ready_write.get(), 3);
  posix_spawn_file_actions_addclosefrom_np(&actions, 4);
  sigset_t empty;
  sigemptyset(&empty);
  sigset_t defaults;
  sigfillset(&defaults);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  // A session of its own: no terminal's Ctrl-C or hang-up reaches it, nor a kill of our group.
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ready_write.reset();
  if (rc != 0) return UnavailableError("cannot start " + program + ": " + ErrnoText(rc));

  std::string word;
  const auto deadline = steady_clock::now() + kStartWait;
  for (;;) {
    pollfd p{.fd = ready_read.get(), .events = POLLIN, .revents = 0};
    const int n = ::poll(&p, 1, PollTimeoutMs(steady_clock::now(), deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    char buf[512];
    const ssize_t r = ::read(ready_read.get(), buf, sizeof(buf));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    word.append(buf, static_cast<size_t>(r));
    if (word.find('\n') != std::string::npos || word.size() > 4096) break;
  }
  if (word.starts_with("ready\n")) return Status::Ok();
  // It failed or hung: it is ours to end and reap (it is still our child).
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  std::string why = word.starts_with("error: ") ? word.substr(7) : LogTail(paths.log);
  while (!why.empty() && why.back() == '\n') why.pop_back();
  if (why.empty()) why = "it did not say it was ready within 30 s";
  return UnavailableError("the browser daemon did not start: " + why);
}

// Under the start lock: when still nobody listens, clear a stale socket and start the daemon.
Status EnsureDaemon(const BrowserDaemonPaths& paths, const ForwardOptions& options) {
  const StartLock lock = TALARIA_TRY(StartLock::Take(paths.lock));
  auto probe = ConnectUnixSocket(paths.socket);
  if (probe) return Status::Ok();  // a racing first call started it while we waited
  if (probe.error().code() != StatusCode::kNotFound) return probe.error();
  struct stat st {};
  if (::lstat(paths.socket.c_str(), &st) == 0) {
    // Nobody listens: its daemon is dead (SIGKILL, a reboot). Only a socket is ours to remove.
    if (!S_ISSOCK(st.st_mode)) {
      return FailedPreconditionError(paths.socket + " exists and is not a socket");
    }
    if (::unlink(paths.socket.c_str()) != 0 && errno != ENOENT) {
      return UnavailableError("cannot remove the stale " + paths.socket + ": " + ErrnoText(errno));
    }
  }
  return SpawnDaemon(paths, options);
}

// One call over a fresh connection. NotFound: the daemon went away before it greeted us, so
// nothing ran and the caller may try again.
Result<ToolResult> Exchange(int fd, const std::string& request) {
  const PeerIdentity peer = TALARIA_TRY(PeerOf(fd));
  if (peer.uid != ::geteuid()) {
    return Err(PermissionDeniedError("the browser socket is served by uid " +
                                     std::to_string(peer.uid) + ", not us"));
  }
  auto greeting = ReceiveFrame(fd, 4096, steady_clock::now() + kGreetingWait);
  if (!greeting) {
    if (greeting.error().code() == StatusCode::kDeadlineExceeded) {
      return Err(UnavailableError("the browser daemon does not answer"));
    }
    return Err(NotFoundError("the browser daemon ended before it answered"));
  }
  auto hello = ParseJson(*greeting);
  if (!hello || !hello->is_object() ||
      JsonStringField(*hello, "daemon") != kBrowserDaemonGreeting ||
      hello->value("protocol", Json()) != Json(kBrowserDaemonProtocol)) {
    return Err(FailedPreconditionError("the browser socket speaks another protocol"));
  }
  TALARIA_RETURN_IF_ERROR(SendFrame(fd, request, steady_clock::now() + kGreetingWait));
  auto answer = ReceiveFrame(fd, kMaxResultBytes, steady_clock::now() + kCallWait);
  if (!answer) {
    return Err(UnavailableError("the browser daemon ended during the call (" +
                                answer.error().message() + "); it may have run"));
  }
  return DecodeDaemonResult(*answer);
}

}  // namespace

Result<ToolResult> ForwardBrowserCall(const ForwardOptions& options, std::string_view tool,
                                      const Json& arguments) {
  const BrowserDaemonPaths paths = TALARIA_TRY(BrowserDaemonPathsFor(options.task));
  TALARIA_RETURN_IF_ERROR(EnsurePrivateDirectory(paths.dir));
  const std::string request = EncodeDaemonRequest({.tool = std::string(tool),
                                                   .arguments = arguments,
                                                   .config = options.config_path,
                                                   .env = BrowserEnvironmentDigest()});
  Status last = UnavailableError("no attempt");
  // A daemon may be ending (idle, closed) just as we connect; each retry finds it gone and
  // starts a new one.
  for (int attempt = 0; attempt < 4; ++attempt) {
    auto conn = ConnectUnixSocket(paths.socket);
    if (!conn) {
      if (conn.error().code() != StatusCode::kNotFound) return Err(conn.error());
      last = EnsureDaemon(paths, options);
      if (!last.ok()) return Err(last);
      continue;
    }
    auto result = Exchange(conn->get(), request);
    if (result || result.error().code() != StatusCode::kNotFound) return result;
    last = result.error();
  }
  return Err(UnavailableError("cannot reach the browser daemon of task " + options.task + ": " +
                              last.message() + " (log: " + paths.log + ")"));
}

}  // namespace talaria::cli
