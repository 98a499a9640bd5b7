// Workspace: the only way talaria's file tools turn a path string into an open file.
//
// A Workspace holds an O_PATH directory fd per root and resolves every path with
// openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) relative to that fd, so the kernel, not a
// string comparison, decides containment: `..` above the root, symlinks (files, directories,
// dangling ones) that point outside, and /proc magic links are refused at the moment of the
// open, and a symlink swapped in after a check cannot redirect the I/O. The root "/" means
// unconfined (resolution then uses RESOLVE_IN_ROOT on "/", i.e. ordinary path semantics minus
// magic links); the sensitive-path rules below still apply there.
//
// Path rules (all operations):
//   - Relative paths resolve against the session cwd (cwd()); "~" and "~/..." expand to the
//     home dir. "~user" is not expanded (it is an ordinary relative name).
//   - The path is made absolute and normalized lexically ("." and empty components dropped,
//     ".." removes the previous component), then it must lie inside a root, compared component
//     by component ("/ws_evil" is not inside "/ws") against the root as given and its realpath.
//     The part beneath the root, which never contains "..", is what the kernel resolves.
//   - Refused before any syscall: empty paths, NUL bytes, paths longer than PATH_MAX, a
//     component longer than NAME_MAX.
//   - Symlinks inside the root that stay inside the root (relative targets) are followed for
//     reads and for directories; an absolute symlink target is refused even when it points back
//     inside (RESOLVE_BENEATH semantics), except in the unconfined workspace.
//   - Sensitive paths are checked on the REAL path of what was opened (readlink of
//     /proc/self/fd/N), and on the requested path, so neither a symlink nor a different
//     spelling dodges them:
//       write-deny: ~/.ssh/ ~/.aws/ ~/.gnupg/ ~/.kube/ ~/.docker/ ~/.azure/ ~/.config/gh/
//         ~/.config/gcloud/, ~/.netrc ~/.pgpass ~/.npmrc ~/.pypirc ~/.git-credentials, shell rc
//         files in home (.bashrc .bash_profile .bash_login .bash_logout .profile .zshrc
//         .zprofile .zshenv .login .cshrc .tcshrc .config/fish/config.fish), /etc/sudoers,
//         /etc/sudoers.d/, /etc/passwd, /etc/shadow, /etc/systemd/, anything in or named .git
//         at any depth (config, hooks, commondir, submodules' configs: they make git run
//         commands), and all of talaria_home (approvals, trust, config, audit, memories).
//       read-deny: .env .env.local .env.development .env.production .env.test .env.staging
//         .envrc anywhere; the credential stores of the write-deny list under home (~/.ssh/,
//         ~/.aws/, ... ~/.netrc, ~/.git-credentials); all of talaria_home except its spill/
//         files (the oversized results talaria itself tells the model to page through).
//   - Reads open the file O_PATH first and refuse, without any I/O on the file, anything that
//     is not a regular file (devices, FIFOs, sockets, directories), a regular file with more
//     than one hard link (HardLinkReads), and anything on procfs,
//     sysfs, devpts, debugfs, tracefs, securityfs, efivarfs, configfs or bpffs; only then is
//     the same inode reopened for reading through /proc/self/fd/N.
//   - Error messages name the path the caller asked for, never the list of roots: a path outside
//     every root is "outside the workspace".
//
// Error codes used by the methods below (each method lists the subset it can return):
//   InvalidArgument    empty path, NUL byte, too long, names a directory where a file is needed
//                      (or a file where a directory is needed), the root itself as a write target
//   NotFound           the file or a parent directory does not exist, or a component of the
//                      path is not a directory
//   PermissionDenied   outside the workspace (lexically or via a symlink), sensitive path, special
//                      file or pseudo file system, symlink leaf on write, symlink loop or magic
//                      link, a directory swapped during a write, the OS said EACCES/EPERM/EROFS
//   AlreadyExists      Rename onto an existing destination
//   ResourceExhausted  ReadAll over max_bytes, out of fds, disk full, quota
//   Unavailable        the kernel lacks openat2 (Linux < 5.6) — from Open only
//   FailedPrecondition rare OS refusals (ETXTBSY, ENOTEMPTY)
//   Internal           any other unexpected errno (message carries strerror), or /proc not
//                      mounted (real paths cannot be checked, so the call fails closed)
//
// Thread-safety: thread-safe. All methods may be called concurrently; the roots are immutable
// after Open, the cwd and the lock table are guarded by internal mutexes. Concurrent writes to
// the SAME path are each atomic (last rename wins); callers that read-modify-write take
// LockPaths first.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/base/unique_fd.h"

namespace talaria::safety {

// Whether WriteAtomic/Remove/Rename fsync the file and the directory. kNone is for scratch data
// and tests on slow disks (a crash of the MACHINE may then lose or zero the write; a crash of
// the process still never leaves a torn file).
enum class Durability : unsigned char { kFsync, kNone };

// Whether reads accept a regular file with more than one hard link. A hard link inside a root
// may name any file of the same file system (`ln /etc/shadow ./notes`, `ln ~/.ssh/id_ed25519 k`),
// and nothing in the file says where its other names are: refusing multiply-linked files is the
// only way to keep the roots' promise for content. kAllow is for trees known to hard-link their
// own files (pnpm stores, `cp -al` snapshots): config `files.read_hard_links: true`.
enum class HardLinkReads : unsigned char { kRefuse, kAllow };

struct WorkspaceOptions {
  // Directories the tools may touch; "/" means unconfined. Each must exist. Non-empty.
  std::vector<std::string> roots;
  // Initial session cwd: absolute inside a root, or relative to the first root. Empty = the
  // first root.
  std::string cwd;
  // Expansion of "~" and base of the ~/ deny rules. Empty = $HOME (no home rules if unset).
  std::string home;
  // talaria's state dir for the talaria_home deny rules. Empty = TalariaHome().
  std::string talaria_home;
  Durability durability = Durability::kFsync;
  HardLinkReads hard_link_reads = HardLinkReads::kRefuse;
  // Testing seam: when set, WriteAtomic calls it with the display path after the temp file is
  // written and before the parent is re-verified and the rename commits. Lets tests swap a
  // directory at the worst moment deterministically. Leave empty outside tests.
  std::function<void(std::string_view)> before_commit_for_testing;
};

struct ResolvedPath {
  size_t root_index = 0;
  // Normalized, beneath the root, no "." or ".." components; "" = the root itself.
  std::string relative;
  // Absolute path for messages and lock keys: the root as given joined with `relative`.
  std::string display;
};

struct FileInfo {
  uint64_t size = 0;
  mode_t mode = 0;  // st_mode: type and permission bits
  int64_t mtime_ns = 0;
  dev_t dev = 0;
  ino_t ino = 0;
};

struct WriteResult {
  size_t bytes_written = 0;
  // Parent directories this call created, outermost first (display paths).
  std::vector<std::string> dirs_created;
  // Display path of the file written.
  std::string resolved_path;
  // True when no file existed at the path before.
  bool created = false;
  // The new file's metadata.
  FileInfo after;
};

class Workspace;

// Holds the per-path mutexes taken by Workspace::LockPaths until destroyed. Move-only.
// Not thread-safe; caller synchronises (a PathLock belongs to one thread at a time).
class PathLock {
 public:
  PathLock() = default;
  ~PathLock();
  PathLock(PathLock&& other) noexcept;
  PathLock& operator=(PathLock&& other) noexcept;
  PathLock(const PathLock&) = delete;
  PathLock& operator=(const PathLock&) = delete;

  // Releases early (idempotent).
  void Unlock();
  // The lock keys held, sorted.
  const std::vector<std::string>& keys() const { return keys_; }

 private:
  friend class Workspace;
  struct Table;
  std::shared_ptr<Table> table_;
  std::vector<std::string> keys_;
};

class Workspace {
 public:
  // Opens every root (O_PATH directory fd) and validates the cwd.
  // Errors: InvalidArgument (no roots, a root or cwd that is not an absolute/valid path, cwd
  // outside the roots), NotFound (a root or the cwd does not exist), PermissionDenied,
  // Unavailable (no openat2), Internal.
  static Result<std::shared_ptr<Workspace>> Open(WorkspaceOptions options);

  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // The session cwd (absolute display path inside a root). Returned by value: SetCwd may run
  // concurrently.
  std::string cwd() const;
  // Changes the session cwd; `path` resolves like any other path and must be an existing
  // directory inside the workspace. Errors: InvalidArgument (not a directory, bad path),
  // NotFound, PermissionDenied, Internal.
  Status SetCwd(std::string_view path);

  // True when some root is "/".
  bool unconfined() const;

  // Lexical resolution only (no file-system access): which root, and the part beneath it.
  // Errors: InvalidArgument (empty, NUL, too long), PermissionDenied (outside the workspace).
  Result<ResolvedPath> Resolve(std::string_view path) const;

  // Opens a regular file for reading (O_RDONLY|O_CLOEXEC), following in-root symlinks.
  // Fills `resolved` and `info` (of the opened inode) when non-null.
  // Errors: InvalidArgument (a directory), NotFound, PermissionDenied (outside, sensitive
  // for read, special file, pseudo fs, loop/magic link), ResourceExhausted, Internal.
  Result<UniqueFd> OpenRead(std::string_view path, ResolvedPath* resolved = nullptr,
                            FileInfo* info = nullptr) const;

  // OpenRead + read the whole file. Errors: those of OpenRead, plus ResourceExhausted when the
  // file is (or grows) larger than max_bytes (nothing returned then).
  Result<std::string> ReadAll(std::string_view path, size_t max_bytes,
                              FileInfo* info = nullptr) const;

  // Metadata of any existing object (file, dir, device...) without reading it; follows in-root
  // symlinks. No sensitivity rule applies (nothing is read). Errors: InvalidArgument,
  // NotFound, PermissionDenied (outside, loop/magic link), Internal.
  Result<FileInfo> Stat(std::string_view path) const;

  // Opens a directory for listing/search (O_RDONLY|O_DIRECTORY|O_CLOEXEC; use with
  // fdopendir or getdents after dup). Directories on pseudo file systems (procfs, sysfs...)
  // are refused. Errors: InvalidArgument (not a directory), NotFound, PermissionDenied,
  // ResourceExhausted, Internal.
  Result<UniqueFd> OpenDir(std::string_view path) const;

  // For tree walkers holding a directory fd obtained from OpenDir/OpenDirAt: open the entry
  // `name` (one component, no '/'; never followed if it is a symlink) with the same checks as
  // OpenRead except the sensitivity rule — call IsSensitiveForRead(display) first. Errors:
  // InvalidArgument (bad name, directory), NotFound, PermissionDenied (symlink, special file,
  // pseudo fs), ResourceExhausted, Internal.
  Result<UniqueFd> OpenReadAt(int dir_fd, std::string_view name, FileInfo* info = nullptr) const;
  // Opens the subdirectory `name` of `dir_fd` for listing (a symlink is never followed).
  // Errors as OpenDir.
  Result<UniqueFd> OpenDirAt(int dir_fd, std::string_view name) const;

  // Atomically replaces (or creates) the file at `path` with `content`: missing parent
  // directories are created one at a time (mkdirat under the parent fd), a temp file is created
  // beside the target (O_CREAT|O_EXCL, random name), written fully, fsynced, renamed over the
  // target, and the directory fsynced. The existing file's mode (and owner, when permitted) is
  // kept; a new file gets `mode_for_new` (default 0644), minus the umask. Before the rename the
  // parent is re-resolved from the root; if it is no longer the directory written into (a
  // swap), the temp file is removed and the call fails. The leaf is never followed.
  // A killed process leaves the target old or new (and possibly a hidden
  // ".<name>.talaria-tmp-XXXXXXXXXXXXXXXX" file beside it).
  // Errors: InvalidArgument (bad path, the root itself, target is a directory), NotFound (a
  // parent component exists but is not a directory), PermissionDenied (outside, sensitive,
  // leaf is a symlink or special file, directory swapped, EACCES/EROFS), ResourceExhausted
  // (ENOSPC, EDQUOT, EMFILE), Internal.
  Result<WriteResult> WriteAtomic(std::string_view path, std::string_view content,
                                  std::optional<mode_t> mode_for_new = std::nullopt) const;

  // Pre-flight for multi-file edits: succeeds when WriteAtomic(path, ...) would pass every
  // path and policy check right now (it creates nothing). Errors as WriteAtomic.
  Status CheckWritable(std::string_view path) const;

  // Unlinks a file (or a symlink itself; never its target). Directories are refused.
  // Errors: InvalidArgument (a directory, the root), NotFound, PermissionDenied (outside,
  // sensitive), Internal.
  Status Remove(std::string_view path) const;

  // Moves a file (or symlink) within the workspace; the destination's parent directories are
  // created; an existing destination is refused (renameat2 RENAME_NOREPLACE). Both ends obey
  // the write rules, and a read-denied source (a .env file) is refused: moving it under another
  // name would launder it past the read rules. Errors: as WriteAtomic, plus AlreadyExists
  // (destination exists) and NotFound (source missing).
  Status Rename(std::string_view from, std::string_view to) const;

  // Locks the given paths (each resolved to its display path when possible, deduplicated,
  // locked in sorted order, so two callers locking {a,b} and {b,a} cannot deadlock). Blocks
  // until all are held. REQUIRES: the calling thread holds no other PathLock of this
  // Workspace (nesting can deadlock). Thread-safe.
  PathLock LockPaths(std::vector<std::string> paths) const;

  // Lexical check of an absolute display path (as in ResolvedPath::display) against the
  // read-deny rules, for search to omit files without opening them (a relative string gets the
  // name rules only). Thread-safe, no I/O.
  bool IsSensitiveForRead(std::string_view display_path) const;

 private:
  struct Impl;
  explicit Workspace(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace talaria::safety
