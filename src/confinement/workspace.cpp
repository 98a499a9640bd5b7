#include "talaria/confinement/workspace.h"

#include <fcntl.h>
#include <linux/limits.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "talaria/base/log.h"
#include "talaria/base/paths.h"
#include "talaria/base/random.h"
#include "talaria/confinement/fs_util.h"
#include "talaria/confinement/path_rules.h"

namespace talaria::safety {

using internal::ErrnoStatus;
using internal::FdRealPath;
using internal::Openat2;

namespace {

std::string QuoteWorkspacePath(std::string_view s) { return "'" + std::string(s) + "'"; }

Status OutsideError(std::string_view shown) {
  return PermissionDeniedError("Access denied: " + QuoteWorkspacePath(shown) +
                               " is outside the workspace");
}

std::vector<std::string> SplitRelative(std::string_view rel) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < rel.size()) {
    size_t end = rel.find('/', start);
    if (end == std::string_view::npos) end = rel.size();
    out.emplace_back(rel.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string JoinRelative(const std::vector<std::string>& comps, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) {
    if (!out.empty()) out += '/';
    out += comps[i];
  }
  return out;
}

std::string DisplayJoin(std::string_view base, std::string_view rel) {
  if (rel.empty()) return std::string(base);
  if (base == "/") return "/" + std::string(rel);
  return std::string(base) + "/" + std::string(rel);
}

// realpath(3) of an existing path, or nullopt.
std::optional<std::string> RealPathOf(const std::string& path) {
  char* r = ::realpath(path.c_str(), nullptr);
  if (r == nullptr) return std::nullopt;
  std::string out(r);
  std::free(r);  // NOLINT: realpath's contract
  return out;
}

Status FsyncDir(int dir_fd, std::string_view shown) {
  int fd;
  do {
    fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return ErrnoStatus(errno, "open directory for fsync", shown);
  UniqueFd dir(fd);
  if (::fsync(dir.get()) != 0) return ErrnoStatus(errno, "fsync directory", shown);
  return Status::Ok();
}

Status WriteFully(int fd, std::string_view data, std::string_view shown) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, std::min<size_t>(data.size() - off, 1u << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "write", shown);
    }
    off += static_cast<size_t>(n);
  }
  return Status::Ok();
}

bool SameInode(int a, int b) {
  struct stat sa {
  }, sb{};
  if (::fstat(a, &sa) != 0 || ::fstat(b, &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

enum class CreateParents : unsigned char { kYes, kNo, kCheckOnly };

}  // namespace

// ---------------------------------------------------------------------------------------------
// PathLock

struct PathLock::Table {
  struct Entry {
    std::mutex mu;
    int refs = 0;  // Guarded by Table::mu.
  };
  std::mutex mu;
  std::map<std::string, std::unique_ptr<Entry>, std::less<>> entries;  // Guarded by mu.
};

PathLock::~PathLock() { Unlock(); }

PathLock::PathLock(PathLock&& other) noexcept
    : table_(std::move(other.table_)), keys_(std::move(other.keys_)) {
  other.table_.reset();
  other.keys_.clear();
}

PathLock& PathLock::operator=(PathLock&& other) noexcept {
  if (this != &other) {
    Unlock();
    table_ = std::move(other.table_);
    keys_ = std::move(other.keys_);
    other.table_.reset();
    other.keys_.clear();
  }
  return *this;
}

void PathLock::Unlock() {
  if (!table_) return;
  // Newest first. An iterator loop: clang-tidy's clang 14 cannot compile libstdc++ 12's
  // reverse_view, which modernize-loop-convert would suggest.
  for (auto it = keys_.rbegin(); it != keys_.rend(); ++it) {  // NOLINT(modernize-loop-convert)
    std::lock_guard<std::mutex> g(table_->mu);
    auto e = table_->entries.find(*it);
    TALARIA_CHECK(e != table_->entries.end());
    e->second->mu.unlock();
    if (--e->second->refs == 0) table_->entries.erase(e);
  }
  table_.reset();
}

// ---------------------------------------------------------------------------------------------
// Workspace

struct Root {
  std::string given;  // normalized absolute, as configured
  std::string real;   // realpath of the opened directory
  std::vector<std::string> given_components;
  std::vector<std::string> real_components;
  UniqueFd fd;  // O_PATH | O_DIRECTORY
  dev_t dev = 0;
  bool on_pseudo_fs = true;  // until checked: a file on the root's own device skips fstatfs
  bool unconfined = false;
  uint64_t resolve = 0;  // openat2 resolve flags for paths beneath this root
};

struct Workspace::Impl {
  std::vector<Root> roots;
  std::string home;  // normalized absolute, or empty
  internal::SensitivePaths sensitive{{}, {}};
  Durability durability = Durability::kFsync;
  HardLinkReads hard_link_reads = HardLinkReads::kRefuse;
  std::function<void(std::string_view)> before_commit;
  std::shared_ptr<PathLock::Table> locks = std::make_shared<PathLock::Table>();

  mutable std::mutex cwd_mu;
  std::string cwd;  // Guarded by cwd_mu.

  // The held parent directory of a write target, reached from the root.
  struct Parent {
    ResolvedPath target;
    std::string parent_rel;  // beneath the root; "" = the root
    std::string leaf;
    UniqueFd fd;  // O_PATH directory fd; invalid in kCheckOnly when missing
    std::vector<std::string> dirs_created;
  };

  std::string Cwd() const {
    std::lock_guard<std::mutex> g(cwd_mu);
    return cwd;
  }

  Result<ResolvedPath> Resolve(std::string_view path) const;
  // Display path of an existing directory (for the cwd).
  Result<std::string> ResolveDirectory(std::string_view path) const;
  Result<UniqueFd> OpenBeneath(const ResolvedPath& r, std::string_view rel, uint64_t flags,
                               std::string_view shown) const;
  Result<UniqueFd> OpenForRead(std::string_view path, ResolvedPath* resolved, FileInfo* info) const;
  // `st` is fd's fstat.
  Status CheckReadableFd(int fd, const struct stat& st, std::string_view shown,
                         bool want_dir) const;
  bool OnOrdinaryRootDevice(dev_t dev) const;
  Result<Parent> OpenParent(std::string_view path, CreateParents create) const;
  Status CheckWriteReal(int parent_fd, std::string_view leaf, std::string_view shown) const;
  Status VerifyParent(const Parent& p, std::string_view shown) const;
  Result<WriteResult> Write(std::string_view path, std::string_view content,
                            std::optional<mode_t> mode_for_new) const;
};

Result<ResolvedPath> Workspace::Impl::Resolve(std::string_view path) const {
  TALARIA_RETURN_IF_ERROR(internal::ValidatePathString(path));
  std::string absolute;
  if (path == "~" || path.starts_with("~/")) {
    if (home.empty()) {
      return Err(InvalidArgumentError("cannot expand '~': the home directory is unknown"));
    }
    absolute = home + std::string(path.substr(1));
  } else if (path[0] == '/') {
    absolute = std::string(path);
  } else {
    absolute = Cwd() + "/" + std::string(path);
  }
  std::vector<std::string> comps = internal::NormalizedComponents(absolute);

  // The root matching the most components wins (nested roots); compare against the root as
  // configured and its realpath, component by component.
  std::optional<size_t> best;
  size_t best_len = 0;
  std::string best_rel;
  for (size_t i = 0; i < roots.size(); ++i) {
    for (const auto* base : {&roots[i].given_components, &roots[i].real_components}) {
      std::optional<std::string> rel = internal::RelativeBeneath(*base, comps);
      if (rel && (!best || base->size() > best_len)) {
        best = i;
        best_len = base->size();
        best_rel = std::move(*rel);
      }
    }
  }
  if (!best) return Err(OutsideError(path));
  ResolvedPath out;
  out.root_index = *best;
  out.relative = std::move(best_rel);
  out.display = DisplayJoin(roots[*best].given, out.relative);
  TALARIA_RETURN_IF_ERROR(internal::ValidatePathString(out.display));
  return out;
}

Result<std::string> Workspace::Impl::ResolveDirectory(std::string_view path) const {
  ResolvedPath r = TALARIA_TRY(Resolve(path));
  UniqueFd fd = TALARIA_TRY(OpenBeneath(r, r.relative, O_PATH, path));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Err(ErrnoStatus(errno, "fstat", path));
  if (!S_ISDIR(st.st_mode))
    return Err(InvalidArgumentError(QuoteWorkspacePath(path) + " is not a directory"));
  return std::move(r.display);
}

Result<UniqueFd> Workspace::Impl::OpenBeneath(const ResolvedPath& r, std::string_view rel,
                                              uint64_t flags, std::string_view shown) const {
  const Root& root = roots[r.root_index];
  const std::string p = rel.empty() ? std::string(".") : std::string(rel);
  int fd = Openat2(root.fd.get(), p.c_str(), flags | O_CLOEXEC, 0, root.resolve);
  if (fd < 0) return Err(ErrnoStatus(errno, "open", shown));
  return UniqueFd(fd);
}

// The same device as a root that is not on a pseudo file system: the same file system, so
// not a pseudo one either (st_dev names the superblock; a procfs mounted or bind-mounted
// beneath a root has its own).
bool Workspace::Impl::OnOrdinaryRootDevice(dev_t dev) const {
  for (const Root& root : roots) {
    if (!root.on_pseudo_fs && root.dev == dev) return true;
  }
  return false;
}

Status Workspace::Impl::CheckReadableFd(int fd, const struct stat& st, std::string_view shown,
                                        bool want_dir) const {
  if (want_dir) {
    if (!S_ISDIR(st.st_mode)) {
      return InvalidArgumentError(QuoteWorkspacePath(shown) + " is " +
                                  std::string(internal::FileTypeName(st.st_mode)) +
                                  ", not a directory");
    }
  } else if (S_ISDIR(st.st_mode)) {
    return InvalidArgumentError(QuoteWorkspacePath(shown) + " is a directory, not a file");
  } else if (!S_ISREG(st.st_mode)) {
    return PermissionDeniedError("Access denied: " + QuoteWorkspacePath(shown) + " is " +
                                 std::string(internal::FileTypeName(st.st_mode)) +
                                 "; only regular files can be read");
  } else if (st.st_nlink > 1 && hard_link_reads == HardLinkReads::kRefuse) {
    return PermissionDeniedError(
        "Access denied: " + QuoteWorkspacePath(shown) + " has " + std::to_string(st.st_nlink) +
        " hard links, and another of its names may lie outside the workspace (set "
        "files.read_hard_links: true for trees that hard-link their own files)");
  }
  if (OnOrdinaryRootDevice(st.st_dev)) return Status::Ok();
  std::optional<std::string_view> pseudo = TALARIA_TRY(internal::PseudoFsName(fd));
  if (pseudo) {
    return PermissionDeniedError("Access denied: " + QuoteWorkspacePath(shown) + " is on " +
                                 std::string(*pseudo) +
                                 " (kernel pseudo-files are not read by file tools)");
  }
  return Status::Ok();
}

Result<UniqueFd> Workspace::Impl::OpenForRead(std::string_view path, ResolvedPath* resolved,
                                              FileInfo* info) const {
  ResolvedPath r = TALARIA_TRY(Resolve(path));
  if (auto why = sensitive.ReadDenial(r.display, path)) return Err(PermissionDeniedError(*why));
  // Reached without a symlink, the file's real path is its root's plus `relative` (".." was
  // resolved lexically, which is exact without symlinks): /proc is asked only after a symlink.
  const Root& root = roots[r.root_index];
  const std::string rel = r.relative.empty() ? std::string(".") : r.relative;
  UniqueFd opath(Openat2(root.fd.get(), rel.c_str(), O_PATH | O_CLOEXEC, 0,
                         root.resolve | RESOLVE_NO_SYMLINKS));
  const bool via_symlink = !opath && errno == ELOOP;  // any other failure is the answer already
  if (via_symlink) opath = TALARIA_TRY(OpenBeneath(r, r.relative, O_PATH, path));
  if (!opath) return Err(ErrnoStatus(errno, "open", path));
  struct stat st {};
  if (::fstat(opath.get(), &st) != 0) return Err(ErrnoStatus(errno, "fstat", path));
  TALARIA_RETURN_IF_ERROR(CheckReadableFd(opath.get(), st, path, /*want_dir=*/false));
  const std::string real =
      via_symlink ? TALARIA_TRY(FdRealPath(opath.get())) : DisplayJoin(root.real, r.relative);
  if (auto why = sensitive.ReadDenial(real, path)) return Err(PermissionDeniedError(*why));
  struct stat opened {};
  UniqueFd fd = TALARIA_TRY(internal::Reopen(opath.get(), st, O_RDONLY, path, &opened));
  if (info != nullptr) *info = internal::ToFileInfo(opened);
  if (resolved != nullptr) *resolved = std::move(r);
  return fd;
}

// Opens (and with kYes creates) the parent directory of the write target `path`, applying the
// lexical write rules before anything is created and the real-path rules before each mkdir.
Result<Workspace::Impl::Parent> Workspace::Impl::OpenParent(std::string_view path,
                                                            CreateParents create) const {
  Parent out;
  out.target = TALARIA_TRY(Resolve(path));
  if (out.target.relative.empty()) {
    return Err(InvalidArgumentError(QuoteWorkspacePath(path) + " is a directory, not a file"));
  }
  if (auto why = sensitive.WriteDenial(out.target.display, path)) {
    return Err(PermissionDeniedError(*why));
  }
  const std::vector<std::string> comps = SplitRelative(out.target.relative);
  out.leaf = comps.back();
  out.parent_rel = JoinRelative(comps, 0, comps.size() - 1);
  const Root& root = roots[out.target.root_index];

  int fd = Openat2(root.fd.get(), out.parent_rel.empty() ? "." : out.parent_rel.c_str(),
                   O_PATH | O_DIRECTORY | O_CLOEXEC, 0, root.resolve);
  if (fd >= 0) {
    out.fd.reset(fd);
    return out;
  }
  if (errno != ENOENT || create == CreateParents::kNo) {
    return Err(ErrnoStatus(errno, "open parent directory of", path));
  }

  // Walk down from the root, one component at a time, creating what is missing.
  UniqueFd cur(Openat2(root.fd.get(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC, 0, root.resolve));
  if (!cur) return Err(ErrnoStatus(errno, "open", path));
  const size_t n_parent = comps.size() - 1;
  for (size_t i = 0; i < n_parent; ++i) {
    const std::string prefix = JoinRelative(comps, 0, i + 1);
    fd = Openat2(root.fd.get(), prefix.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC, 0, root.resolve);
    if (fd >= 0) {
      cur.reset(fd);
      continue;
    }
    if (errno != ENOENT) return Err(ErrnoStatus(errno, "open parent directory of", path));
    // About to create comps[i] inside `cur`: judge the real destination first.
    const std::string cur_real = TALARIA_TRY(FdRealPath(cur.get()));
    const std::string would_be =
        internal::NormalizeAbsolute(cur_real + "/" + JoinRelative(comps, i, comps.size()));
    if (auto why = sensitive.WriteDenial(would_be, path)) return Err(PermissionDeniedError(*why));
    if (std::optional<std::string_view> pseudo = TALARIA_TRY(internal::PseudoFsName(cur.get()))) {
      return Err(PermissionDeniedError("Write denied: " + QuoteWorkspacePath(path) + " is on " +
                                       std::string(*pseudo)));
    }
    if (create == CreateParents::kCheckOnly) return out;  // out.fd stays invalid
    bool made = true;
    if (::mkdirat(cur.get(), comps[i].c_str(), 0777) != 0) {
      if (errno != EEXIST) return Err(ErrnoStatus(errno, "create directory for", path));
      made = false;  // a concurrent writer created it
    }
    if (made) {
      // Our own new directory: open it under the held fd, refusing any symlink swapped in.
      fd = Openat2(cur.get(), comps[i].c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
                   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
      out.dirs_created.push_back(DisplayJoin(root.given, prefix));
    } else {
      fd =
          Openat2(root.fd.get(), prefix.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC, 0, root.resolve);
    }
    if (fd < 0) return Err(ErrnoStatus(errno, "open created directory for", path));
    cur.reset(fd);
  }
  out.fd = std::move(cur);
  return out;
}

// The real-path write rules for `leaf` inside the held directory, plus pseudo file systems.
Status Workspace::Impl::CheckWriteReal(int parent_fd, std::string_view leaf,
                                       std::string_view shown) const {
  const std::string parent_real = TALARIA_TRY(FdRealPath(parent_fd));
  const std::string real = internal::NormalizeAbsolute(parent_real + "/" + std::string(leaf));
  if (auto why = sensitive.WriteDenial(real, shown)) return PermissionDeniedError(*why);
  if (std::optional<std::string_view> pseudo = TALARIA_TRY(internal::PseudoFsName(parent_fd))) {
    return PermissionDeniedError("Write denied: " + QuoteWorkspacePath(shown) + " is on " +
                                 std::string(*pseudo));
  }
  return Status::Ok();
}

// Re-resolves the parent from the root and checks it is still the directory we hold.
Status Workspace::Impl::VerifyParent(const Parent& p, std::string_view shown) const {
  const Root& root = roots[p.target.root_index];
  UniqueFd again(Openat2(root.fd.get(), p.parent_rel.empty() ? "." : p.parent_rel.c_str(),
                         O_PATH | O_DIRECTORY | O_CLOEXEC, 0, root.resolve));
  if (!again || !SameInode(again.get(), p.fd.get())) {
    return PermissionDeniedError("Write refused: a directory on the path of " +
                                 QuoteWorkspacePath(shown) +
                                 " was replaced during the operation (possible symlink swap); "
                                 "nothing was changed");
  }
  return Status::Ok();
}

Result<WriteResult> Workspace::Impl::Write(std::string_view path, std::string_view content,
                                           std::optional<mode_t> mode_for_new) const {
  Parent p = TALARIA_TRY(OpenParent(path, CreateParents::kYes));
  WriteResult result;
  result.dirs_created = p.dirs_created;
  result.resolved_path = p.target.display;
  TALARIA_RETURN_IF_ERROR(CheckWriteReal(p.fd.get(), p.leaf, path));

  // The leaf is looked at, never followed.
  struct stat old {};
  bool exists = true;
  if (::fstatat(p.fd.get(), p.leaf.c_str(), &old, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT) return Err(ErrnoStatus(errno, "stat", path));
    exists = false;
  }
  if (exists) {
    if (S_ISLNK(old.st_mode)) {
      return Err(PermissionDeniedError(
          "Write refused: " + QuoteWorkspacePath(path) +
          " is a symbolic link; file tools never write through a symlink (write to the path "
          "it points to instead)"));
    }
    if (S_ISDIR(old.st_mode)) {
      return Err(InvalidArgumentError(QuoteWorkspacePath(path) + " is a directory, not a file"));
    }
    if (!S_ISREG(old.st_mode)) {
      return Err(PermissionDeniedError("Write refused: " + QuoteWorkspacePath(path) + " is " +
                                       std::string(internal::FileTypeName(old.st_mode)) +
                                       "; only regular files can be written"));
    }
  }
  result.created = !exists;

  // Temp file beside the target: ".<leaf>.talaria-tmp-<16 hex>" (fits NAME_MAX).
  const std::string stem = p.leaf.substr(0, std::min<size_t>(p.leaf.size(), NAME_MAX - 32));
  const mode_t create_mode = exists ? (old.st_mode & 07777) : mode_for_new.value_or(0644);
  std::string tmp_name;
  UniqueFd tmp;
  for (int attempt = 0; attempt < 8 && !tmp; ++attempt) {
    tmp_name = "." + stem + ".talaria-tmp-" + RandomHex(8);
    int fd;
    do {
      fd = ::openat(p.fd.get(), tmp_name.c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, create_mode);
    } while (fd < 0 && errno == EINTR);
    if (fd >= 0) {
      tmp.reset(fd);
    } else if (errno != EEXIST) {
      return Err(ErrnoStatus(errno, "create temporary file for", path));
    }
  }
  if (!tmp)
    return Err(
        InternalError("could not create a unique temporary file for " + QuoteWorkspacePath(path)));

  // From here on, failure removes the temp file (through the held directory fd).
  bool renamed = false;
  struct TempGuard {
    int dir;
    const std::string& name;
    const bool& renamed;
    ~TempGuard() {
      if (!renamed) ::unlinkat(dir, name.c_str(), 0);
    }
  } guard{p.fd.get(), tmp_name, renamed};

  if (exists) {
    // Keep owner (when we may) and the exact mode (umask does not apply to an existing file).
    if (old.st_uid != ::geteuid() || old.st_gid != ::getegid()) {
      (void)::fchown(tmp.get(), old.st_uid, old.st_gid);  // best effort
    }
    if (::fchmod(tmp.get(), old.st_mode & 07777) != 0) {
      return Err(ErrnoStatus(errno, "chmod temporary file for", path));
    }
  }
  TALARIA_RETURN_IF_ERROR(WriteFully(tmp.get(), content, path));
  if (durability == Durability::kFsync && ::fsync(tmp.get()) != 0) {
    return Err(ErrnoStatus(errno, "fsync", path));
  }
  if (before_commit) before_commit(p.target.display);
  TALARIA_RETURN_IF_ERROR(VerifyParent(p, path));
  if (::renameat(p.fd.get(), tmp_name.c_str(), p.fd.get(), p.leaf.c_str()) != 0) {
    return Err(ErrnoStatus(errno, "rename temporary file onto", path));
  }
  renamed = true;
  if (durability == Durability::kFsync) {
    if (Status s = FsyncDir(p.fd.get(), path); !s.ok()) {
      // The new content is in place; only its durability across a machine crash is unknown.
      LogWarn("WriteAtomic: " + s.ToString());
    }
  }
  struct stat st {};
  if (::fstat(tmp.get(), &st) != 0) return Err(ErrnoStatus(errno, "fstat", path));
  result.after = internal::ToFileInfo(st);
  result.bytes_written = content.size();
  return result;
}

Workspace::Workspace(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Workspace::~Workspace() = default;

Result<std::shared_ptr<Workspace>> Workspace::Open(WorkspaceOptions options) {
  if (options.roots.empty()) return Err(InvalidArgumentError("workspace: no roots given"));
  if (!internal::HaveOpenat2()) {
    return Err(UnavailableError("workspace: the kernel lacks openat2 (Linux 5.6 or newer needed)"));
  }
  auto impl = std::make_unique<Impl>();
  impl->durability = options.durability;
  impl->hard_link_reads = options.hard_link_reads;
  impl->before_commit = std::move(options.before_commit_for_testing);

  for (const std::string& given : options.roots) {
    TALARIA_RETURN_IF_ERROR(internal::ValidatePathString(given));
    if (given[0] != '/') {
      return Err(InvalidArgumentError("workspace root must be an absolute path: " +
                                      QuoteWorkspacePath(given)));
    }
    Root root;
    root.given = internal::NormalizeAbsolute(given);
    root.given_components = internal::NormalizedComponents(root.given);
    int fd = ::open(root.given.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return Err(ErrnoStatus(errno, "open workspace root", given));
    root.fd.reset(fd);
    root.real = TALARIA_TRY(FdRealPath(root.fd.get()));
    struct stat root_st {};
    if (::fstat(root.fd.get(), &root_st) != 0)
      return Err(ErrnoStatus(errno, "fstat workspace root", given));
    root.dev = root_st.st_dev;
    root.on_pseudo_fs = TALARIA_TRY(internal::PseudoFsName(root.fd.get())).has_value();
    root.real_components = internal::NormalizedComponents(root.real);
    root.unconfined = root.real_components.empty();
    // Unconfined: "/" is the process root, so RESOLVE_IN_ROOT gives ordinary semantics
    // (absolute symlinks work) while magic links stay refused.
    root.resolve = (root.unconfined ? RESOLVE_IN_ROOT : RESOLVE_BENEATH) | RESOLVE_NO_MAGICLINKS;
    impl->roots.push_back(std::move(root));
  }

  std::string home = options.home;
  if (home.empty()) {
    if (const char* h = std::getenv("HOME"); h != nullptr) home = h;
  }
  std::vector<std::string> homes;
  if (!home.empty() && home[0] == '/') {
    impl->home = internal::NormalizeAbsolute(home);
    homes.push_back(impl->home);
    if (auto r = RealPathOf(impl->home)) homes.push_back(*r);
  }
  std::string talaria_home = options.talaria_home.empty() ? TalariaHome() : options.talaria_home;
  std::vector<std::string> talaria_homes;
  if (!talaria_home.empty()) {
    if (talaria_home[0] != '/') {
      if (auto r = RealPathOf(".")) talaria_home = *r + "/" + talaria_home;
    }
    talaria_homes.push_back(internal::NormalizeAbsolute(talaria_home));
    if (auto r = RealPathOf(talaria_home)) talaria_homes.push_back(*r);
  }
  impl->sensitive = internal::SensitivePaths(homes, talaria_homes);

  impl->cwd = impl->roots[0].given;
  if (!options.cwd.empty()) {
    impl->cwd = TALARIA_TRY(impl->ResolveDirectory(options.cwd));
  }
  return std::shared_ptr<Workspace>(new Workspace(std::move(impl)));
}

std::string Workspace::cwd() const { return impl_->Cwd(); }

Status Workspace::SetCwd(std::string_view path) {
  std::string display = TALARIA_TRY(impl_->ResolveDirectory(path));
  std::lock_guard<std::mutex> g(impl_->cwd_mu);
  impl_->cwd = std::move(display);
  return Status::Ok();
}

bool Workspace::unconfined() const {
  return std::any_of(impl_->roots.begin(), impl_->roots.end(),
                     [](const Root& r) { return r.unconfined; });
}

Result<ResolvedPath> Workspace::Resolve(std::string_view path) const {
  return impl_->Resolve(path);
}

Result<UniqueFd> Workspace::OpenRead(std::string_view path, ResolvedPath* resolved,
                                     FileInfo* info) const {
  return impl_->OpenForRead(path, resolved, info);
}

Result<std::string> Workspace::ReadAll(std::string_view path, size_t max_bytes,
                                       FileInfo* info) const {
  FileInfo fi;
  UniqueFd fd = TALARIA_TRY(impl_->OpenForRead(path, nullptr, &fi));
  auto too_big = [&](uint64_t size, bool at_least) {
    return ResourceExhaustedError(QuoteWorkspacePath(path) + " is " + (at_least ? "over " : "") +
                                  std::to_string(size) + " bytes, more than the " +
                                  std::to_string(max_bytes) + "-byte limit");
  };
  if (fi.size > max_bytes) return Err(too_big(fi.size, false));
  std::string out;
  out.resize(static_cast<size_t>(fi.size) + 1);
  size_t len = 0;
  for (;;) {
    if (len == out.size()) {
      if (out.size() > max_bytes) return Err(too_big(max_bytes, true));
      out.resize(std::min(out.size() * 2, max_bytes + 1));
    }
    ssize_t n = ::read(fd.get(), out.data() + len, out.size() - len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Err(ErrnoStatus(errno, "read", path));
    }
    if (n == 0) break;
    len += static_cast<size_t>(n);
  }
  if (len > max_bytes) return Err(too_big(max_bytes, true));
  out.resize(len);
  if (info != nullptr) *info = fi;
  return out;
}

Result<FileInfo> Workspace::Stat(std::string_view path) const {
  ResolvedPath r = TALARIA_TRY(impl_->Resolve(path));
  UniqueFd fd = TALARIA_TRY(impl_->OpenBeneath(r, r.relative, O_PATH, path));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Err(ErrnoStatus(errno, "fstat", path));
  return internal::ToFileInfo(st);
}

Result<UniqueFd> Workspace::OpenDir(std::string_view path) const {
  ResolvedPath r = TALARIA_TRY(impl_->Resolve(path));
  UniqueFd opath = TALARIA_TRY(impl_->OpenBeneath(r, r.relative, O_PATH, path));
  struct stat st {};
  if (::fstat(opath.get(), &st) != 0) return Err(ErrnoStatus(errno, "fstat", path));
  TALARIA_RETURN_IF_ERROR(impl_->CheckReadableFd(opath.get(), st, path, /*want_dir=*/true));
  return internal::Reopen(opath.get(), st, O_RDONLY | O_DIRECTORY, path);
}

namespace {
Status ValidateEntryName(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos || name.size() > NAME_MAX) {
    return InvalidArgumentError("invalid directory entry name " + QuoteWorkspacePath(name));
  }
  return Status::Ok();
}

// An entry of a directory held open, as an O_PATH fd with its fstat; a symlink is refused, never
// followed.
Result<UniqueFd> OpenEntryPath(int dir_fd, std::string_view name, struct stat& st) {
  TALARIA_RETURN_IF_ERROR(ValidateEntryName(name));
  const std::string n(name);
  int fd = ::openat(dir_fd, n.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Err(ErrnoStatus(errno, "open", name));
  UniqueFd opath(fd);
  if (::fstat(opath.get(), &st) != 0) return Err(ErrnoStatus(errno, "fstat", name));
  if (S_ISLNK(st.st_mode)) {
    return Err(
        PermissionDeniedError(QuoteWorkspacePath(name) + " is a symbolic link (not followed)"));
  }
  return opath;
}
}  // namespace

Result<UniqueFd> Workspace::OpenReadAt(int dir_fd, std::string_view name, FileInfo* info) const {
  struct stat st {};
  UniqueFd opath = TALARIA_TRY(OpenEntryPath(dir_fd, name, st));
  TALARIA_RETURN_IF_ERROR(impl_->CheckReadableFd(opath.get(), st, name, /*want_dir=*/false));
  UniqueFd out = TALARIA_TRY(internal::Reopen(opath.get(), st, O_RDONLY, name));
  if (info != nullptr) *info = internal::ToFileInfo(st);
  return out;
}

Result<UniqueFd> Workspace::OpenDirAt(int dir_fd, std::string_view name) const {
  struct stat st {};
  UniqueFd opath = TALARIA_TRY(OpenEntryPath(dir_fd, name, st));
  TALARIA_RETURN_IF_ERROR(impl_->CheckReadableFd(opath.get(), st, name, /*want_dir=*/true));
  return internal::Reopen(opath.get(), st, O_RDONLY | O_DIRECTORY, name);
}

Result<WriteResult> Workspace::WriteAtomic(std::string_view path, std::string_view content,
                                           std::optional<mode_t> mode_for_new) const {
  return impl_->Write(path, content, mode_for_new);
}

Status Workspace::CheckWritable(std::string_view path) const {
  Impl::Parent p = TALARIA_TRY(impl_->OpenParent(path, CreateParents::kCheckOnly));
  if (!p.fd) return Status::Ok();  // missing parents would be created; rules already checked
  TALARIA_RETURN_IF_ERROR(impl_->CheckWriteReal(p.fd.get(), p.leaf, path));
  struct stat st {};
  if (::fstatat(p.fd.get(), p.leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return ErrnoStatus(errno, "stat", path);
  }
  if (S_ISLNK(st.st_mode)) {
    return PermissionDeniedError("Write refused: " + QuoteWorkspacePath(path) +
                                 " is a symbolic link; file tools never write through a symlink");
  }
  if (S_ISDIR(st.st_mode))
    return InvalidArgumentError(QuoteWorkspacePath(path) + " is a directory, not a file");
  if (!S_ISREG(st.st_mode)) {
    return PermissionDeniedError("Write refused: " + QuoteWorkspacePath(path) + " is " +
                                 std::string(internal::FileTypeName(st.st_mode)));
  }
  return Status::Ok();
}

Status Workspace::Remove(std::string_view path) const {
  Impl::Parent p = TALARIA_TRY(impl_->OpenParent(path, CreateParents::kNo));
  TALARIA_RETURN_IF_ERROR(impl_->CheckWriteReal(p.fd.get(), p.leaf, path));
  struct stat st {};
  if (::fstatat(p.fd.get(), p.leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return ErrnoStatus(errno, "stat", path);
  }
  if (S_ISDIR(st.st_mode)) {
    return InvalidArgumentError(QuoteWorkspacePath(path) +
                                " is a directory; only files can be removed");
  }
  TALARIA_RETURN_IF_ERROR(impl_->VerifyParent(p, path));
  if (::unlinkat(p.fd.get(), p.leaf.c_str(), 0) != 0) return ErrnoStatus(errno, "remove", path);
  if (impl_->durability == Durability::kFsync) {
    if (Status s = FsyncDir(p.fd.get(), path); !s.ok()) LogWarn("Remove: " + s.ToString());
  }
  return Status::Ok();
}

Status Workspace::Rename(std::string_view from, std::string_view to) const {
  Impl::Parent src = TALARIA_TRY(impl_->OpenParent(from, CreateParents::kNo));
  TALARIA_RETURN_IF_ERROR(impl_->CheckWriteReal(src.fd.get(), src.leaf, from));
  struct stat st {};
  if (::fstatat(src.fd.get(), src.leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return ErrnoStatus(errno, "stat", from);
  }
  if (S_ISDIR(st.st_mode)) {
    return InvalidArgumentError(QuoteWorkspacePath(from) +
                                " is a directory; only files can be moved");
  }
  // Moving a read-denied file under an innocent name would launder it past the read rules.
  {
    const std::string real = TALARIA_TRY(FdRealPath(src.fd.get()));
    const std::string leaf_real = internal::NormalizeAbsolute(real + "/" + src.leaf);
    auto why = impl_->sensitive.ReadDenial(leaf_real, from);
    if (!why) why = impl_->sensitive.ReadDenial(src.target.display, from);
    if (why) return PermissionDeniedError(*why + " (it cannot be moved either)");
  }
  // Judge the destination fully before creating any of its parent directories.
  TALARIA_RETURN_IF_ERROR(CheckWritable(to));
  Impl::Parent dst = TALARIA_TRY(impl_->OpenParent(to, CreateParents::kYes));
  TALARIA_RETURN_IF_ERROR(impl_->CheckWriteReal(dst.fd.get(), dst.leaf, to));
  struct stat dst_st {};
  if (::fstatat(dst.fd.get(), dst.leaf.c_str(), &dst_st, AT_SYMLINK_NOFOLLOW) == 0) {
    return AlreadyExistsError("Cannot move " + QuoteWorkspacePath(from) + ": destination " +
                              QuoteWorkspacePath(to) + " already exists");
  }
  TALARIA_RETURN_IF_ERROR(impl_->VerifyParent(src, from));
  TALARIA_RETURN_IF_ERROR(impl_->VerifyParent(dst, to));
  if (::renameat2(src.fd.get(), src.leaf.c_str(), dst.fd.get(), dst.leaf.c_str(),
                  RENAME_NOREPLACE) != 0) {
    if (errno == EEXIST) {
      return AlreadyExistsError("Cannot move " + QuoteWorkspacePath(from) + ": destination " +
                                QuoteWorkspacePath(to) + " already exists");
    }
    return ErrnoStatus(errno, "rename", from);
  }
  if (impl_->durability == Durability::kFsync) {
    if (Status s = FsyncDir(dst.fd.get(), to); !s.ok()) LogWarn("Rename: " + s.ToString());
    if (!SameInode(src.fd.get(), dst.fd.get())) {
      if (Status s = FsyncDir(src.fd.get(), from); !s.ok()) LogWarn("Rename: " + s.ToString());
    }
  }
  return Status::Ok();
}

PathLock Workspace::LockPaths(std::vector<std::string> paths) const {
  std::vector<std::string> keys;
  keys.reserve(paths.size());
  for (std::string& p : paths) {
    Result<ResolvedPath> r = impl_->Resolve(p);
    keys.push_back(r ? std::move(r->display) : std::move(p));
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());

  PathLock lock;
  lock.table_ = impl_->locks;
  for (const std::string& key : keys) {
    PathLock::Table::Entry* entry;
    {
      std::lock_guard<std::mutex> g(lock.table_->mu);
      auto& slot = lock.table_->entries[key];
      if (!slot) slot = std::make_unique<PathLock::Table::Entry>();
      ++slot->refs;
      entry = slot.get();
    }
    entry->mu.lock();  // outside the table lock: only this key's holders are waited for
    lock.keys_.push_back(key);
  }
  return lock;
}

bool Workspace::IsSensitiveForRead(std::string_view display_path) const {
  if (display_path.empty()) return false;
  // A relative string still gets the name rules (.env anywhere).
  const std::string absolute =
      display_path[0] == '/' ? std::string(display_path) : "/" + std::string(display_path);
  return impl_->sensitive.ReadDenial(internal::NormalizeAbsolute(absolute), display_path)
      .has_value();
}

}  // namespace talaria::safety
