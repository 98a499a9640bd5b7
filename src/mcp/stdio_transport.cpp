#include "talaria/mcp/stdio_transport.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "talaria/base/file_io.h"
#include "talaria/base/unique_fd.h"

namespace talaria::mcp {
namespace {

void ServeLine(McpServer& server, std::string& line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.find_first_not_of(" \t") != std::string::npos) server.HandleMessage(line);
  line.clear();
}

void RejectOversize(McpServer& server, size_t bytes, size_t limit) {
  server.RejectMessage(kInvalidRequest, "Invalid Request: message of " + std::to_string(bytes) +
                                            " bytes exceeds the limit of " + std::to_string(limit));
}

}  // namespace

bool FdLineWriter::Write(std::string_view line) {
  std::unique_lock lock(mu_);
  drained_.wait(lock, [this] { return broken_ || queued_.size() < kMaxQueuedBytes; });
  if (broken_) return false;
  if (writing_) {  // the Write in progress takes this line along
    queued_.append(line);
    queued_.push_back('\n');
    return true;
  }
  // Nobody writing, so nothing queued either: the line goes out from the caller's buffer. The
  // server's Outlet hands lines over one at a time, so this is the usual path, and copying each
  // answer into queued_ first (a fresh allocation every time) cost as much as its write.
  writing_ = true;
  lock.unlock();
  const bool written = WriteLine(line);
  lock.lock();
  if (!written) {
    broken_ = true;
    on_broken_.request_stop();
  }
  while (!queued_.empty() && !broken_) {
    std::string batch;
    batch.swap(queued_);
    lock.unlock();
    const bool ok = WriteOut(batch);
    lock.lock();
    if (!ok) {
      broken_ = true;
      on_broken_.request_stop();
    }
    drained_.notify_all();
  }
  writing_ = false;
  drained_.notify_all();
  return !broken_;
}

bool FdLineWriter::WriteLine(std::string_view line) {
  static constexpr char kNewline = '\n';
  iovec parts[2] = {{const_cast<char*>(line.data()), line.size()},
                    {const_cast<char*>(&kNewline), 1}};
  ssize_t n;
  do {
    n = ::writev(fd_, parts, 2);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
  // A short write or a full non-blocking descriptor: WriteOut waits for room for the rest.
  size_t done = n > 0 ? static_cast<size_t>(n) : 0;
  if (done < line.size()) {
    if (!WriteOut(line.substr(done))) return false;
    done = line.size();
  }
  return done > line.size() || WriteOut(std::string_view(&kNewline, 1));
}

bool FdLineWriter::WriteOut(std::string_view bytes) {
  return WriteAllUntil(fd_, bytes, WriteWait{}).ok();  // a client not reading yet is waited for
}

Status ServeLines(McpServer& server, const StdioOptions& options) {
  UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake) return InternalError(std::string("eventfd: ") + std::strerror(errno));
  std::stop_callback on_stop(options.stop, [fd = wake.get()] {
    const uint64_t one = 1;
    (void)!::write(fd, &one, sizeof one);
  });
  std::string line;
  bool skipping = false;  // inside an over-long line
  size_t skipped = 0;
  std::string buf(64 * 1024, '\0');
  for (;;) {
    if (options.stop.stop_requested()) return Status::Ok();
    pollfd fds[2] = {{options.in_fd, POLLIN, 0}, {wake.get(), POLLIN, 0}};
    // Wakes at least once a second to re-check the stop token.
    const int ready = ::poll(fds, 2, 1000);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return InternalError(std::string("poll: ") + std::strerror(errno));
    if (fds[1].revents != 0) return Status::Ok();
    if (fds[0].revents == 0) continue;
    const ssize_t n = ::read(options.in_fd, buf.data(), buf.size());
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return InternalError(std::string("reading input: ") + std::strerror(errno));
    if (n == 0) {
      if (skipping) {
        RejectOversize(server, skipped, options.max_line_bytes);
      } else {
        ServeLine(server, line);
      }
      return Status::Ok();
    }
    std::string_view chunk(buf.data(), static_cast<size_t>(n));
    while (!chunk.empty()) {
      const size_t nl = chunk.find('\n');
      const std::string_view part = chunk.substr(0, nl);
      if (skipping) {
        skipped += part.size();
      } else if (line.size() + part.size() > options.max_line_bytes) {
        skipping = true;
        skipped = line.size() + part.size();
        std::string().swap(line);  // give the memory back
      } else {
        line.append(part);
      }
      if (nl == std::string_view::npos) break;
      if (skipping) {
        RejectOversize(server, skipped, options.max_line_bytes);
        skipping = false;
        skipped = 0;
      } else {
        ServeLine(server, line);
      }
      chunk.remove_prefix(nl + 1);
    }
  }
}

}  // namespace talaria::mcp
