// ChromiumProcess (chromium_process.h).
#include "browser/chromium_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "talaria/base/unique_fd.h"

extern char** environ;

namespace talaria::browser {
namespace {

bool Executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

std::string OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string p = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::string candidate = p.substr(start, end - start) + "/" + name;
    if (end > start && Executable(candidate)) return candidate;
    start = end + 1;
  }
  return "";
}

// A descriptor moved above the range posix_spawn's dup2s write to (3 and 4), close-on-exec.
Result<UniqueFd> High(int fd) {
  UniqueFd owned(fd);
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
  if (moved < 0) return Err(UnavailableError(std::string("fcntl: ") + std::strerror(errno)));
  return UniqueFd(moved);
}

std::string TempRoot() {
  const char* t = std::getenv("TMPDIR");
  return t != nullptr && *t != '\0' ? t : "/tmp";
}

constexpr std::string_view kProfilePrefix = "talaria-chromium-";
// DeferRendererTasksAfterInput holds a page's timers and posted messages back until the frame
// after an input is drawn (~12 ms here): the wait after an action, which lets the work a
// handler queued run before it ends, would pay that on every click, key and typed text.
constexpr const char* kChromiumDisabledFeatures =
    "--disable-features=Translate,MediaRouter,OptimizationHints,DeferRendererTasksAfterInput";

// Profiles of talaria processes that died without cleaning up (SIGKILL): their browsers are
// gone with them (the pipe), so the directory is garbage. A live owner's profile is kept.
void SweepDeadProfiles(const std::string& root) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = e.path().filename();
    if (!name.starts_with(kProfilePrefix)) continue;
    std::ifstream owner_file(e.path() / "talaria-owner");
    long owner = 0;
    if (!(owner_file >> owner) || owner <= 0) continue;  // not ours, or still being set up
    if (::kill(static_cast<pid_t>(owner), 0) == 0 || errno == EPERM) continue;
    std::filesystem::remove_all(e.path(), ec);
  }
}

}  // namespace

std::string FindChromium() {
  if (const char* env = std::getenv("TALARIA_CHROMIUM"); env != nullptr && *env != '\0') {
    return Executable(env) ? env : "";
  }
  // Debian's /usr/bin/chromium is a shell wrapper; the binary behind it starts faster.
  for (const char* p : {"/usr/lib/chromium/chromium", "/usr/lib/chromium/chrome-headless-shell",
                        "/usr/lib/chromium/headless_shell"}) {
    if (Executable(p)) return p;
  }
  for (const char* n : {"chromium", "chromium-browser", "google-chrome", "chrome"}) {
    if (std::string found = OnPath(n); !found.empty()) return found;
  }
  return "";
}

Result<std::unique_ptr<ChromiumProcess>> ChromiumProcess::Launch(const ChromiumOptions& options) {
  const std::string exe = options.executable.empty() ? FindChromium() : options.executable;
  if (exe.empty()) {
    return Err(FailedPreconditionError(
        "no Chromium found: install Debian's `chromium` (make deps) or set TALARIA_CHROMIUM"));
  }
  std::unique_ptr<ChromiumProcess> proc(new ChromiumProcess());
  SweepDeadProfiles(TempRoot());
  std::string tmpl = TempRoot() + "/" + std::string(kProfilePrefix) + "XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    return Err(UnavailableError("cannot create a browser profile directory: " +
                                std::string(std::strerror(errno))));
  }
  proc->profile_dir_ = tmpl;
  std::ofstream(proc->profile_dir_ + "/talaria-owner") << ::getpid() << "\n";

  int to_browser[2], from_browser[2];
  if (::pipe2(to_browser, O_CLOEXEC) != 0) {
    return Err(UnavailableError(std::string("pipe: ") + std::strerror(errno)));
  }
  auto to_r = TALARIA_TRY(High(to_browser[0]));
  auto to_w = TALARIA_TRY(High(to_browser[1]));
  if (::pipe2(from_browser, O_CLOEXEC) != 0) {
    return Err(UnavailableError(std::string("pipe: ") + std::strerror(errno)));
  }
  auto from_r = TALARIA_TRY(High(from_browser[0]));
  auto from_w = TALARIA_TRY(High(from_browser[1]));

  std::vector<std::string> args = {exe,
                                   "--headless=new",
                                   "--remote-debugging-pipe",
                                   "--user-data-dir=" + proc->profile_dir_,
                                   "--no-first-run",
                                   "--no-default-browser-check",
                                   "--disable-gpu",
                                   "--disable-dev-shm-usage",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--disable-extensions",
                                   "--disable-default-apps",
                                   "--disable-breakpad",
                                   kChromiumDisabledFeatures,
                                   "--metrics-recording-only",
                                   "--password-store=basic",
                                   "--use-mock-keychain",
                                   "--mute-audio",
                                   "--hide-scrollbars",
                                   "--window-size=1280,800"};
  if (options.network_args.empty()) args.emplace_back("--no-proxy-server");
  for (const std::string& a : options.network_args) args.push_back(a);
  // Chromium refuses to run its sandbox as root; Debian's wrapper adds the same flag.
  if (::geteuid() == 0) args.emplace_back("--no-sandbox");
  for (const std::string& a : options.extra_args) args.push_back(a);
  args.emplace_back("about:blank");
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::vector<std::string> env_store;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "TALARIA_BROWSER_OWNER=", 22) != 0) env_store.emplace_back(*e);
  }
  env_store.push_back(std::string(kOwnerVariable) + "=" + std::to_string(::getpid()) + ":" +
                      proc->profile_dir_);
  std::vector<char*> envp;
  envp.reserve(env_store.size() + 1);
  for (std::string& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);

  const std::string log = proc->profile_dir_ + "/chromium.log";
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_adddup2(&fa, to_r.get(), 3);
  posix_spawn_file_actions_adddup2(&fa, from_w.get(), 4);
  posix_spawn_file_actions_addclosefrom_np(&fa, 5);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, exe.c_str(), &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    std::filesystem::remove_all(proc->profile_dir_);
    return Err(UnavailableError("cannot start " + exe + ": " + std::strerror(rc)));
  }
  proc->pid_ = pid;
  to_r.reset();
  from_w.reset();
  auto transport = OpenPipe(from_r.release(), to_w.release());
  if (!transport) return Err(transport.error());
  proc->transport_ = std::move(*transport);
  return proc;
}

void ChromiumProcess::Kill() {
  std::lock_guard lock(mu_);
  if (killed_) return;
  killed_ = true;
  if (transport_ != nullptr) transport_->Close();
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  std::error_code ignored;
  if (!profile_dir_.empty()) std::filesystem::remove_all(profile_dir_, ignored);
}

ChromiumProcess::~ChromiumProcess() { Kill(); }

}  // namespace talaria::browser
