// The path work a restore needs beyond safety::Workspace::WriteAtomic: a snapshot may hold a
// directory where the present has a symlink (or the reverse), and a symlink to put back as a
// link. Every step is relative to one descriptor of the project directory, one component at a
// time with O_NOFOLLOW, so no symlink, in the present or planted during the restore, leads a
// write out of the project. What a restore replaces is in the pre-rollback snapshot already.
// Thread-safety: functions of their arguments; the caller holds the project's lock.
#pragma once

#include <functional>
#include <string_view>

#include "talaria/base/status.h"
#include "talaria/base/unique_fd.h"

namespace talaria::checkpoints {

// Opens the directory holding `rel` (a path validated by the store: relative, no "." or ".."
// parts) beneath `root_fd`. Missing directories are created (0755 minus the umask); a symlink
// standing where the snapshot has a directory is removed, never followed, and replaced by a
// directory. Errors: FailedPrecondition (a parent is a regular file or another non-directory
// in the present), Internal (I/O).
Result<UniqueFd> OpenParentBeneath(int root_fd, std::string_view rel);

// Removes the entry `name` of `dir_fd` when it is a symlink (the link, not its target), so a
// regular file can be written in its place. Ok when it is anything else or absent.
Status RemoveLinkEntry(int dir_fd, std::string_view name);

// Whether the project path `rel` (a file or a symlink) is held by the pre-rollback snapshot.
using KeptBySnapshot = std::function<bool(std::string_view rel)>;

// Removes the directory `name` of `dir_fd` (project path `rel`) and everything under it, so the
// snapshot's file or link can stand there. Only when every file and link under it is `kept`: a
// directory holding anything the pre-rollback snapshot left out (an excluded or oversize file,
// a socket) stays, and the error names it. Never follows a link (a link inside is removed as a
// link); works beneath `dir_fd` alone, so nothing outside it is touched. Ok when `name` is not a
// directory. Errors: FailedPrecondition (something not kept; deeper than 256 levels; the tree
// changed while it was removed), Internal (I/O).
Status RemoveDirectoryEntry(int dir_fd, std::string_view name, std::string_view rel,
                            const KeptBySnapshot& kept);

// Puts a symlink `name` -> `target` in `dir_fd`, replacing a file or link of that name
// atomically (a link made beside it, then renamed over it). Errors: FailedPrecondition (a
// directory stands there), InvalidArgument (empty target or a NUL in it), Internal.
Status PlaceLinkEntry(int dir_fd, std::string_view name, std::string_view target);

}  // namespace talaria::checkpoints
