#include "support/fake_llm_server.h"

#include <strings.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <httplib.h>

#include "support/fake_llm_render.h"

namespace talaria::test_support {

FakeJson FakeLlmRequest::Json() const { return FakeJson::parse(body, nullptr, false); }

std::string FakeLlmRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key.size() == name.size() && strncasecmp(key.data(), name.data(), name.size()) == 0)
      return value;
  }
  return "";
}

struct FakeLlmServer::Impl {
  explicit Impl(FakeLlmScript s) : script(std::move(s)), used(script.turns.size(), false) {}

  // What one request is answered with, decided under the lock.
  struct Answer {
    std::optional<FakeTurn> turn;  // nullopt: an error status (rejected or exhausted)
    int status = 200;
    std::string error_body;
  };

  void HandleChat(const httplib::Request& req, httplib::Response& res);
  void Serve(const FakeTurn& turn, const FakeJson& body, size_t index, bool stream,
             httplib::Response& res);
  // Sleeps `ms`, or less when Stop is called. False when stopping.
  bool Nap(int ms) {
    std::unique_lock lock(mu);
    return !stop_cv.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping; });
  }
  FakeJson StateJson(bool problems_only) const;

  httplib::Server server;
  std::thread thread;
  int port = 0;
  std::function<void(const std::string&)> log_sink;
  std::mutex log_mu;  // serialises log_sink calls

  mutable std::mutex mu;
  std::condition_variable stop_cv;
  mutable std::condition_variable request_cv;  // a request was recorded
  bool stopping = false;                       // Guarded by mu.
  FakeLlmScript script;                        // Guarded by mu.
  std::vector<bool> used;                      // Guarded by mu.
  std::vector<FakeLlmRequest> requests;        // Guarded by mu.
  std::vector<FakeLlmProblem> problems;        // Guarded by mu.
  size_t served = 0;                           // Guarded by mu.
  size_t exhausted = 0;                        // Guarded by mu.
};

namespace {

std::string RetryAfterText(double seconds) {
  if (seconds == static_cast<double>(static_cast<int64_t>(seconds)))
    return std::to_string(static_cast<int64_t>(seconds));
  FakeJson j = seconds;
  return j.dump();
}

std::string DefaultErrorMessage(int status) {
  switch (status) {
    case 400:
      return "bad request (scripted)";
    case 401:
      return "Incorrect API key provided (scripted)";
    case 429:
      return "Rate limit reached (scripted)";
    default:
      return "The server had an error while processing your request (scripted)";
  }
}

std::string ErrorType(int status) {
  if (status == 429) return "rate_limit_exceeded";
  if (status == 401) return "invalid_api_key";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

}  // namespace

void FakeLlmServer::Impl::HandleChat(const httplib::Request& req, httplib::Response& res) {
  const FakeJson body = FakeJson::parse(req.body, nullptr, false);
  std::vector<std::pair<std::string, std::string>> headers(req.headers.begin(), req.headers.end());
  const bool stream = body.is_object() && body.contains("stream") && body["stream"].is_boolean() &&
                      body["stream"].get<bool>();
  Answer answer;
  size_t index = 0;
  std::vector<FakeLlmProblem> found;
  {
    std::lock_guard lock(mu);
    index = requests.size();
    if (body.is_discarded()) {
      found.push_back({index, "invalid_json", "the body is not valid JSON"});
    } else {
      found = ValidateChatRequest(body, script.lenient);
    }
    for (auto& p : found) p.request = index;
    FakeLlmRequest record;
    record.index = index;
    record.path = req.path;
    record.body = req.body;
    record.headers = headers;
    record.stream = stream;
    if (script.strict && !found.empty()) {
      std::string message = "invalid request (strict fake provider):";
      for (const auto& p : found) message += " [" + p.kind + "] " + p.message + ";";
      answer.status = 400;
      answer.error_body = ErrorBody(message, "invalid_request_error", found.front().kind);
    } else {
      int chosen = -1;
      for (size_t i = 0; i < script.turns.size(); ++i) {
        if (used[i]) continue;
        if (!script.turns[i].match.empty() &&
            !CheckConditions(script.turns[i].match, body, headers).empty())
          continue;
        chosen = static_cast<int>(i);
        break;
      }
      if (chosen >= 0) {
        used[static_cast<size_t>(chosen)] = true;
        ++served;
        answer.turn = script.turns[static_cast<size_t>(chosen)];
        record.turn = chosen;
        record.label = answer.turn->label;
      } else if (script.exhausted_turn) {
        ++exhausted;
        answer.turn = *script.exhausted_turn;
        record.label = answer.turn->label;
      } else {
        ++exhausted;
        answer.status = 500;
        answer.error_body =
            ErrorBody("the fake LLM script has no turn left", "server_error", "script_exhausted");
        record.label = "exhausted";
      }
      if (answer.turn) {
        const std::string who =
            "turn " + (chosen >= 0 ? std::to_string(chosen) : std::string("on_exhausted")) +
            (answer.turn->label.empty() ? "" : " (" + answer.turn->label + ")");
        for (const auto& failure : CheckConditions(answer.turn->expect, body, headers))
          found.push_back({index, "expectation", who + ": " + failure});
        if (answer.turn->fault.kind == FakeFault::Kind::kHttp)
          answer.status = answer.turn->fault.status;
      }
    }
    record.status = answer.status;
    problems.insert(problems.end(), found.begin(), found.end());
    requests.push_back(record);
  }
  request_cv.notify_all();
  if (log_sink) {
    FakeJson line = FakeJson::object();
    line["request"] = index;
    line["path"] = req.path;
    line["status"] = answer.status;
    line["stream"] = stream;
    {
      std::lock_guard lock(mu);
      line["turn"] = requests[index].turn;
      line["label"] = requests[index].label;
    }
    FakeJson problem_list = FakeJson::array();
    for (const auto& p : found) problem_list.push_back({{"kind", p.kind}, {"message", p.message}});
    line["problems"] = std::move(problem_list);
    line["body"] = body.is_discarded() ? FakeJson(req.body) : body;
    std::lock_guard lock(log_mu);
    log_sink(line.dump(-1, ' ', false, FakeJson::error_handler_t::replace));
  }
  if (!answer.turn) {
    res.status = answer.status;
    res.set_content(answer.error_body, "application/json");
    return;
  }
  if (const size_t want = answer.turn->hold_until_requests; want > 0) {
    std::unique_lock lock(mu);
    const bool reached =
        request_cv.wait_for(lock, std::chrono::milliseconds(answer.turn->hold_timeout_ms),
                            [&] { return stopping || requests.size() >= want; });
    if (!reached) {
      problems.push_back({index, "hold_timeout",
                          "only " + std::to_string(requests.size()) + " of " +
                              std::to_string(want) + " requests arrived within " +
                              std::to_string(answer.turn->hold_timeout_ms) + " ms"});
    }
  }
  Serve(*answer.turn, body, index, stream, res);
}

void FakeLlmServer::Impl::Serve(const FakeTurn& turn, const FakeJson& body, size_t index,
                                bool stream, httplib::Response& res) {
  const FakeFault& fault = turn.fault;
  if (fault.kind == FakeFault::Kind::kHttp) {
    res.status = fault.status;
    if (fault.retry_after) res.set_header("Retry-After", RetryAfterText(*fault.retry_after));
    const std::string message =
        fault.message.empty() ? DefaultErrorMessage(fault.status) : fault.message;
    res.set_content(fault.body.empty()
                        ? ErrorBody(message, ErrorType(fault.status), ErrorType(fault.status))
                        : fault.body,
                    "application/json");
    return;
  }
  FakeRenderContext ctx;
  {
    std::lock_guard lock(mu);
    ctx.model = script.model;
  }
  if (body.is_object() && body.contains("model") && body["model"].is_string() &&
      !body["model"].get<std::string>().empty())
    ctx.model = body["model"].get<std::string>();
  ctx.request_index = index;
  ctx.prompt_bytes = body.is_object() ? body.dump().size() : 0;
  ctx.include_usage = body.is_object() && body.contains("stream_options") &&
                      body["stream_options"].is_object() &&
                      body["stream_options"].contains("include_usage") &&
                      body["stream_options"]["include_usage"] == true;

  if (!stream) {
    auto text = std::make_shared<std::string>(RenderCompletionBody(turn, ctx));
    if (fault.kind == FakeFault::Kind::kStall && !Nap(fault.ms)) return;
    if (fault.kind == FakeFault::Kind::kDrop) {
      // Promise the whole body, send part of it, hang up.
      const size_t cut = std::min(fault.after_bytes.value_or(text->size() / 2), text->size());
      res.set_content_provider(text->size(), "application/json",
                               [text, cut](size_t offset, size_t, httplib::DataSink& sink) {
                                 if (offset < cut) sink.write(text->data() + offset, cut - offset);
                                 return false;
                               });
      return;
    }
    res.set_content(*text, "application/json");
    return;
  }
  auto plan =
      std::make_shared<std::vector<FakeSendStep>>(PlanSend(RenderStreamEvents(turn, ctx), turn));
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream",
                                   [this, plan](size_t, httplib::DataSink& sink) {
                                     for (const auto& step : *plan) {
                                       switch (step.kind) {
                                         case FakeSendStep::Kind::kWrite:
                                           if (!sink.write(step.bytes.data(), step.bytes.size()))
                                             return false;
                                           break;
                                         case FakeSendStep::Kind::kSleep:
                                           if (!Nap(step.ms)) return false;
                                           break;
                                         case FakeSendStep::Kind::kClose:
                                           return false;  // httplib closes the connection mid-body
                                       }
                                     }
                                     sink.done();
                                     return true;
                                   });
}

FakeJson FakeLlmServer::Impl::StateJson(bool problems_only) const {
  std::lock_guard lock(mu);
  FakeJson out = FakeJson::array();
  if (problems_only) {
    for (const auto& p : problems)
      out.push_back({{"request", p.request}, {"kind", p.kind}, {"message", p.message}});
    return out;
  }
  for (const auto& r : requests) {
    FakeJson body = FakeJson::parse(r.body, nullptr, false);
    out.push_back({{"request", r.index},
                   {"path", r.path},
                   {"turn", r.turn},
                   {"label", r.label},
                   {"status", r.status},
                   {"stream", r.stream},
                   {"body", body.is_discarded() ? FakeJson(r.body) : body}});
  }
  return out;
}

std::unique_ptr<FakeLlmServer> FakeLlmServer::FromScript(std::string_view json_text,
                                                         std::string* error) {
  auto script = ParseFakeLlmScript(json_text, error);
  if (!script) return nullptr;
  return std::make_unique<FakeLlmServer>(std::move(*script));
}

std::unique_ptr<FakeLlmServer> FakeLlmServer::FromScriptFile(const std::string& path,
                                                             std::string* error) {
  auto script = LoadFakeLlmScriptFile(path, error);
  if (!script) return nullptr;
  return std::make_unique<FakeLlmServer>(std::move(*script));
}

FakeLlmServer::FakeLlmServer(FakeLlmScript script)
    : impl_(std::make_unique<Impl>(std::move(script))) {}

FakeLlmServer::~FakeLlmServer() { Stop(); }

bool FakeLlmServer::Start(std::string* error, int port) {
  Impl& impl = *impl_;
  impl.server.set_tcp_nodelay(true);
  impl.server.set_keep_alive_max_count(100000);  // httplib's default closes after 5 requests
  impl.server.set_payload_max_length(64u << 20);
  auto chat = [&impl](const httplib::Request& req, httplib::Response& res) {
    try {
      impl.HandleChat(req, res);
    } catch (const std::exception& e) {
      // A bug of the fake itself: say so loudly (as a problem) instead of a bare 500.
      std::lock_guard lock(impl.mu);
      impl.problems.push_back({impl.requests.size(), "fake_internal_error", e.what()});
      res.status = 500;
      res.set_content(ErrorBody(std::string("fake LLM server: ") + e.what(), "server_error",
                                "fake_internal_error"),
                      "application/json");
    }
  };
  impl.server.Post("/v1/chat/completions", chat);
  impl.server.Post("/chat/completions", chat);
  auto models = [&impl](const httplib::Request&, httplib::Response& res) {
    std::string model;
    {
      std::lock_guard lock(impl.mu);
      model = impl.script.model;
    }
    FakeJson list = {{"object", "list"},
                     {"data", FakeJson::array({{{"id", model},
                                                {"object", "model"},
                                                {"created", 1'700'000'000},
                                                {"owned_by", "talaria-fake-llm"}}})}};
    res.set_content(list.dump(), "application/json");
  };
  impl.server.Get("/v1/models", models);
  impl.server.Get("/models", models);
  impl.server.Get("/_fake/requests", [&impl](const httplib::Request&, httplib::Response& res) {
    res.set_content(impl.StateJson(false).dump(-1, ' ', false, FakeJson::error_handler_t::replace),
                    "application/json");
  });
  impl.server.Get("/_fake/problems", [&impl](const httplib::Request&, httplib::Response& res) {
    res.set_content(impl.StateJson(true).dump(), "application/json");
  });
  if (port == 0) {
    impl.port = impl.server.bind_to_any_port("127.0.0.1");
  } else {
    impl.port = impl.server.bind_to_port("127.0.0.1", port) ? port : -1;
  }
  if (impl.port <= 0) {
    if (error != nullptr) *error = "cannot bind 127.0.0.1:" + std::to_string(port);
    impl.port = 0;
    return false;
  }
  impl.thread = std::thread([&impl] { impl.server.listen_after_bind(); });
  // Bounded: listen_after_bind flips is_running at once once the socket is bound.
  for (int i = 0; i < 5000 && !impl.server.is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return true;
}

void FakeLlmServer::Stop() {
  Impl& impl = *impl_;
  {
    std::lock_guard lock(impl.mu);
    impl.stopping = true;
  }
  impl.stop_cv.notify_all();
  impl.request_cv.notify_all();  // ends holds
  if (impl.thread.joinable()) {
    impl.server.stop();
    impl.thread.join();
  }
}

int FakeLlmServer::port() const { return impl_->port; }

std::string FakeLlmServer::base_url() const {
  return "http://127.0.0.1:" + std::to_string(impl_->port) + "/v1";
}

void FakeLlmServer::SetLogSink(std::function<void(const std::string& line)> sink) {
  impl_->log_sink = std::move(sink);
}

void FakeLlmServer::AddTurn(FakeTurn turn) {
  std::lock_guard lock(impl_->mu);
  impl_->script.turns.push_back(std::move(turn));
  impl_->used.push_back(false);
}

std::vector<FakeLlmRequest> FakeLlmServer::requests() const {
  std::lock_guard lock(impl_->mu);
  return impl_->requests;
}

std::vector<FakeLlmProblem> FakeLlmServer::problems() const {
  std::lock_guard lock(impl_->mu);
  return impl_->problems;
}

std::string FakeLlmServer::ProblemsText() const {
  std::string out;
  for (const auto& p : problems())
    out += "request " + std::to_string(p.request) + ": " + p.kind + ": " + p.message + "\n";
  return out;
}

bool FakeLlmServer::WaitForRequests(size_t count, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(impl_->mu);
  return impl_->request_cv.wait_for(lock, timeout, [&] { return impl_->requests.size() >= count; });
}

size_t FakeLlmServer::turns_served() const {
  std::lock_guard lock(impl_->mu);
  return impl_->served;
}

size_t FakeLlmServer::turns_remaining() const {
  std::lock_guard lock(impl_->mu);
  return impl_->script.turns.size() - impl_->served;
}

size_t FakeLlmServer::exhausted_answers() const {
  std::lock_guard lock(impl_->mu);
  return impl_->exhausted;
}

}  // namespace talaria::test_support
