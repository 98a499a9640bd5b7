// A throwaway OpenSSH server for tests and benchmarks: sshd started as the current user on a
// free 127.0.0.1 port, with fresh host and client keys in a private directory under /tmp (short,
// so ControlPath sockets fit in a sockaddr_un). The "remote" machine is this one, so a test can
// look at the remote side directly (processes, files, TCP connections).
// With own_network (where the machine allows: root, unshare, nsenter, ip, python3), sshd runs in
// a network namespace of its own, a host with its own loopback: clients reach it through a
// ProxyCommand that connects inside the namespace and hands ssh the socket (ProxyUseFdpass, no
// relay), and the test can cut its network (SetNetworkUp) as a failing host's.
//
//   auto sshd = talaria::test_support::SshdServer::Start();
//   if (!sshd) return ...;  // (*sshd)'s error says why
//   auto env = talaria::env::OpenSsh((*sshd)->ClientOptions());
//
// Ownership: the server owns the sshd process and its directory; both end with it.
// Thread-safety: Not thread-safe; caller synchronises.
#pragma once

#include <memory>
#include <string>

#include "talaria/base/spawn.h"
#include "talaria/base/status.h"
#include "talaria/env/environment.h"

namespace talaria::test_support {

// Empty when sshd, ssh and ssh-keygen are installed; otherwise which one is missing (the reason
// a test skips).
std::string SshdUnavailableReason();

// A 127.0.0.1 port nobody listens on (bound, then released); -1 if none could be bound.
int UnusedLoopbackPort();

struct SshdServerOptions {
  bool own_network = false;  // a network namespace of its own, where the machine allows
};

class SshdServer {
 public:
  // Makes the directory, generates the keys (host, client, and an "other" client key sshd does
  // not accept), writes sshd_config and starts `sshd -D` listening on 127.0.0.1 only, then waits
  // up to 5 s until it accepts connections.
  // Errors: NotFound (no sshd or ssh-keygen), Internal (directory, keys or config),
  // Unavailable (sshd does not listen; the message carries its output).
  static Result<std::unique_ptr<SshdServer>> Start(SshdServerOptions options = {});

  // Stop(), then removes the directory.
  ~SshdServer();
  SshdServer(const SshdServer&) = delete;
  SshdServer& operator=(const SshdServer&) = delete;

  int port() const { return port_; }
  // Whether sshd got a network namespace of its own (false: this machine's loopback).
  bool own_network() const { return own_network_; }
  // Brings the namespace's loopback down (no connection in or out, established ones stall) or
  // up again. Errors: FailedPrecondition (no namespace of its own), Internal (ip failed).
  Status SetNetworkUp(bool up);
  // The private directory: keys, sshd_config, known_hosts, the work and control directories.
  const std::string& dir() const { return dir_; }
  // An empty directory sessions start in.
  std::string work_dir() const { return dir_ + "/work"; }
  // A key sshd does not accept.
  std::string other_key() const { return dir_ + "/other_key"; }
  // The private key sshd accepts (ClientOptions' identity_file).
  std::string client_key() const { return dir_ + "/client_key"; }

  // Accepts the key whose public half is `public_key_file` as well (several servers that one
  // identity logs in to, as a pool's hosts are). Errors: Internal (unreadable or unwritable).
  Status AuthorizeKey(const std::string& public_key_file);

  // Logs in as the current user with the accepted client key, this server's own known_hosts
  // file and control sockets under dir()/ctl, starting in work_dir(), 5 s connect timeout.
  env::SshOptions ClientOptions() const;

  // Ends the listening sshd and reaps it; connections it already serves stay up (their sshd
  // processes have sessions of their own). Idempotent.
  void Stop();

 private:
  SshdServer() = default;

  std::string dir_;
  int port_ = -1;
  bool own_network_ = false;
  StartedProcess sshd_;
};

}  // namespace talaria::test_support
