// CdpClient: request/response and events over one CdpTransport. Each command gets an id and
// waits (bounded by its deadline and cancel token) for the reply with that id; events go to one
// handler on a thread of their own, so a handler may itself issue commands (the reader thread
// never runs user code and never blocks on it). Flat sessions: a command or event carries the
// sessionId of the target it belongs to (a page, an out-of-process iframe); "" is the browser.
//
// A call returns only once every event that arrived before its reply has been handled.
// Thread-safety: Call and Notify from any thread; SetEventHandler before the first event
// matters; Close from any thread (pending calls return Unavailable).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/browser/cdp_transport.h"
#include "talaria/browser/page_driver.h"

namespace talaria::browser {

class CdpClient {
 public:
  using EventHandler = std::function<void(const std::string& method, const Json& params,
                                          const std::string& session)>;

  CdpClient(std::unique_ptr<CdpTransport> transport, EventHandler on_event);
  ~CdpClient();
  CdpClient(const CdpClient&) = delete;
  CdpClient& operator=(const CdpClient&) = delete;

  // The reply's "result". Errors: the browser's error (InvalidArgument with its message),
  // DeadlineExceeded, Cancelled, Unavailable (connection gone).
  Result<Json> Call(std::string_view method, const Json& params, const std::string& session,
                    const CallLimits& limits);
  // The commands sent back to back, each without waiting for the one before to be answered,
  // then every reply waited for (one deadline for all): a round trip per command saved where
  // the order of sending is all the caller needs. One result per command, in order.
  struct Command {
    std::string_view method;
    Json params;
  };
  std::vector<Result<Json>> CallEach(const std::vector<Command>& commands,
                                     const std::string& session, const CallLimits& limits);
  // Sends without waiting for the reply (it is dropped when it arrives).
  Status Notify(std::string_view method, const Json& params, const std::string& session);
  void Close();
  bool closed() const;
  // Why the connection ended ("" while it is open).
  std::string close_reason() const;

 private:
  struct Pending {
    bool done = false;
    Result<Json> reply = Json();
    uint64_t events_before = 0;  // events received ahead of the reply
  };
  void ReadLoop(const std::stop_token& stop);
  void EventLoop(const std::stop_token& stop);
  void Dispatch(std::string_view text);
  Status SendCommand(int64_t id, std::string_view method, const Json& params,
                     const std::string& session);
  // Registers and sends one command: its id and reply slot, or the send's error.
  Result<std::pair<int64_t, std::shared_ptr<Pending>>> Start(std::string_view method,
                                                             const Json& params,
                                                             const std::string& session);
  // Waits for the reply of a command Start sent.
  Result<Json> Finish(int64_t id, const std::shared_ptr<Pending>& pending, std::string_view method,
                      const CallLimits& limits);

  std::unique_ptr<CdpTransport> transport_;
  EventHandler on_event_;

  mutable std::mutex mu_;
  std::condition_variable replies_cv_;
  std::condition_variable events_cv_;
  int64_t next_id_ = 1;
  std::map<int64_t, std::shared_ptr<Pending>> pending_;
  std::deque<std::tuple<std::string, Json, std::string>> events_;
  bool closed_ = false;
  std::string close_reason_;
  // A call returns only after the events that arrived before its reply were handled, so a
  // caller sees the state those events describe (a navigation a script requested, a crash).
  uint64_t events_received_ = 0;
  uint64_t events_handled_ = 0;

  std::jthread events_thread_;
  std::jthread reader_;
};

}  // namespace talaria::browser
