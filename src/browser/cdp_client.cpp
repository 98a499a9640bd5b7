// CdpClient (cdp_client.h).
#include "browser/cdp_client.h"

#include <utility>

namespace talaria::browser {

CdpClient::CdpClient(std::unique_ptr<CdpTransport> transport, EventHandler on_event)
    : transport_(std::move(transport)), on_event_(std::move(on_event)) {
  events_thread_ = std::jthread([this](const std::stop_token& stop) { EventLoop(stop); });
  reader_ = std::jthread([this](const std::stop_token& stop) { ReadLoop(stop); });
}

CdpClient::~CdpClient() {
  Close();
  reader_.request_stop();
  if (reader_.joinable()) reader_.join();
  events_thread_.request_stop();
  events_cv_.notify_all();
  if (events_thread_.joinable()) events_thread_.join();
}

void CdpClient::Close() {
  transport_->Close();
  std::lock_guard lock(mu_);
  if (!closed_) {
    closed_ = true;
    if (close_reason_.empty()) close_reason_ = "the browser connection was closed";
  }
  replies_cv_.notify_all();
  events_cv_.notify_all();
}

bool CdpClient::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

std::string CdpClient::close_reason() const {
  std::lock_guard lock(mu_);
  return close_reason_;
}

Status CdpClient::SendCommand(int64_t id, std::string_view method, const Json& params,
                              const std::string& session) {
  Json message = {{"id", id}, {"method", method}};
  if (!params.is_null()) message["params"] = params;
  if (!session.empty()) message["sessionId"] = session;
  return transport_->Send(message.dump(-1, ' ', false, Json::error_handler_t::replace));
}

Result<std::pair<int64_t, std::shared_ptr<CdpClient::Pending>>> CdpClient::Start(
    std::string_view method, const Json& params, const std::string& session) {
  auto pending = std::make_shared<Pending>();
  int64_t id = 0;
  {
    std::lock_guard lock(mu_);
    if (closed_) return Err(UnavailableError("cdp: " + close_reason_));
    id = next_id_++;
    pending_[id] = pending;
  }
  if (Status sent = SendCommand(id, method, params, session); !sent.ok()) {
    std::lock_guard lock(mu_);
    pending_.erase(id);
    return Err(sent);
  }
  return std::make_pair(id, std::move(pending));
}

Result<Json> CdpClient::Finish(int64_t id, const std::shared_ptr<Pending>& pending,
                               std::string_view method, const CallLimits& limits) {
  // Registered before taking the lock: a token already stopped runs the callback right here.
  std::stop_callback wake(limits.cancel, [this] {
    std::lock_guard inner(mu_);
    replies_cv_.notify_all();
  });
  std::unique_lock lock(mu_);
  const auto ready = [&] { return pending->done || closed_ || limits.cancel.stop_requested(); };
  if (limits.deadline == std::chrono::steady_clock::time_point::max()) {
    replies_cv_.wait(lock, ready);
  } else {
    replies_cv_.wait_until(lock, limits.deadline, ready);
  }
  if (pending->done) {
    replies_cv_.wait(lock, [&] { return events_handled_ >= pending->events_before || closed_; });
    return std::move(pending->reply);
  }
  pending_.erase(id);
  if (closed_) return Err(UnavailableError("cdp " + std::string(method) + ": " + close_reason_));
  if (limits.cancel.stop_requested()) {
    return Err(CancelledError("cdp " + std::string(method) + ": cancelled"));
  }
  return Err(
      DeadlineExceededError("cdp " + std::string(method) + ": no reply before the deadline"));
}

Result<Json> CdpClient::Call(std::string_view method, const Json& params,
                             const std::string& session, const CallLimits& limits) {
  auto started = TALARIA_TRY(Start(method, params, session));
  return Finish(started.first, started.second, method, limits);
}

std::vector<Result<Json>> CdpClient::CallEach(const std::vector<Command>& commands,
                                              const std::string& session,
                                              const CallLimits& limits) {
  std::vector<Result<std::pair<int64_t, std::shared_ptr<Pending>>>> started;
  started.reserve(commands.size());
  for (const Command& c : commands) started.push_back(Start(c.method, c.params, session));
  std::vector<Result<Json>> replies;
  replies.reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) {
    if (!started[i]) {
      replies.emplace_back(Err(started[i].error()));
    } else {
      replies.push_back(Finish(started[i]->first, started[i]->second, commands[i].method, limits));
    }
  }
  return replies;
}

Status CdpClient::Notify(std::string_view method, const Json& params, const std::string& session) {
  int64_t id = 0;
  {
    std::lock_guard lock(mu_);
    if (closed_) return UnavailableError("cdp: " + close_reason_);
    id = next_id_++;
  }
  return SendCommand(id, method, params, session);
}

void CdpClient::ReadLoop(const std::stop_token& stop) {
  for (;;) {
    auto message = transport_->Receive(std::chrono::steady_clock::time_point::max(), stop);
    if (!message) {
      std::lock_guard lock(mu_);
      if (!closed_) {
        closed_ = true;
        close_reason_ = message.error().message();
      }
      replies_cv_.notify_all();
      events_cv_.notify_all();
      return;
    }
    Dispatch(*message);
  }
}

void CdpClient::Dispatch(std::string_view text) {
  auto parsed = ParseJson(text);
  if (!parsed || !parsed->is_object()) return;  // a broken peer's garbage is dropped
  Json& m = *parsed;
  std::string session;
  if (auto s = m.find("sessionId"); s != m.end() && s->is_string()) session = s->get<std::string>();
  if (auto id = m.find("id"); id != m.end() && id->is_number_integer()) {
    std::lock_guard lock(mu_);
    auto it = pending_.find(id->get<int64_t>());
    if (it == pending_.end()) return;  // a Notify's reply, or a call that gave up
    if (auto e = m.find("error"); e != m.end() && e->is_object()) {
      it->second->reply = Err(InvalidArgumentError("cdp: " + JsonStringField(*e, "message")));
    } else if (auto r = m.find("result"); r != m.end()) {
      it->second->reply = std::move(*r);
    } else {
      it->second->reply = Json::object();
    }
    it->second->done = true;
    it->second->events_before = events_received_;
    pending_.erase(it);
    replies_cv_.notify_all();
    return;
  }
  auto method = m.find("method");
  if (method == m.end() || !method->is_string()) return;
  Json params = m.contains("params") ? std::move(m["params"]) : Json::object();
  std::lock_guard lock(mu_);
  events_.emplace_back(method->get<std::string>(), std::move(params), std::move(session));
  ++events_received_;
  events_cv_.notify_one();
}

void CdpClient::EventLoop(const std::stop_token& stop) {
  for (;;) {
    std::tuple<std::string, Json, std::string> event;
    {
      std::unique_lock lock(mu_);
      events_cv_.wait(lock, [&] { return !events_.empty() || closed_ || stop.stop_requested(); });
      if (events_.empty()) {
        // Closed: still tell the handler, once, so it can mark its page dead.
        if (closed_) {
          lock.unlock();
          if (on_event_) on_event_("talaria.closed", Json::object(), "");
        }
        return;
      }
      event = std::move(events_.front());
      events_.pop_front();
    }
    if (on_event_) on_event_(std::get<0>(event), std::get<1>(event), std::get<2>(event));
    std::lock_guard lock(mu_);
    ++events_handled_;
    replies_cv_.notify_all();
  }
}

}  // namespace talaria::browser
