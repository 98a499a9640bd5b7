// The dockerd fixture: see dockerd_server.h.
#include "support/dockerd_server.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string_view>
#include <thread>
#include <vector>

#include "talaria/base/subprocess.h"

namespace talaria::test_support {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kDockerd = "/usr/sbin/dockerd";

// The first executable `program` in PATH; empty if none.
std::string FindInPath(std::string_view program) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "/usr/sbin:/usr/bin:/sbin:/bin";
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string candidate = std::string(rest.substr(0, colon)) + "/" + std::string(program);
    if (colon != 0 && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return "";
}

Result<ProcessResult> Run(std::vector<std::string> argv, std::chrono::milliseconds timeout = 60s) {
  SpawnOptions spawn;
  spawn.argv = std::move(argv);
  spawn.timeout = timeout;
  return RunProcess(spawn);
}

Status RunChecked(std::vector<std::string> argv, std::chrono::milliseconds timeout = 60s) {
  const std::string what = argv.front() + (argv.size() > 1 ? " " + argv[1] : "");
  ProcessResult r = TALARIA_TRY(Run(std::move(argv), timeout));
  if (r.exit_code != 0 || r.timed_out) {
    return InternalError(what + " exited " + std::to_string(r.exit_code) + ": " + r.stderr_text +
                         r.stdout_text);
  }
  return Status();
}

// Copies `file` to the same path under `root`, with the shared libraries ldd lists for it.
Status CopyWithLibraries(const std::string& file, const std::string& root) {
  std::vector<std::string> paths = {file};
  if (auto ldd = Run({"ldd", file}); ldd && ldd->exit_code == 0) {
    std::istringstream lines(ldd->stdout_text);
    std::string line;
    while (std::getline(lines, line)) {
      // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "/lib64/ld-linux... (0x...)".
      const size_t slash = line.find('/');
      if (slash == std::string::npos) continue;
      paths.push_back(line.substr(slash, line.find(' ', slash) - slash));
    }
  }
  for (const std::string& path : paths) {
    const std::filesystem::path target = root + path;
    std::error_code ec;
    std::filesystem::create_directories(target.parent_path(), ec);
    std::filesystem::copy_file(path, target, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) return InternalError("cannot copy " + path + " into the image: " + ec.message());
  }
  return Status();
}

// busybox with every applet linked in /bin, bash, pgrep/pkill/nohup, and root in the password
// database (bash's `~root`). Symlinks to busybox keep applet names in the command lines pgrep sees.
Status BuildRootFilesystem(const std::string& root, const std::string& busybox,
                           const std::string& bash) {
  std::error_code ec;
  for (const char* d : {"/bin", "/etc", "/root", "/tmp", "/dev", "/proc", "/sys"}) {
    std::filesystem::create_directories(root + d, ec);
    if (ec) return InternalError("cannot create " + root + d + ": " + ec.message());
  }
  TALARIA_RETURN_IF_ERROR(CopyWithLibraries(busybox, root));
  std::filesystem::rename(root + busybox, root + "/bin/busybox", ec);
  TALARIA_RETURN_IF_ERROR(CopyWithLibraries(bash, root));
  if (bash != "/bin/bash") std::filesystem::rename(root + bash, root + "/bin/bash", ec);
  if (ec) return InternalError("cannot place busybox and bash in the image: " + ec.message());
  ProcessResult list = TALARIA_TRY(Run({root + "/bin/busybox", "--list"}));
  std::istringstream applets(list.stdout_text);
  std::string applet;
  while (std::getline(applets, applet)) {
    if (applet.empty() || applet.find('/') != std::string::npos) continue;
    const std::string link = root + "/bin/" + applet;
    if (!std::filesystem::exists(link, ec)) std::filesystem::create_symlink("busybox", link, ec);
  }
  // What busybox-static lacks and the tests use: this machine's copies, with their libraries.
  for (const char* program : {"pgrep", "pkill", "nohup"}) {
    if (const std::string path = FindInPath(program); !path.empty()) {
      TALARIA_RETURN_IF_ERROR(CopyWithLibraries(path, root));
    }
  }
  std::ofstream(root + "/etc/passwd") << "root:x:0:0:root:/root:/bin/bash\n";
  std::ofstream(root + "/etc/group") << "root:x:0:\n";
  return Status();
}

std::string Tail(const std::string& path, size_t bytes) {
  std::ifstream in(path);
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

// Mount points under `dir` (deepest first), from this process's mount table.
std::vector<std::string> MountsUnder(const std::string& dir) {
  std::vector<std::string> mounts;
  std::ifstream table("/proc/self/mountinfo");
  std::string line;
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, point;
    fields >> id >> parent >> devno >> root >> point;
    if (point.rfind(dir + "/", 0) == 0) mounts.push_back(point);
  }
  std::sort(mounts.begin(), mounts.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return mounts;
}

}  // namespace

std::string DockerdUnavailableReason() {
  if (::geteuid() != 0) return "dockerd needs root here (no rootless setup)";
  if (::access(std::string(kDockerd).c_str(), X_OK) != 0) return "dockerd is not installed";
  for (const char* program : {"docker", "containerd", "runc", "busybox", "bash", "tar", "ldd"}) {
    if (FindInPath(program).empty()) return std::string(program) + " is not installed";
  }
  return "";
}

Result<std::unique_ptr<DockerdServer>> DockerdServer::Start() {
  if (std::string reason = DockerdUnavailableReason(); !reason.empty()) {
    return Err(NotFoundError(reason));
  }
  // Owned from here on: an early return stops what was started and removes the directory.
  std::unique_ptr<DockerdServer> server(new DockerdServer());
  std::string tmpl = "/tmp/tdkr-XXXXXX";  // short: the sockets' paths must fit a sockaddr_un
  if (::mkdtemp(tmpl.data()) == nullptr) {
    return Err(InternalError("mkdtemp " + tmpl + ": " + std::strerror(errno)));
  }
  server->dir_ = tmpl;
  const std::string& dir = server->dir_;
  server->host_ = "unix://" + dir + "/docker.sock";
  // No /etc/docker/daemon.json of this machine's: an empty configuration of our own.
  std::ofstream(dir + "/daemon.json") << "{}\n";
  const std::string log = dir + "/dockerd.log";
  SpawnOptions spawn;
  spawn.argv = {"sh",
                "-c",
                "exec \"$0\" \"$@\" >\"$LOG\" 2>&1",
                std::string(kDockerd),
                "--config-file",
                dir + "/daemon.json",
                "--host",
                server->host_,
                "--data-root",
                dir + "/data",
                "--exec-root",
                dir + "/x",
                "--pidfile",
                dir + "/dockerd.pid",
                "--storage-driver=vfs",
                "--iptables=false",
                "--ip-masq=false",
                "--bridge=none",
                "--userland-proxy=false",
                "--log-level=warn"};
  spawn.env = {"LOG=" + log, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"};
  server->dockerd_ = TALARIA_TRY(StartProcess(spawn, {}));

  const std::string docker = FindInPath("docker");
  bool up = false;
  for (int i = 0; i < 300 && !up; ++i) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(server->dockerd_.pid), &info,
                 WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == server->dockerd_.pid) {
      return Err(UnavailableError("dockerd exited at start: " + Tail(log, 1500)));
    }
    auto info_run = Run({docker, "-H", server->host_, "info", "--format", "{{.ServerVersion}}"});
    up = info_run && info_run->exit_code == 0;
    if (!up) std::this_thread::sleep_for(200ms);
  }
  if (!up) return Err(UnavailableError("dockerd does not answer within 60 s: " + Tail(log, 1500)));

  const std::string root = dir + "/rootfs";
  TALARIA_RETURN_IF_ERROR(BuildRootFilesystem(root, FindInPath("busybox"), FindInPath("bash")));
  TALARIA_RETURN_IF_ERROR(RunChecked({"tar", "-C", root, "-cf", dir + "/rootfs.tar", "."}));
  TALARIA_RETURN_IF_ERROR(
      RunChecked({docker, "-H", server->host_, "import", dir + "/rootfs.tar", kImage}, 120s));
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
  std::filesystem::remove(dir + "/rootfs.tar", ec);
  return server;
}

DockerdServer::~DockerdServer() {
  Stop();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

env::DockerOptions DockerdServer::ClientOptions() const {
  env::DockerOptions o;
  o.image = kImage;
  o.host = host_;
  o.network = "none";
  o.pull = "never";
  return o;
}

Result<DockerdServer*> SharedDockerd() {
  static std::mutex mu;
  static std::unique_ptr<DockerdServer> server;  // Guarded by mu.
  static Status failed;                          // Guarded by mu.
  static bool tried = false;                     // Guarded by mu.
  std::lock_guard lock(mu);
  if (!tried) {
    tried = true;
    auto started = DockerdServer::Start();
    if (started) {
      server = std::move(*started);
    } else {
      failed = started.error();
    }
  }
  if (!server) return Err(failed);
  return server.get();
}

void DockerdServer::Stop() {
  if (dockerd_.pid <= 0) return;
  // dockerd alone first: signalled with its group, containerd would go before dockerd could
  // stop the containers through it.
  ::kill(dockerd_.pid, SIGTERM);
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < until) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(dockerd_.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == dockerd_.pid) {
      break;
    }
    std::this_thread::sleep_for(50ms);
  }
  TerminateProcessGroup(dockerd_.pid, dockerd_.pidfd.get(), 1s);
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(dockerd_.pid), &info, WEXITED);
  dockerd_.pid = -1;
  dockerd_.pidfd.reset();
  dockerd_.output.reset();
  for (const std::string& point : MountsUnder(dir_)) ::umount2(point.c_str(), MNT_DETACH);
}

}  // namespace talaria::test_support
