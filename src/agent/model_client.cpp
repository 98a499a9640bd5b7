// ModelClient over the net module's HttpClient: one attempt reads the response as it arrives
// (SSE through SseParser and StreamAssembler, or a whole JSON body), and Complete wraps the
// attempts in the retry and fallback policy of model_client.h.
#include "talaria/agent/model_client.h"

#include <condition_variable>
#include <mutex>
#include <random>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "agent/hermes_text.h"
#include "agent/model_request.h"
#include "agent/model_retry.h"
#include "agent/sse_parser.h"
#include "agent/stream_assembler.h"
#include "talaria/base/random.h"
#include "talaria/net/http_client.h"

namespace talaria::agent {
namespace {

using std::chrono::milliseconds;

constexpr size_t kMaxJsonBody = size_t{64} << 20;      // a whole (non-streamed) response
constexpr size_t kMaxStreamBytes = size_t{256} << 20;  // a whole event stream
constexpr size_t kMaxErrorBody = size_t{64} << 10;     // what is kept of a stream for error text

// Hides the Hermes <tool_call> blocks from the text the observer shows as it streams: the
// calls are taken out of the content once it is complete.
class HermesTextFilter final : public StreamObserver {
 public:
  explicit HermesTextFilter(StreamObserver* inner) : inner_(inner) {}

  void OnText(std::string_view delta) override {
    pending_ += delta;
    for (;;) {
      const std::string_view tag = inside_ ? kClose : kOpen;
      const size_t at = pending_.find(tag);
      if (at != std::string::npos) {
        if (!inside_ && at > 0) inner_->OnText(std::string_view(pending_).substr(0, at));
        pending_.erase(0, at + tag.size());
        inside_ = !inside_;
        continue;
      }
      // Keep what may be the start of a tag split across deltas.
      size_t keep = std::min(pending_.size(), tag.size() - 1);
      while (keep > 0 &&
             !tag.starts_with(std::string_view(pending_).substr(pending_.size() - keep))) {
        --keep;
      }
      if (!inside_ && pending_.size() > keep) {
        inner_->OnText(std::string_view(pending_).substr(0, pending_.size() - keep));
      }
      pending_.erase(0, pending_.size() - keep);
      return;
    }
  }
  void Flush() {
    if (!inside_ && !pending_.empty()) inner_->OnText(pending_);
    pending_.clear();
  }
  void OnReasoning(std::string_view delta) override { inner_->OnReasoning(delta); }
  void OnToolCallStarted(size_t index, std::string_view name) override {
    inner_->OnToolCallStarted(index, name);
  }

 private:
  static constexpr std::string_view kOpen = "<tool_call>";
  static constexpr std::string_view kClose = "</tool_call>";
  StreamObserver* inner_;
  std::string pending_;
  bool inside_ = false;
};

// Reads one response body as it arrives: an event stream goes through the SSE parser into the
// assembler; a body that starts with '{' is a whole JSON document (a server that ignored
// "stream", a non-streaming request, or an error).
class BodyReader final : public SseParser::Handler {
 public:
  explicit BodyReader(StreamObserver* observer) : assembler_(observer), sse_(this) {}

  bool Feed(std::string_view chunk) {
    total_ += chunk.size();
    if (total_ > kMaxStreamBytes) {
      failure_ = ResourceExhaustedError("the model server's response is larger than " +
                                        std::to_string(kMaxStreamBytes >> 20) + " MB");
      return false;
    }
    if (mode_ == Mode::kUnknown) {
      const size_t first = chunk.find_first_not_of(" \t\r\n");
      if (first == std::string_view::npos) {
        head_.append(chunk);
        return true;
      }
      mode_ = chunk[first] == '{' || chunk[first] == '[' ? Mode::kJson : Mode::kSse;
      std::string start = std::move(head_);
      head_.clear();
      if (!start.empty() && !FeedMode(start)) return false;
    }
    return FeedMode(chunk);
  }

  // The completed turn, for a 2xx response.
  Result<AssembledTurn> Finish() {
    TALARIA_RETURN_IF_ERROR(failure_);
    if (mode_ == Mode::kJson) return ParseCompletion(raw_);
    if (mode_ == Mode::kUnknown) return AssembledTurn{};
    TALARIA_RETURN_IF_ERROR(sse_.Finish());
    return assembler_.Finish();
  }

  const Status& failure() const { return failure_; }
  const std::string& raw() const { return raw_; }

  Status OnEvent(std::string_view event, std::string_view data) override {
    return assembler_.OnEvent(event, data);
  }

 private:
  enum class Mode : unsigned char { kUnknown, kSse, kJson };

  bool FeedMode(std::string_view chunk) {
    if (mode_ == Mode::kJson) {
      if (raw_.size() + chunk.size() > kMaxJsonBody) {
        failure_ = ResourceExhaustedError("the model server's response is larger than " +
                                          std::to_string(kMaxJsonBody >> 20) + " MB");
        return false;
      }
      raw_.append(chunk);
      return true;
    }
    if (raw_.size() < kMaxErrorBody) raw_.append(chunk.substr(0, kMaxErrorBody - raw_.size()));
    failure_ = sse_.Feed(chunk);
    return failure_.ok();
  }

  Mode mode_ = Mode::kUnknown;
  size_t total_ = 0;
  std::string head_;
  std::string raw_;
  Status failure_;
  StreamAssembler assembler_;
  SseParser sse_;
};

// How one failed attempt goes on.
enum class Next : unsigned char { kRetry, kNextModel, kGiveUp };

struct Failure {
  Status status;
  Next next = Next::kRetry;
  std::optional<milliseconds> retry_after;
};

// The number in an error object's "code" or "status_code", when it reads as an HTTP status.
int ErrorObjectStatus(const Json& error) {
  if (!error.is_object()) return 0;
  for (const char* key : {"status_code", "status", "code"}) {
    auto it = error.find(key);
    if (it == error.end()) continue;
    if (it->is_number_integer()) return static_cast<int>(it->get<int64_t>());
    if (it->is_string()) {
      const std::string& s = it->get_ref<const std::string&>();
      if (s.size() == 3 &&
          std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return std::stoi(s);
      }
    }
  }
  return 0;
}

// Ids for calls that came without one or with one another call of the turn already has: the
// loop pairs each result with its call by id.
void GiveCallsIds(std::vector<ToolCall>& calls) {
  std::unordered_set<std::string> seen;
  std::string prefix;
  for (size_t i = 0; i < calls.size(); ++i) {
    ToolCall& call = calls[i];
    if (call.id.empty() || !seen.insert(call.id).second) {
      if (prefix.empty()) prefix = "call_" + RandomHex(6) + "_";
      call.id = prefix + std::to_string(i);
      seen.insert(call.id);
    }
  }
}

bool SleepUnlessStopped(milliseconds delay, const std::stop_token& stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  cv.wait_for(lock, stop, delay, [] { return false; });
  return !stop.stop_requested();
}

class HttpModelClient final : public ModelClient {
 public:
  HttpModelClient(ModelSettings settings, std::unique_ptr<net::HttpClient> http)
      : settings_(std::move(settings)), http_(std::move(http)), rng_(std::random_device{}()) {}

  Result<ChatResponse> Complete(const ChatRequest& request, StreamObserver* observer,
                                std::stop_token stop) override {
    StreamObserver silent;
    if (observer == nullptr) observer = &silent;
    std::vector<const ModelSettings*> models = {&settings_};
    for (const ModelSettings& fallback : settings_.fallback) models.push_back(&fallback);

    Status last;
    int attempt_number = 0;
    for (size_t m = 0; m < models.size(); ++m) {
      const ModelSettings& model = *models[m];
      for (int attempt = 0;; ++attempt) {
        ++attempt_number;
        Failure failure;
        auto response = Attempt(model, request, observer, stop, failure);
        if (response) return response;
        last = failure.status;
        if (stop.stop_requested() || failure.status.code() == StatusCode::kCancelled) {
          return Err(CancelledError("the model request was cancelled"));
        }
        if (failure.next != Next::kRetry || attempt >= model.max_retries) break;
        milliseconds delay = BackoffDelay(attempt + 1, model.backoff_base, model.backoff_cap,
                                          std::uniform_real_distribution<double>(0, 1)(rng_));
        if (failure.retry_after) delay = std::min(*failure.retry_after, model.retry_after_cap);
        observer->OnRetry(attempt_number, delay, failure.status.message());
        if (!SleepUnlessStopped(delay, stop)) {
          return Err(CancelledError("the model request was cancelled"));
        }
      }
      if (m + 1 < models.size()) {
        observer->OnRetry(
            attempt_number, milliseconds(0),
            "switching to the fallback model " + models[m + 1]->model + ": " + last.message());
      }
    }
    return Err(last);
  }

 private:
  // One request to `model`. On failure, `failure` says why and how to go on.
  Result<ChatResponse> Attempt(const ModelSettings& model, const ChatRequest& request,
                               StreamObserver* observer, std::stop_token stop, Failure& failure) {
    const std::string endpoint = model.base_url;
    const std::string who =
        "model " + (model.model.empty() ? "(default)" : model.model) + " at " + endpoint;
    net::HttpRequest http;
    http.method = "POST";
    http.url = ChatCompletionsUrl(model);
    http.headers = BuildRequestHeaders(model);
    http.body = BuildRequestBody(model, request);
    http.connect_timeout = model.connect_timeout;
    http.idle_timeout = model.idle_timeout;
    http.ca_file = model.ca_file;
    const bool hermes = model.tool_call_format == ToolCallFormat::kHermesText;
    HermesTextFilter filter(observer);
    BodyReader reader(hermes ? &filter : observer);
    auto head = http_->Send(
        http, [&](std::string_view chunk) { return reader.Feed(chunk); }, std::move(stop));
    if (!head) {
      const Status& error = head.error();
      if (!reader.failure().ok()) {
        // The body could not be read (not an event stream, too large): a broken server.
        failure.status = UnavailableError(who + ": " + reader.failure().message());
      } else if (net::IsConnectFailure(error)) {
        // Unreachable: one clear line, and the next model rather than a row of retries.
        failure.status = UnavailableError("cannot reach the model endpoint " + endpoint + ": " +
                                          error.message());
        failure.next = Next::kNextModel;
      } else if (error.code() == StatusCode::kCancelled) {
        failure.status = error;
        failure.next = Next::kGiveUp;
      } else if (error.code() == StatusCode::kDeadlineExceeded) {
        failure.status = DeadlineExceededError(who + " went silent: " + error.message());
      } else if (error.code() == StatusCode::kInvalidArgument) {
        failure.status = InvalidArgumentError("bad model endpoint: " + error.message());
        failure.next = Next::kNextModel;
      } else {
        failure.status = UnavailableError(who + ": " + error.message());
      }
      return Err(failure.status);
    }
    if (head->status < 200 || head->status >= 300) {
      failure.status = StatusForHttpError(head->status, reader.raw(), endpoint);
      if (!IsRetryableStatus(head->status)) failure.next = Next::kNextModel;
      const std::string retry_after = head->Header("Retry-After");
      if (!retry_after.empty()) {
        failure.retry_after = ParseRetryAfter(retry_after, std::chrono::system_clock::now());
      }
      return Err(failure.status);
    }
    auto turn = reader.Finish();
    if (!turn) {
      failure.status = UnavailableError(who + ": " + turn.error().message());
      return Err(failure.status);
    }
    if (hermes) filter.Flush();
    if (turn->error) {
      const int code = ErrorObjectStatus(*turn->error);
      const std::string text = ProviderErrorText(DumpJson(*turn->error));
      const std::string message = "the model server " + endpoint + " reported an error: " + text;
      if (code == 401 || code == 403) {
        failure.status = PermissionDeniedError(message);
        failure.next = Next::kNextModel;
      } else if (code >= 400 && code < 500 && !IsRetryableStatus(code)) {
        failure.status = InvalidArgumentError(message);
        failure.next = Next::kNextModel;
      } else {
        failure.status = UnavailableError(message);
      }
      return Err(failure.status);
    }
    if (!turn->any_chunk) {
      failure.status = UnavailableError(who + " sent an empty response");
      return Err(failure.status);
    }
    return ToResponse(model, std::move(*turn), observer);
  }

  static ChatResponse ToResponse(const ModelSettings& model, AssembledTurn turn,
                                 StreamObserver* observer) {
    ChatResponse response;
    response.message.role = Role::kAssistant;
    response.message.content = std::move(turn.content);
    response.message.reasoning = std::move(turn.reasoning);
    response.message.tool_calls = std::move(turn.tool_calls);
    if (model.tool_call_format == ToolCallFormat::kHermesText &&
        response.message.tool_calls.empty()) {
      HermesExtraction extracted = ExtractHermesToolCalls(response.message.content);
      if (!extracted.tool_calls.empty()) {
        response.message.content = std::move(extracted.content);
        response.message.tool_calls = std::move(extracted.tool_calls);
        for (size_t i = 0; i < response.message.tool_calls.size(); ++i) {
          observer->OnToolCallStarted(i, response.message.tool_calls[i].name);
        }
        if (turn.finish_reason == "stop" || turn.finish_reason.empty()) {
          turn.finish_reason = "tool_calls";
        }
      }
    }
    // A refusal is the model's answer (OpenAI sends it instead of content).
    if (response.message.content.empty() && !turn.refusal.empty()) {
      response.message.content = std::move(turn.refusal);
    }
    GiveCallsIds(response.message.tool_calls);
    response.finish_reason = std::move(turn.finish_reason);
    response.usage = turn.usage;
    response.model = !turn.model.empty() ? turn.model : model.model;
    return response;
  }

  ModelSettings settings_;
  std::unique_ptr<net::HttpClient> http_;
  std::mt19937_64 rng_;
};

}  // namespace

Result<std::unique_ptr<ModelClient>> ModelClient::Open(ModelSettings settings) {
  std::unique_ptr<net::HttpClient> http = TALARIA_TRY(net::MakeHttpClient());
  return std::unique_ptr<ModelClient>(
      std::make_unique<HttpModelClient>(std::move(settings), std::move(http)));
}

}  // namespace talaria::agent
