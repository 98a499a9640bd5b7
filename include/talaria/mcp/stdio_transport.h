// The MCP stdio transport: newline-delimited JSON-RPC messages on a pair of descriptors
// (stdin/stdout for `talaria mcp`). stdout carries protocol messages only; logs go to stderr.
//
//   std::stop_source stop;
//   talaria::mcp::FdLineWriter out(STDOUT_FILENO, stop);
//   auto server = talaria::mcp::McpServer::Create(dispatcher, toolsets, options,
//                                                 [&out](std::string_view line) { out.Write(line);
//                                                 });
//   talaria::mcp::ServeLines(**server, {.stop = stop.get_token()});  // until EOF or stop
//   (*server)->Shutdown(std::chrono::seconds(5));
//
// Thread-safety: FdLineWriter is thread-safe; ServeLines runs on the calling thread.
#pragma once

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>

#include "talaria/base/status.h"
#include "talaria/mcp/jsonrpc.h"
#include "talaria/mcp/server.h"

namespace talaria::mcp {

// Writes each line plus '\n' to a descriptor, whole (retrying short writes), lines never
// interleaved and in the order of the Write calls. Group commit: a Write that finds another one
// writing queues its line for that one to write with its own, so concurrent answers (16 calls in
// flight) go out in one write() instead of queueing on a lock — fewer syscalls and fewer wake-ups
// of the reader at the other end. At most kMaxQueuedBytes wait; a Write beyond that waits for the
// queue to drain (a client that does not read slows its calls down, it does not grow our memory).
// When the peer is gone (EPIPE or another write error) it stops writing and requests
// `on_broken`'s stop, so the reader ends too. REQUIRES: SIGPIPE is ignored or blocked, else a
// closed peer kills the process.
class FdLineWriter {
 public:
  static constexpr size_t kMaxQueuedBytes = 8 << 20;

  explicit FdLineWriter(int fd, std::stop_source on_broken = std::stop_source(std::nostopstate))
      : fd_(fd), on_broken_(std::move(on_broken)) {}

  // False once the descriptor failed (the line is dropped). A line queued behind another Write
  // returns true and is written by that one.
  bool Write(std::string_view line);
  bool broken() const { return broken_.load(); }

 private:
  // Every byte of `bytes`, waiting for POLLOUT on a non-blocking descriptor; false on failure.
  bool WriteOut(std::string_view bytes);
  // `line` and a newline, in one writev when the descriptor takes it all; false on failure.
  bool WriteLine(std::string_view line);

  const int fd_;
  std::stop_source on_broken_;
  std::mutex mu_;
  std::condition_variable drained_;
  std::string queued_;    // Guarded by mu_. Lines not yet handed to write().
  bool writing_ = false;  // Guarded by mu_. A Write is writing queued_ out.
  std::atomic<bool> broken_{false};
};

struct StdioOptions {
  int in_fd = STDIN_FILENO;
  // Longer lines are skipped as they stream in (never buffered whole) and answered with -32600.
  size_t max_line_bytes = kDefaultMaxMessageBytes;
  // Ends the loop promptly (a signal, a broken output).
  std::stop_token stop;
};

// Feeds each line read from options.in_fd to `server` until EOF (a last line without a newline
// is served too), `stop`, or a read error. Blank lines are ignored; a trailing '\r' is dropped.
// Returns Ok at EOF or stop; Internal when reading fails.
Status ServeLines(McpServer& server, const StdioOptions& options);

}  // namespace talaria::mcp
