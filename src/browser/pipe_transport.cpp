// OpenPipe: Chromium's --remote-debugging-pipe framing. Each message is JSON followed by one NUL
// byte; the browser reads commands on its fd 3 and writes replies and events on its fd 4. When
// talaria dies the write end closes and the browser shuts down (that is why the local browser
// uses the pipe and not a port).
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>

#include "talaria/base/poll_timeout.h"
#include "talaria/base/scoped_sigpipe_block.h"
#include "talaria/base/unique_fd.h"
#include "talaria/browser/cdp_transport.h"

namespace talaria::browser {
namespace {

// A hostile or broken browser cannot make talaria buffer without bound.
constexpr size_t kMaxMessageBytes = size_t{256} << 20;

class PipeTransport final : public CdpTransport {
 public:
  PipeTransport(UniqueFd read_fd, UniqueFd write_fd, UniqueFd wake)
      : read_fd_(std::move(read_fd)), write_fd_(std::move(write_fd)), wake_(std::move(wake)) {}

  Status Send(std::string_view message) override {
    std::lock_guard lock(write_mu_);
    if (!write_fd_.valid()) return UnavailableError("cdp pipe: closed");
    ScopedSigpipeBlock no_sigpipe;
    std::string framed(message);
    framed.push_back('\0');
    size_t done = 0;
    while (done < framed.size()) {
      const ssize_t n = ::write(write_fd_.get(), framed.data() + done, framed.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        return UnavailableError(std::string("cdp pipe: write failed: ") + std::strerror(errno));
      }
      done += static_cast<size_t>(n);
    }
    return Status::Ok();
  }

  Result<std::string> Receive(std::chrono::steady_clock::time_point deadline,
                              std::stop_token cancel) override {
    std::stop_callback wake_on_cancel(cancel, [this] { Wake(); });
    for (;;) {
      // scanned_ remembers how far the buffer is known to hold no NUL, so a large message
      // arriving in many chunks is scanned once, not once per chunk.
      if (const size_t nul = buffer_.find('\0', scanned_); nul != std::string::npos) {
        std::string message = buffer_.substr(0, nul);
        buffer_.erase(0, nul + 1);
        scanned_ = 0;
        return message;
      }
      scanned_ = buffer_.size();
      if (closed_.load()) return Err(UnavailableError("cdp pipe: closed"));
      if (cancel.stop_requested()) return Err(CancelledError("cdp pipe: cancelled"));
      if (eof_) return Err(UnavailableError("cdp pipe: the browser closed the connection"));
      pollfd fds[2] = {{read_fd_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
      const int timeout = PollTimeoutMs(std::chrono::steady_clock::now(), deadline);
      const int ready = ::poll(fds, 2, timeout);
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) {
        return Err(UnavailableError(std::string("cdp pipe: poll: ") + std::strerror(errno)));
      }
      if (ready == 0) return Err(DeadlineExceededError("cdp pipe: no message before the deadline"));
      if ((fds[1].revents & POLLIN) != 0) {
        uint64_t drained = 0;
        [[maybe_unused]] const ssize_t n = ::read(wake_.get(), &drained, sizeof drained);
        continue;  // the loop head reports closed or cancelled
      }
      if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      char chunk[65536];
      const ssize_t n = ::read(read_fd_.get(), chunk, sizeof chunk);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        eof_ = true;
        continue;
      }
      buffer_.append(chunk, static_cast<size_t>(n));
      if (buffer_.size() > kMaxMessageBytes) {
        eof_ = true;
        buffer_.clear();
        scanned_ = 0;
        return Err(UnavailableError("cdp pipe: a message exceeded 256 MB; connection dropped"));
      }
    }
  }

  void Close() override {
    closed_.store(true);
    {
      std::lock_guard lock(write_mu_);
      write_fd_.reset();  // the browser sees EOF on its fd 3 and exits
    }
    Wake();
  }

 private:
  void Wake() {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_.get(), &one, sizeof one);
  }

  UniqueFd read_fd_;
  std::mutex write_mu_;
  UniqueFd write_fd_;
  UniqueFd wake_;
  std::atomic<bool> closed_{false};
  // Reader-thread state.
  std::string buffer_;
  size_t scanned_ = 0;
  bool eof_ = false;
};

}  // namespace

Result<std::unique_ptr<CdpTransport>> OpenPipe(int read_fd, int write_fd) {
  UniqueFd r(read_fd), w(write_fd);
  if (!r.valid() || !w.valid()) return Err(InvalidArgumentError("cdp pipe: invalid descriptor"));
  UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake.valid()) {
    return Err(UnavailableError(std::string("cdp pipe: eventfd: ") + std::strerror(errno)));
  }
  return std::unique_ptr<CdpTransport>(
      std::make_unique<PipeTransport>(std::move(r), std::move(w), std::move(wake)));
}

}  // namespace talaria::browser
