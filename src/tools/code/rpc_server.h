// The host side of the execute_code RPC: serves the parent end of a socketpair whose other end
// the interpreter inherited as descriptor 3 (no path on disk, so nobody else can connect).
//
// Authentication is by kernel-attested sender, not by a token: the socket has SO_PASSCRED, so
// every read carries the pid of the process that wrote those bytes (SO_PEERCRED would not do:
// on a socketpair it names the process that created the pair, i.e. us). The interpreter's
// bootstrap sends a hello frame before any user code runs; its sender must be the spawned child
// or a descendant of it (bwrap sits in between), and from then on only frames written by that one
// pid are served. Bytes from any other process that got hold of the descriptor (a subprocess the
// script started with the fd) are discarded and counted, never answered.
//
// Requests are served by up to kMaxConcurrentCalls worker threads, so calls from a script's
// threads overlap; responses go back in completion order, matched by id.
// Thread-safety: thread-safe. The handler is called concurrently from the worker threads.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>  // Request holds Json by value (a private header)

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/base/unique_fd.h"
#include "tools/code/rpc_frame.h"

namespace talaria::tools::code {

inline constexpr int kMaxConcurrentCalls = 8;

// Runs one call and returns the tool result's text. Must honour the execution's cancellation.
using RpcHandler = std::function<std::string(const std::string& tool, Json args)>;

struct RpcServerStats {
  int64_t requests = 0;         // request frames answered (refusals included)
  int64_t rejected_frames = 0;  // frames from an unauthenticated sender, or malformed
  std::string rejection;        // the first reason, for the result's warning
  bool authenticated = false;   // a valid hello arrived
};

class RpcServer {
 public:
  // Starts serving `socket` (the parent end; made non-blocking with SO_PASSCRED here). The reader
  // stops at `deadline` at the latest. Errors: Internal when the socket cannot be set up.
  static Result<std::unique_ptr<RpcServer>> Start(UniqueFd socket, RpcHandler handler,
                                                  std::chrono::steady_clock::time_point deadline);
  ~RpcServer();
  RpcServer(const RpcServer&) = delete;
  RpcServer& operator=(const RpcServer&) = delete;

  // The pid of the spawned child: the hello's sender must be it or one of its descendants.
  void ExpectChild(pid_t pid);
  // Stops reading, lets the calls in flight finish (the caller has cancelled them), joins.
  // Idempotent.
  void Stop();
  RpcServerStats stats() const;

 private:
  struct Request {
    Json id;
    std::string tool;
    Json args;
  };

  RpcServer(UniqueFd socket, UniqueFd wake, RpcHandler handler,
            std::chrono::steady_clock::time_point deadline);
  // What the reader keeps between datagrams.
  struct Reading {
    FrameReader interpreter;                // the authenticated interpreter's byte stream
    std::map<pid_t, FrameReader> pre_auth;  // by sender, until the hello is verified
  };

  void ReadLoop(std::stop_token stop);
  // Takes `bytes` from `sender` before any hello was verified; true once `sender` proved to be
  // the interpreter (its frames after the hello are then in reading.interpreter).
  bool Authenticate(pid_t sender, std::string_view bytes, Reading& reading,
                    const std::stop_token& stop);
  // Serves every whole frame `frames` holds; false after an oversized one (the reader stops).
  bool ServeFrames(FrameReader& frames);
  void WorkLoop(std::stop_token stop);
  // One reassembled frame from the authenticated interpreter.
  void HandleFrame(const std::string& payload);
  void Reject(std::string why);
  void Enqueue(Request request);
  void Respond(const Json& id, std::string_view result_text, std::string_view error = {});
  bool IsAuthorised(pid_t sender) const;

  UniqueFd socket_;
  UniqueFd wake_;  // eventfd: Stop() wakes the reader's poll
  RpcHandler handler_;
  const std::chrono::steady_clock::time_point deadline_;
  std::atomic<pid_t> child_{0};
  pid_t interpreter_ = 0;  // owned by the reader thread once the hello is verified

  mutable std::mutex mu_;
  std::condition_variable_any work_cv_;
  std::deque<Request> queue_;          // Guarded by mu_.
  int idle_workers_ = 0;               // Guarded by mu_.
  std::vector<std::jthread> workers_;  // Guarded by mu_ (grown by the reader).
  RpcServerStats stats_;               // Guarded by mu_.
  std::stop_source workers_stop_;

  std::mutex send_mu_;  // one response frame at a time on the socket
  std::jthread reader_;
  std::once_flag stopped_;
};

}  // namespace talaria::tools::code
