// A throwaway Docker engine for tests and benchmarks: Debian's dockerd started on a private Unix
// socket with everything it keeps (data root, exec root, its own containerd) in a fresh
// directory under /tmp, no iptables, no bridge, the vfs storage driver (works on any file
// system, needs no overlay module). Nothing is pulled: the one image, kImage, is imported from a
// root file system built here from busybox-static plus this machine's bash, pgrep, pkill and
// nohup (busybox-static has none of them) with the libraries ldd lists (the environment runs
// bash).
//
//   auto dockerd = talaria::test_support::DockerdServer::Start();
//   if (!dockerd) GTEST_SKIP() << dockerd.error().ToString();  // why it cannot run here
//   auto env = talaria::env::OpenDocker((*dockerd)->ClientOptions());
//
// Ownership: the server owns the dockerd process (and through it containerd) and its directory;
// both end with it, by PID. Thread-safety: Not thread-safe; caller synchronises.
#pragma once

#include <memory>
#include <string>

#include "talaria/base/spawn.h"
#include "talaria/base/status.h"
#include "talaria/env/environment.h"

namespace talaria::test_support {

// Empty when dockerd can be tried here (root, dockerd, containerd, runc, docker, busybox and
// bash installed); otherwise what is missing.
std::string DockerdUnavailableReason();

class DockerdServer {
 public:
  // Starts dockerd, waits up to 60 s until it answers, imports the image.
  // Errors: NotFound (a program missing or not root), Unavailable (dockerd does not come up;
  // the message carries the end of its log), Internal (directory, root file system, import).
  static Result<std::unique_ptr<DockerdServer>> Start();

  // Stop(), then removes the directory.
  ~DockerdServer();
  DockerdServer(const DockerdServer&) = delete;
  DockerdServer& operator=(const DockerdServer&) = delete;

  // "unix://<dir>/docker.sock", for docker -H.
  const std::string& host() const { return host_; }
  // The imported image: busybox applets in /bin, bash, root in /etc/passwd.
  static constexpr const char* kImage = "talaria-test:busybox";
  const std::string& dir() const { return dir_; }
  pid_t pid() const { return dockerd_.pid; }

  // This engine, the image, no network, never a pull; everything else as DockerOptions' defaults.
  env::DockerOptions ClientOptions() const;

  // SIGTERM to dockerd alone (it stops its containers and containerd), up to 20 s, then
  // SIGKILL to its group; reaps it and unmounts what it left under dir(). Idempotent.
  void Stop();

 private:
  DockerdServer() = default;

  std::string dir_;
  std::string host_;
  StartedProcess dockerd_;
};

// One server for the whole test process, started by the first call; later calls get the same
// one, or the same error. It is stopped when the process exits normally.
Result<DockerdServer*> SharedDockerd();

}  // namespace talaria::test_support
