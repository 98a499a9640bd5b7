// Private helpers of the safety module: thin syscall wrappers (openat2, readlink of an fd,
// pseudo-file-system detection) and errno -> Status mapping with messages that name only the
// caller's path. Thread-safety: thread-safe (no state).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "talaria/base/status.h"
#include "talaria/base/unique_fd.h"
#include "talaria/confinement/workspace.h"

namespace talaria::safety::internal {

// openat2(2) via syscall(); retries EINTR and (a few times) EAGAIN. Returns the fd or -1 with
// errno set.
int Openat2(int dir_fd, const char* path, uint64_t flags, uint64_t mode, uint64_t resolve);

// Whether the running kernel implements openat2.
bool HaveOpenat2();

// Maps an errno from an operation on `shown` (the caller's spelling of the path) to a Status.
Status ErrnoStatus(int err, std::string_view op, std::string_view shown);

// The path the kernel has for `fd` (readlink of /proc/self/fd/N). Internal when /proc is not
// available (callers fail closed).
Result<std::string> FdRealPath(int fd);

// Name of the pseudo file system `fd` lives on (procfs, sysfs, ...), or nullopt for an
// ordinary one. Internal on fstatfs failure.
Result<std::optional<std::string_view>> PseudoFsName(int fd);

// "a character device", "a FIFO", ... for a non-regular st_mode.
std::string_view FileTypeName(mode_t mode);

FileInfo ToFileInfo(const struct stat& st);

// Reopens the inode behind an O_PATH fd with `flags` (through /proc/self/fd/N) and checks that
// the new fd refers to the inode `before` (the O_PATH fd's fstat) names; `after`, when given,
// receives the new fd's fstat.
Result<UniqueFd> Reopen(int path_fd, const struct stat& before, int flags, std::string_view shown,
                        struct stat* after = nullptr);

}  // namespace talaria::safety::internal
