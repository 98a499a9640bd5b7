// The sshd fixture: see sshd_server.h.
#include "support/sshd_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <thread>
#include <vector>

#include "talaria/base/subprocess.h"
#include "talaria/base/unique_fd.h"

namespace talaria::test_support {
namespace {

using namespace std::chrono_literals;

// sshd re-executes itself and so insists on being started by its absolute path.
constexpr std::string_view kSshd = "/usr/sbin/sshd";

bool InPath(std::string_view program) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "";
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    if (!dir.empty() &&
        ::access((std::string(dir) + "/" + std::string(program)).c_str(), X_OK) == 0) {
      return true;
    }
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return false;
}

bool AcceptsConnections(int port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
}

// What a non-blocking descriptor holds right now (sshd's log when it failed to start).
std::string ReadAvailable(int fd) {
  std::string out;
  char buf[512];
  for (int i = 0; i < 64; ++i) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// Whether `pid`'s network namespace accepts connections on 127.0.0.1:`port` (a thread of
// this process joins the namespace for the connect: setns applies to the calling thread only).
bool AcceptsConnectionsIn(pid_t pid, int port) {
  bool ok = false;
  std::thread([&] {
    UniqueFd ns(::open(("/proc/" + std::to_string(pid) + "/ns/net").c_str(), O_RDONLY | O_CLOEXEC));
    ok = ns && ::setns(ns.get(), CLONE_NEWNET) == 0 && AcceptsConnections(port);
  }).join();
  return ok;
}

// Network namespaces work here, and what the ProxyCommand needs is installed.
bool NetnsWorks() {
  for (const char* program : {"/usr/bin/unshare", "/usr/bin/nsenter", "/usr/bin/python3"}) {
    if (::access(program, X_OK) != 0) return false;
  }
  SpawnOptions probe;
  probe.argv = {"/usr/bin/unshare", "--net", "--", "ip", "link", "set", "lo", "up"};
  probe.timeout = 10s;
  auto r = RunProcess(probe);
  return r && r->exit_code == 0;
}

// The ProxyCommand's program: connects to $1:$2 (in the namespace nsenter put it in) and
// passes the socket to ssh over its stdout (ProxyUseFdpass).
constexpr std::string_view kFdPass = R"py(import array, socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
s.setblocking(True)
out = socket.socket(fileno=1)
out.sendmsg([b"\0"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [s.fileno()]))])
)py";

Status RunChecked(std::vector<std::string> argv) {
  SpawnOptions spawn;
  spawn.argv = std::move(argv);
  spawn.timeout = 20s;
  const std::string what = spawn.argv.front();
  auto r = RunProcess(spawn);
  if (!r) return r.error();
  if (r->exit_code != 0) {
    return InternalError(what + " exited " + std::to_string(r->exit_code) + ": " + r->stderr_text +
                         r->stdout_text);
  }
  return Status();
}

}  // namespace

std::string SshdUnavailableReason() {
  if (::access(std::string(kSshd).c_str(), X_OK) != 0) {
    return std::string(kSshd) + " is not installed (openssh-server)";
  }
  for (const char* program : {"ssh", "ssh-keygen"}) {
    if (!InPath(program)) return std::string(program) + " is not in PATH (openssh-client)";
  }
  return "";
}

int UnusedLoopbackPort() {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return -1;
  socklen_t len = sizeof addr;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  return ntohs(addr.sin_port);
}

Result<std::unique_ptr<SshdServer>> SshdServer::Start(SshdServerOptions options) {
  if (std::string reason = SshdUnavailableReason(); !reason.empty()) {
    return Err(NotFoundError(reason));
  }
  // Owned from here on: an early return removes what was made so far.
  std::unique_ptr<SshdServer> server(new SshdServer());
  std::string tmpl = "/tmp/tssh-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    return Err(InternalError("mkdtemp " + tmpl + ": " + std::strerror(errno)));
  }
  std::error_code ec;
  server->dir_ = std::filesystem::canonical(tmpl, ec).string();
  if (ec) server->dir_ = tmpl;
  const std::string& dir = server->dir_;
  if (!std::filesystem::create_directories(dir + "/work", ec)) {
    return Err(InternalError("cannot create " + dir + "/work: " + ec.message()));
  }
  for (const char* key : {"host_key", "client_key", "other_key"}) {
    TALARIA_RETURN_IF_ERROR(
        RunChecked({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", dir + "/" + key}));
  }
  if (!std::filesystem::copy_file(dir + "/client_key.pub", dir + "/authorized_keys", ec)) {
    return Err(InternalError("cannot write authorized_keys: " + ec.message()));
  }
  server->port_ = UnusedLoopbackPort();
  if (server->port_ <= 0) return Err(InternalError("no free loopback port"));
  {
    std::ofstream config(dir + "/sshd_config");
    config << "ListenAddress 127.0.0.1\n"
           << "Port " << server->port_ << "\n"
           << "HostKey " << dir << "/host_key\n"
           << "AuthorizedKeysFile " << dir << "/authorized_keys\n"
           << "PidFile " << dir << "/sshd.pid\n"
           << "StrictModes no\nUsePAM no\nPermitRootLogin yes\nPasswordAuthentication no\n"
           << "KbdInteractiveAuthentication no\nLogLevel ERROR\n"
           // bash sources ~/.bashrc for commands sshd starts unless SHLVL says it is nested;
           // this machine's root .bashrc (pyenv init) takes over a second.
           << "SetEnv SHLVL=1\n";
    if (!config.flush()) return Err(InternalError("cannot write " + dir + "/sshd_config"));
  }
  ::mkdir("/run/sshd", 0755);  // the privilege separation directory; may exist already
  SpawnOptions spawn;
  spawn.argv = {std::string(kSshd), "-D", "-e", "-f", dir + "/sshd_config"};
  if (options.own_network && NetnsWorks()) {
    std::ofstream(dir + "/fdpass.py") << kFdPass;
    // unshare execs the shell, which execs sshd: the pid is sshd's, in the new namespace.
    spawn.argv.insert(spawn.argv.begin(), {"/usr/bin/unshare", "--net", "--", "/bin/sh", "-c",
                                           "ip link set lo up && exec \"$@\"", "sh"});
    server->own_network_ = true;
  }
  server->sshd_ = TALARIA_TRY(StartProcess(spawn, {}));
  for (int i = 0; i < 250; ++i) {
    if (server->own_network_ ? AcceptsConnectionsIn(server->sshd_.pid, server->port_)
                             : AcceptsConnections(server->port_)) {
      return server;
    }
    std::this_thread::sleep_for(20ms);
  }
  return Err(UnavailableError("sshd does not listen on 127.0.0.1:" + std::to_string(server->port_) +
                              ": " + ReadAvailable(server->sshd_.output.get())));
}

SshdServer::~SshdServer() {
  Stop();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

Status SshdServer::AuthorizeKey(const std::string& public_key_file) {
  std::ifstream in(public_key_file);
  std::string key;
  if (!std::getline(in, key) || key.empty()) {
    return InternalError("cannot read a public key from " + public_key_file);
  }
  std::ofstream out(dir_ + "/authorized_keys", std::ios::app);
  out << key << "\n";
  if (!out.flush()) return InternalError("cannot append to " + dir_ + "/authorized_keys");
  return Status();
}

env::SshOptions SshdServer::ClientOptions() const {
  env::SshOptions o;
  o.host = "127.0.0.1";
  o.port = port_;
  o.identity_file = dir_ + "/client_key";
  o.known_hosts_file = dir_ + "/known_hosts";
  o.control_dir = dir_ + "/ctl";
  o.initial_cwd = work_dir();
  o.connect_timeout = std::chrono::seconds(5);
  if (own_network_) {
    o.extra_options = {"ProxyCommand=/usr/bin/nsenter --net=/proc/" + std::to_string(sshd_.pid) +
                           "/ns/net -- /usr/bin/python3 " + dir_ + "/fdpass.py %h %p",
                       "ProxyUseFdpass=yes"};
  }
  return o;
}

Status SshdServer::SetNetworkUp(bool up) {
  if (!own_network_ || sshd_.pid <= 0) {
    return FailedPreconditionError("sshd has no network namespace of its own");
  }
  return RunChecked({"/usr/bin/nsenter", "--net=/proc/" + std::to_string(sshd_.pid) + "/ns/net",
                     "--", "ip", "link", "set", "lo", up ? "up" : "down"});
}

void SshdServer::Stop() {
  if (sshd_.pid <= 0) return;
  TerminateProcessGroup(sshd_.pid, sshd_.pidfd.get(), 1s);
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(sshd_.pid), &info, WEXITED);
  sshd_.pid = -1;
  sshd_.pidfd.reset();
  sshd_.output.reset();
}

}  // namespace talaria::test_support
