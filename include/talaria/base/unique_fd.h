// UniqueFd: sole owner of one POSIX file descriptor, closed on destruction (RAII for fds).
//
// Move-only. A default-constructed or moved-from UniqueFd holds -1 and closes nothing.
// Thread-safety: not thread-safe; caller synchronises (like any value type). The descriptor it
// holds may of course be used from several threads by the caller.
#pragma once

#include <unistd.h>

#include <utility>

namespace talaria {

class UniqueFd {
 public:
  UniqueFd() = default;
  // Takes ownership of `fd` (which may be -1).
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }

  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }

  // Gives up ownership without closing; returns the descriptor (or -1).
  [[nodiscard]] int release() { return std::exchange(fd_, -1); }

  // Closes the held descriptor (if any) and takes ownership of `fd`. close(2) errors are
  // ignored: on Linux the descriptor is released even when close reports EINTR/EIO, and a
  // caller that needs to see write-back errors must fsync before closing.
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace talaria
