#include "tools/code/pids_cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string_view>
#include <thread>
#include <vector>

#include "talaria/base/file_io.h"
#include "talaria/base/unique_fd.h"

namespace talaria::tools::code {
namespace {

constexpr std::string_view kPrefix = "talaria-exec-";
// How long the removal waits for killed tasks to leave.
constexpr std::chrono::milliseconds kDrainWait{2000};

std::vector<std::string> Split(std::string_view text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = text.find(sep, start);
    parts.emplace_back(
        text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status WriteSmallFile(const std::string& path, std::string_view text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return UnavailableError("cannot open " + path + ": " + std::strerror(errno));
  const ssize_t n = ::write(fd.get(), text.data(), text.size());
  if (n != static_cast<ssize_t>(text.size())) {
    return UnavailableError("cannot write '" + std::string(text) + "' to " + path + ": " +
                            std::strerror(errno));
  }
  return {};
}

// Our cgroup directories: the cgroup2 one and the v1 pids one (empty when that hierarchy is not
// mounted), from /proc/self/mountinfo and /proc/self/cgroup.
struct OwnCgroups {
  std::string v2;
  std::string v1_pids;
};

OwnCgroups FindOwnCgroups() {
  std::string v2_path;
  std::string v1_path;
  std::istringstream cgroups(ReadSmallFile("/proc/self/cgroup"));
  for (std::string line; std::getline(cgroups, line);) {
    // "hierarchy-id:controllers:path"
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty()) v2_path = path;
    for (const std::string& c : Split(controllers, ',')) {
      if (c == "pids") v1_path = path;
    }
  }
  OwnCgroups own;
  std::istringstream mounts(ReadSmallFile("/proc/self/mountinfo"));
  for (std::string line; std::getline(mounts, line);) {
    // "id parent maj:min root mountpoint options [optional...] - fstype source superoptions"
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    const std::vector<std::string> head = Split(line.substr(0, dash), ' ');
    const std::vector<std::string> tail = Split(line.substr(dash + 3), ' ');
    if (head.size() < 5 || tail.size() < 3) continue;
    const std::string& root = head[3];
    const std::string& mountpoint = head[4];
    // The cgroup path relative to this mount (a mount of a sub-tree shows it as its root).
    const auto under_mount = [&](const std::string& path) -> std::optional<std::string> {
      if (root == "/") return path == "/" ? std::string() : path;
      if (path == root) return std::string();
      if (path.rfind(root + "/", 0) == 0) return path.substr(root.size());
      return std::nullopt;
    };
    if (tail[0] == "cgroup2" && !v2_path.empty() && own.v2.empty()) {
      if (auto rel = under_mount(v2_path)) own.v2 = mountpoint + *rel;
    } else if (tail[0] == "cgroup" && !v1_path.empty() && own.v1_pids.empty()) {
      bool pids = false;
      for (const std::string& opt : Split(tail[2], ',')) pids = pids || opt == "pids";
      if (auto rel = under_mount(v1_path); pids && rel) own.v1_pids = mountpoint + *rel;
    }
  }
  return own;
}

bool HasWord(const std::string& text, std::string_view word) {
  std::istringstream in(text);
  for (std::string w; in >> w;) {
    if (w == word) return true;
  }
  return false;
}

// Whether children of the cgroup v2 directory `dir` get the pids controller, enabling it when
// talaria may; the reason when not.
Status CheckV2(const std::string& dir) {
  if (!HasWord(ReadSmallFile(dir + "/cgroup.controllers"), "pids")) {
    return UnavailableError("cgroup v2 " + dir + " has no pids controller");
  }
  if (HasWord(ReadSmallFile(dir + "/cgroup.subtree_control"), "pids")) return {};
  Status enabled = WriteSmallFile(dir + "/cgroup.subtree_control", "+pids");
  if (!enabled.ok()) {
    return UnavailableError("cgroup v2 " + dir + " does not delegate the pids controller (" +
                            enabled.message() + ")");
  }
  return {};
}

// Removes cgroups a talaria that is gone left behind in `dir` (empty ones only).
void SweepStale(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> stale;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name(e->d_name);
    if (!name.starts_with(kPrefix)) continue;
    const long owner = std::strtol(std::string(name.substr(kPrefix.size())).c_str(), nullptr, 10);
    if (owner > 0 && ::kill(static_cast<pid_t>(owner), 0) != 0 && errno == ESRCH)
      stale.emplace_back(name);
  }
  ::closedir(d);
  for (const std::string& name : stale) ::rmdir((dir + "/" + name).c_str());
}

Result<std::string> Discover() {
  const OwnCgroups own = FindOwnCgroups();
  std::string why;
  if (!own.v2.empty()) {
    Status v2 = CheckV2(own.v2);
    if (v2.ok() && ::access(own.v2.c_str(), W_OK) == 0) return own.v2;
    why = v2.ok() ? "cgroup v2 " + own.v2 + " is not writable" : v2.message();
  }
  if (!own.v1_pids.empty()) {
    if (::access((own.v1_pids + "/cgroup.procs").c_str(), W_OK) == 0) return own.v1_pids;
    if (!why.empty()) why += "; ";
    why += "the v1 pids cgroup " + own.v1_pids + " is not writable";
  }
  if (why.empty()) why = "no cgroup v2 or v1 pids hierarchy is mounted";
  return Err(UnavailableError(std::move(why)));
}

}  // namespace

Result<std::string> DiscoverPidsCgroupParent() {
  static std::once_flag once;
  static Result<std::string> found = Err(InternalError("unset"));
  std::call_once(once, [] {
    found = Discover();
    if (found) SweepStale(*found);
  });
  return found;
}

Result<PidsCgroup> PidsCgroup::Create(const std::string& parent, uint64_t max_tasks) {
  std::string dir;
  if (parent == "auto") {
    dir = TALARIA_TRY(DiscoverPidsCgroupParent());
  } else if (parent.empty() || parent.front() != '/') {
    return Err(
        InvalidArgumentError("code_execution.pids_cgroup must be auto, off or an absolute path"));
  } else {
    dir = parent;
    struct stat st {};
    if (::stat((dir + "/cgroup.procs").c_str(), &st) != 0) {
      return Err(UnavailableError(dir + " is not a cgroup directory"));
    }
    if (::stat((dir + "/cgroup.controllers").c_str(), &st) == 0)
      TALARIA_RETURN_IF_ERROR(CheckV2(dir));
  }
  static std::atomic<uint64_t> counter{0};
  std::string path = dir + "/";
  path += kPrefix;
  path += std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
  if (::mkdir(path.c_str(), 0755) != 0) {
    return Err(UnavailableError("cannot create a cgroup in " + dir + ": " + std::strerror(errno)));
  }
  PidsCgroup cgroup(path);  // removes the directory again on failure below
  TALARIA_RETURN_IF_ERROR(WriteSmallFile(path + "/pids.max", std::to_string(max_tasks)));
  return cgroup;
}

PidsCgroup::PidsCgroup(PidsCgroup&& other) noexcept : path_(std::exchange(other.path_, {})) {}

PidsCgroup::~PidsCgroup() {
  if (path_.empty()) return;
  const std::string kill_file = path_ + "/cgroup.kill";
  const bool has_kill = ::access(kill_file.c_str(), F_OK) == 0;
  const auto until = std::chrono::steady_clock::now() + kDrainWait;
  for (;;) {
    if (::rmdir(path_.c_str()) == 0 || errno != EBUSY) return;
    if (std::chrono::steady_clock::now() >= until)
      return;  // FIXME: a cgroup that would not empty is left behind
    if (has_kill) {
      (void)WriteSmallFile(kill_file, "1");
    } else {
      std::istringstream procs(ReadSmallFile(path_ + "/cgroup.procs"));
      for (long pid = 0; procs >> pid;) ::kill(static_cast<pid_t>(pid), SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace talaria::tools::code
