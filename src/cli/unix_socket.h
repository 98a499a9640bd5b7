// Local stream sockets for talaria's own daemons (the browser daemon): a private directory, a
// listening socket only its owner may reach, the peer's kernel-attested credentials, and
// length-prefixed frames read and written under a deadline.
//
// A socket path longer than sun_path allows (a deep $TALARIA_HOME) is reached through
// /proc/self/fd/<dir>/<name>, so the length of the directory never matters.
// Thread-safety: free functions on descriptors the caller owns; no shared state.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "talaria/base/status.h"
#include "talaria/base/unique_fd.h"

namespace talaria::cli {

using SteadyTime = std::chrono::steady_clock::time_point;

// Creates `path` (mode 0700) when missing. An existing directory must belong to us; it is
// tightened to 0700 when it is open to group or others. PermissionDenied when it is another
// user's or not a directory.
Status EnsurePrivateDirectory(const std::string& path);

// A listening socket at `path`, mode 0600, non-blocking and close-on-exec. AlreadyExists when
// something is at `path` (the caller decides whether it is stale).
Result<UniqueFd> ListenUnixSocket(const std::string& path);

// A blocking, close-on-exec connection to `path`. NotFound when nothing listens there (no file,
// or a socket file whose listener is gone: ECONNREFUSED); other failures Unavailable.
Result<UniqueFd> ConnectUnixSocket(const std::string& path);

struct PeerIdentity {
  pid_t pid = -1;
  uid_t uid = 0;
};
// SO_PEERCRED: who is at the other end of a connected unix socket.
Result<PeerIdentity> PeerOf(int fd);

// Frames: a 4-byte big-endian length, then that many bytes. Both ends bound what they accept.
Status SendFrame(int fd, std::string_view payload, SteadyTime deadline);
// NotFound when the peer closed before the first byte of the frame (a clean end); Unavailable
// when it closed mid-frame or reset; ResourceExhausted over `max_bytes`; DeadlineExceeded.
Result<std::string> ReceiveFrame(int fd, size_t max_bytes, SteadyTime deadline);

}  // namespace talaria::cli
