// A local Chromium for one task: started headless on demand with a profile directory of its
// own, in a process group of its own, talking CDP over --remote-debugging-pipe. The pipe is the
// lifeline: when talaria exits or is killed its end closes and the browser shuts itself down,
// so no Chromium outlives talaria. Kill() (and the destructor) ends the whole group at once.
//
// Thread-safety: Kill may be called from any thread; the rest from the owner.
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/browser/cdp_transport.h"

namespace talaria::browser {

// Every Chromium talaria starts carries this variable (inherited by its zygote, renderers and
// helpers), valued "<talaria pid>:<profile dir>", so a test or a reaper can find them all.
inline constexpr char kOwnerVariable[] = "TALARIA_BROWSER_OWNER";

// $TALARIA_CHROMIUM, then Debian's chromium and headless shell, then `chromium`,
// `chromium-browser`, `google-chrome` on PATH. "" when there is none.
std::string FindChromium();

struct ChromiumOptions {
  std::string executable;               // empty: FindChromium()
  std::vector<std::string> extra_args;  // appended (a window size)
  // How the browser reaches the network (EgressProxy::ChromiumArgs); empty: --no-proxy-server.
  std::vector<std::string> network_args;
};

class ChromiumProcess {
 public:
  // FailedPrecondition when no Chromium is installed; Unavailable when it does not start.
  static Result<std::unique_ptr<ChromiumProcess>> Launch(const ChromiumOptions& options);
  ~ChromiumProcess();
  ChromiumProcess(const ChromiumProcess&) = delete;
  ChromiumProcess& operator=(const ChromiumProcess&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& profile_dir() const { return profile_dir_; }
  // The CDP connection (once; null after).
  std::unique_ptr<CdpTransport> TakeTransport() { return std::move(transport_); }
  // SIGKILL to the group, reaps the browser, removes the profile directory. Idempotent.
  void Kill();

 private:
  ChromiumProcess() = default;
  std::mutex mu_;
  pid_t pid_ = -1;
  bool killed_ = false;
  std::string profile_dir_;
  std::unique_ptr<CdpTransport> transport_;
};

}  // namespace talaria::browser
