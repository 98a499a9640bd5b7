#include "mcp/outlet.h"

#include <array>
#include <exception>

#include "talaria/base/log.h"

namespace talaria::mcp {
namespace {

constexpr std::array<std::string_view, 8> kLogLevels = {"debug", "info",     "notice", "warning",
                                                        "error", "critical", "alert",  "emergency"};

}  // namespace

int LogLevelRank(std::string_view level) {
  for (size_t i = 0; i < kLogLevels.size(); ++i) {
    if (kLogLevels[i] == level) return static_cast<int>(i);
  }
  return -1;
}

// One thread at a time calls the sink and takes along whatever others queued meanwhile, so a
// thread with a message never sleeps on a mutex held across another's write.
void Outlet::Deliver(std::string_view line, std::string* owned, const Routing& routing, bool wait) {
  std::unique_lock lock(send_mu_);
  if (delivering_ && queued_bytes_ >= kMaxQueuedBytes) {
    ++send_waiters_;
    send_cv_.wait(lock,
                  [&] { return send_closed_ || !delivering_ || queued_bytes_ < kMaxQueuedBytes; });
    --send_waiters_;
  }
  if (send_closed_ || !sink_) return;
  if (delivering_) {
    queued_bytes_ += line.size();
    send_queue_.push_back(Queued{owned != nullptr ? std::move(*owned) : std::string(line),
                                 std::string(routing.request), routing});
    const uint64_t ticket = ++enqueued_;
    if (wait) {
      ++send_waiters_;
      send_cv_.wait(lock, [&] { return delivered_ >= ticket; });
      --send_waiters_;
    }
    return;
  }
  delivering_ = true;
  ++enqueued_;
  lock.unlock();
  CallSink(line, routing);
  lock.lock();
  ++delivered_;
  while (!send_queue_.empty()) {
    Queued next = std::move(send_queue_.front());
    send_queue_.pop_front();
    queued_bytes_ -= next.line.size();
    lock.unlock();
    Routing routed = next.flags;
    routed.request = next.request;
    CallSink(next.line, routed);
    lock.lock();
    ++delivered_;
    if (send_waiters_ > 0) send_cv_.notify_all();
  }
  delivering_ = false;
  if (send_waiters_ > 0) send_cv_.notify_all();
}

// A sink that throws loses that message, not the outlet: the delivering flag must come down.
void Outlet::CallSink(std::string_view line, const Routing& routing) {
  try {
    sink_(line, routing);
  } catch (const std::exception& e) {
    LogError(std::string("mcp: an outgoing message was lost: ") + e.what());
  } catch (...) {
    LogError("mcp: an outgoing message was lost to an exception");
  }
}

void Outlet::Close() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
  std::unique_lock lock(send_mu_);
  // What was handed in before goes out first: a Post's caller was told it would.
  ++send_waiters_;
  send_cv_.wait(lock, [&] { return !delivering_; });
  --send_waiters_;
  send_closed_ = true;
  send_cv_.notify_all();
}

void Outlet::SetClientCapabilities(Json capabilities) {
  std::lock_guard lock(mu_);
  capabilities_ = std::move(capabilities);
}

Json Outlet::ClientCapabilities() const {
  std::lock_guard lock(mu_);
  return capabilities_;
}

bool Outlet::ClientSupports(std::string_view capability) const {
  std::lock_guard lock(mu_);
  if (!capabilities_.is_object()) return false;
  auto it = capabilities_.find(std::string(capability));
  return it != capabilities_.end() && !it->is_null() && !(it->is_boolean() && !it->get<bool>());
}

Result<Json> Outlet::Request(std::string_view method, const Json& params, const Routing& routing,
                             const std::stop_token& cancel, ClientChannel::Deadline deadline) {
  auto waiter = std::make_shared<Waiter>();
  int64_t id = 0;
  {
    std::lock_guard lock(mu_);
    if (closed_) return Err(UnavailableError("the MCP client is gone"));
    id = next_id_++;
    waiting_.emplace(id, waiter);
  }
  Send(EncodeRequest(Json(id), method, params), routing);
  std::unique_lock lock(mu_);
  // Sliced so a deadline of time_point::max() never overflows the wait.
  while (!waiter->answer && !closed_ && !cancel.stop_requested() &&
         std::chrono::steady_clock::now() < deadline) {
    const auto slice =
        std::min(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(1));
    cv_.wait_until(lock, cancel, slice, [&] { return waiter->answer.has_value() || closed_; });
  }
  if (waiter->answer) return std::move(*waiter->answer);
  waiting_.erase(id);
  const bool closed = closed_;
  lock.unlock();
  if (closed)
    return Err(
        UnavailableError("the MCP client went away before answering " + std::string(method)));
  const bool cancelled = cancel.stop_requested();
  // The client may still be showing a dialog: tell it to drop the request.
  Json note = Json::object();
  note["requestId"] = id;
  note["reason"] = cancelled ? "the tool call was cancelled" : "the tool call's deadline passed";
  Send(EncodeNotification("notifications/cancelled", note), routing);
  if (cancelled)
    return Err(CancelledError(std::string(method) + " cancelled: the tool call was cancelled"));
  return Err(DeadlineExceededError("the client did not answer " + std::string(method) +
                                   " before the deadline"));
}

bool Outlet::Resolve(const Message& response) {
  const Json& doc = *response.doc;
  const Json& id = response.id();
  if (!id.is_number_integer()) return false;
  Result<Json> answer = Json::object();
  if (auto error = doc.find("error"); error != doc.end()) {
    std::string text = "the client answered with an error";
    if (error->is_object()) {
      if (auto code = error->find("code"); code != error->end() && code->is_number_integer()) {
        text += " " + std::to_string(code->get<int64_t>());
      }
      if (auto message = error->find("message"); message != error->end() && message->is_string()) {
        text += ": " + message->get<std::string>();
      }
    }
    answer = Err(InternalError(text));
  } else if (auto result = doc.find("result"); result != doc.end() && result->is_object()) {
    answer = *result;
  } else {
    answer = Err(InternalError("the client's answer has no result object"));
  }
  {
    std::lock_guard lock(mu_);
    auto it = waiting_.find(id.get<int64_t>());
    if (it == waiting_.end()) return false;
    it->second->answer = std::move(answer);
    waiting_.erase(it);
  }
  cv_.notify_all();
  return true;
}

bool CallChannel::Supports(std::string_view capability) const {
  return outlet_->ClientSupports(capability);
}

void CallChannel::Log(std::string_view level, std::string_view logger, const Json& data) {
  if (ended_ || !outlet_->LogEnabled(LogLevelRank(level))) return;
  Json p = Json::object();
  p["level"] = std::string(level);
  if (!logger.empty()) p["logger"] = std::string(logger);
  p["data"] = data;
  outlet_->Send(EncodeNotification("notifications/message", p), Related());
}

void CallChannel::Progress(double progress, std::optional<double> total, std::string_view message) {
  if (ended_ || progress_token_.is_null()) return;
  std::lock_guard lock(progress_mu_);
  if (last_progress_ && progress <= *last_progress_) return;
  last_progress_ = progress;
  Json p = Json::object();
  p["progressToken"] = progress_token_;
  p["progress"] = progress;
  if (total) p["total"] = *total;
  if (!message.empty()) p["message"] = std::string(message);
  outlet_->Send(EncodeNotification("notifications/progress", p), Related());
}

Result<Json> CallChannel::Request(std::string_view method, const Json& params,
                                  std::stop_token cancel, Deadline deadline) {
  if (ended_)
    return Err(FailedPreconditionError("the tool call has ended: no more requests to the client"));
  return outlet_->Request(method, params, Related(), cancel, deadline);
}

}  // namespace talaria::mcp
