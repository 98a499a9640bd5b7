#include "talaria/env/bwrap.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <string_view>

#include "talaria/base/subprocess.h"

namespace talaria::env {
namespace {

// Top-level directories that merged-/usr systems make symlinks into /usr; on older layouts they
// are real directories and are bound read-only instead.
constexpr std::array<std::string_view, 6> kSystemDirs = {"/bin",   "/sbin",  "/lib",
                                                         "/lib64", "/lib32", "/libx32"};
// What the loader and libc read from /etc; nothing with credentials in it.
constexpr std::array<std::string_view, 4> kSystemEtcFiles = {
    "/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf", "/etc/mime.types"};

void AddSystemOnlyMounts(std::vector<std::string>& argv) {
  argv.insert(argv.end(), {"--ro-bind", "/usr", "/usr"});
  for (std::string_view dir : kSystemDirs) {
    const std::string path(dir);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      char target[4096];
      const ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
      if (n <= 0) continue;
      argv.insert(argv.end(), {"--symlink", std::string(target, static_cast<size_t>(n)), path});
    } else if (S_ISDIR(st.st_mode)) {
      argv.insert(argv.end(), {"--ro-bind", path, path});
    }
  }
  for (std::string_view file : kSystemEtcFiles) {
    argv.insert(argv.end(), {"--ro-bind-try", std::string(file), std::string(file)});
  }
}

// True when `inner` is `outer` or lies beneath it (both absolute, no trailing slash).
bool IsWithin(std::string_view inner, std::string_view outer) {
  return inner == outer || (inner.starts_with(outer) && inner.size() > outer.size() &&
                            (outer == "/" || inner[outer.size()] == '/'));
}

// Covers `path` (a directory: an empty read-only tmpfs; anything else: /dev/null). When a
// writable directory lies inside it (a workspace within $TALARIA_HOME, say), its siblings are
// covered instead, level by level down to it, so the workspace stays reachable.
void AddHiddenMounts(const std::string& path, const std::vector<std::string>& writable,
                     std::vector<std::string>& argv, int depth = 0) {
  struct stat st {};
  // stat, not lstat: a symlinked store is covered as what it points to (a directory gets the
  // tmpfs; /dev/null bound onto a link to a directory would fail every command).
  if (::stat(path.c_str(), &st) != 0) return;
  if (!S_ISDIR(st.st_mode)) {
    argv.insert(argv.end(), {"--ro-bind", "/dev/null", path});
    return;
  }
  const auto cover = [&] { argv.insert(argv.end(), {"--tmpfs", path, "--remount-ro", path}); };
  bool holds_writable = false;
  for (const std::string& dir : writable) {
    if (path == dir) return;  // the workspace itself: shown (what is secret in it is listed apart)
    holds_writable = holds_writable || IsWithin(dir, path);
  }
  // Fail closed: what cannot be descended into is covered whole, workspace or not.
  if (!holds_writable || depth > 16) return cover();
  DIR* d = ::opendir(path.c_str());
  if (d == nullptr) return cover();
  std::vector<std::string> entries;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name(e->d_name);
    if (name != "." && name != "..") entries.push_back(path + "/" + std::string(name));
  }
  ::closedir(d);
  for (const std::string& entry : entries) AddHiddenMounts(entry, writable, argv, depth + 1);
}

}  // namespace

std::vector<std::string> BwrapArgv(const BwrapLayout& layout) {
  std::vector<std::string> argv = {layout.bwrap};
  if (layout.host == BwrapLayout::HostView::kWholeHost) {
    argv.insert(argv.end(), {"--ro-bind", "/", "/"});
  } else {
    AddSystemOnlyMounts(argv);
  }
  argv.insert(argv.end(), {"--dev", "/dev", "--proc", "/proc"});
  if (layout.tmp_size_bytes > 0)
    argv.insert(argv.end(), {"--size", std::to_string(layout.tmp_size_bytes)});
  argv.insert(argv.end(), {"--tmpfs", "/tmp"});
  if (layout.host == BwrapLayout::HostView::kWholeHost)
    argv.insert(argv.end(), {"--tmpfs", "/var/tmp"});
  argv.push_back("--unshare-all");
  if (layout.network) argv.push_back("--share-net");
  argv.push_back("--die-with-parent");
  for (const std::string& dir : layout.writable) argv.insert(argv.end(), {"--bind", dir, dir});
  for (const std::string& path : layout.hidden) AddHiddenMounts(path, layout.writable, argv);
  if (!layout.scratch_dir.empty()) {
    if (layout.scratch_size_bytes > 0) {
      argv.insert(argv.end(), {"--size", std::to_string(layout.scratch_size_bytes)});
    }
    argv.insert(argv.end(), {"--tmpfs", layout.scratch_dir});
    // Sources are host paths: the tmpfs above covers them only inside.
    for (const std::string& file : layout.scratch_files)
      argv.insert(argv.end(), {"--ro-bind", file, file});
  }
  if (layout.new_session) argv.push_back("--new-session");
  if (layout.drop_capabilities) argv.insert(argv.end(), {"--cap-drop", "ALL"});
  if (layout.seccomp_fd >= 0)
    argv.insert(argv.end(), {"--seccomp", std::to_string(layout.seccomp_fd)});
  if (!layout.chdir.empty()) argv.insert(argv.end(), {"--chdir", layout.chdir});
  argv.push_back("--");
  return argv;
}

Status ProbeBwrap(const std::string& bwrap) {
  SpawnOptions probe;
  probe.argv = {bwrap,           "--ro-bind",         "/",  "/",
                "--unshare-all", "--die-with-parent", "--", "/bin/true"};
  probe.timeout = std::chrono::seconds(10);
  auto probed = RunProcess(probe);
  if (!probed) {
    if (probed.error().code() == StatusCode::kNotFound) {
      return NotFoundError("sandbox: '" + bwrap + "' not found (apt-get install bubblewrap)");
    }
    return probed.error();
  }
  if (probed->exit_code != 0) {
    return FailedPreconditionError("sandbox: bwrap cannot create namespaces here: " +
                                   probed->stderr_text);
  }
  return {};
}

}  // namespace talaria::env
