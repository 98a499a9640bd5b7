// Modal through the managed gateway's REST API (Bearer token):
//   POST /v1/sandboxes                      x-idempotency-key; {image, cwd, cpu, memoryMiB,
//                                           diskMiB?, timeoutMs, idleTimeoutMs,
//                                           persistentFilesystem, logicalKey} -> {id}
//   POST /v1/sandboxes/{id}/execs           {execId, command, cwd, timeoutMs, stdinData?}
//                                           -> {execId, status[, output, returncode]}
//   GET  /v1/sandboxes/{id}/execs/{execId}  the same status body (poll); 404: not found
//   POST /v1/sandboxes/{id}/execs/{execId}/cancel
//   POST /v1/sandboxes/{id}/terminate       {snapshotBeforeTerminate}
// A retried create carries the same idempotency key, so it never makes a second sandbox; a
// retried exec carries the same execId. 409 means the sandbox is still being built: wait.
// The gateway has no listing, so there is nothing to reap by label: its idle timeout ends a
// dead talaria's sandboxes.
#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "sandboxes/api_http.h"
#include "sandboxes/sandbox_api.h"

namespace talaria::sandboxes {
namespace {

using std::chrono::milliseconds;

// Polling: connect 1 s / read 5 s per request (the original's), pauses growing to 250 ms.
constexpr milliseconds kPollConnect{1'000};
constexpr milliseconds kPollRead{5'000};
// Polls answering 404 or failing in a row before the exec counts as lost.
constexpr int kPollFailuresAllowed = 5;

bool Finished(const std::string& status) {
  return status == "completed" || status == "failed" || status == "cancelled" ||
         status == "timeout";
}

ExecAnswer AnswerOf(const Json& body) {
  ExecAnswer a;
  a.output = JsonStringField(body, "output");
  const std::string status = JsonStringField(body, "status");
  auto rc = body.find("returncode");
  a.exit_code = rc != body.end() && rc->is_number_integer() ? rc->get<int>() : 0;
  if (status == "failed" && a.exit_code == 0) a.exit_code = 1;
  a.timed_out = status == "timeout";
  a.cancelled = status == "cancelled";
  return a;
}

class ModalApi final : public SandboxApi {
 public:
  ModalApi(SandboxServiceOptions o, std::unique_ptr<ApiHttp> http)
      : o_(std::move(o)), http_(std::move(http)) {}

  std::string_view kind() const override { return "modal"; }
  bool ServiceEndsCalls() const override { return true; }

  Status Create() override {
    const int64_t timeout_ms = 3'600'000;
    Json body = {{"image", o_.image},
                 {"cwd", o_.initial_cwd.empty() ? "/root" : o_.initial_cwd},
                 {"cpu", o_.cpu},
                 {"memoryMiB", o_.memory_mib},
                 {"timeoutMs", timeout_ms},
                 {"idleTimeoutMs", std::max<int64_t>(300'000, timeout_ms)},
                 {"persistentFilesystem", o_.persistent},
                 {"logicalKey", o_.task_id}};
    if (o_.disk_mib > 0) body["diskMiB"] = o_.disk_mib;
    ApiHttp::Call call = MakeCall("POST", "/v1/sandboxes", &body);
    call.headers = {{"x-idempotency-key", NewUuid()}};
    call.timeout = o_.request_timeout;
    ApiAnswer answer = TALARIA_TRY(http_->Expect2xx(call, 4));
    id_ = JsonStringField(answer.json, "id");
    if (id_.empty()) return UnavailableError("modal: the gateway answered without a sandbox id");
    return Status::Ok();
  }

  Result<ExecAnswer> Exec(const ExecCall& call, std::stop_token stop) override {
    Json body = {{"execId", call.exec_id},
                 {"command", call.script},
                 {"cwd", o_.initial_cwd.empty() ? "/root" : o_.initial_cwd},
                 {"timeoutMs", call.timeout.count() > 0 ? call.timeout.count() : 3'600'000}};
    if (!call.stdin_data.empty()) body["stdinData"] = call.stdin_data;
    ApiHttp::Call post = MakeCall("POST", ExecsPath(), &body);
    post.timeout = o_.request_timeout;
    // 409: the sandbox is still being built. Bounded by the readiness timeout.
    const auto ready_by = std::chrono::steady_clock::now() + o_.ready_timeout;
    ApiAnswer answer;
    for (milliseconds pause{50};; pause = std::min(pause * 2, milliseconds(1000))) {
      answer = TALARIA_TRY(
          http_->Expect2xx(post, 3, stop).or_else([&](const Status& s) -> Result<ApiAnswer> {
            if (s.code() == StatusCode::kFailedPrecondition &&
                std::chrono::steady_clock::now() < ready_by) {
              ApiAnswer building;
              building.status = 409;
              return building;
            }
            return Err(s);
          }));
      if (answer.status != 409) break;
      if (!SleepUnlessStopped(pause, stop)) return Err(CancelledError("modal: cancelled"));
    }
    if (Finished(JsonStringField(answer.json, "status"))) return AnswerOf(answer.json);
    return Poll(call.exec_id, stop);
  }

  Result<ExecAnswer> EndExec(const std::string& exec_id) override {
    ApiHttp::Call cancel = MakeCall("POST", ExecsPath() + "/" + exec_id + "/cancel");
    cancel.timeout = o_.request_timeout;
    const Json empty = Json::object();
    cancel.body = &empty;
    (void)http_->Expect2xx(cancel, 3);
    // Its final state, with the output so far; bounded (the gateway may have lost it).
    std::stop_source bound;
    std::jthread limit([&bound](std::stop_token done) {
      std::mutex mu;
      std::condition_variable_any cv;
      std::unique_lock lock(mu);
      cv.wait_for(lock, std::move(done), std::chrono::seconds(15), [] { return false; });
      bound.request_stop();
    });
    auto answer = Poll(exec_id, bound.get_token());
    if (!answer) {
      ExecAnswer lost;
      lost.exit_code = 130;
      lost.cancelled = true;
      return lost;
    }
    return answer;
  }

  Status Destroy() override {
    if (id_.empty()) return Status::Ok();
    const Json body = {{"snapshotBeforeTerminate", o_.persistent}};
    ApiHttp::Call call = MakeCall("POST", "/v1/sandboxes/" + id_ + "/terminate", &body);
    call.timeout = o_.request_timeout;
    auto r = http_->Expect2xx(call, 3);
    return r ? Status::Ok() : r.error();
  }

  Result<std::vector<ListedSandbox>> ListOwned() override {
    return std::vector<ListedSandbox>{};  // no listing in the gateway's API
  }
  Status DeleteById(const std::string& id) override {
    const Json body = {{"snapshotBeforeTerminate", false}};
    ApiHttp::Call call = MakeCall("POST", "/v1/sandboxes/" + id + "/terminate", &body);
    auto r = http_->Expect2xx(call, 3);
    return r ? Status::Ok() : r.error();
  }

 private:
  std::string ExecsPath() const { return "/v1/sandboxes/" + id_ + "/execs"; }

  static bool SleepUnlessStopped(milliseconds pause, const std::stop_token& stop) {
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock lock(mu);
    return !cv.wait_for(lock, stop, pause, [] { return false; }) && !stop.stop_requested();
  }

  Result<ExecAnswer> Poll(const std::string& exec_id, const std::stop_token& stop) {
    ApiHttp::Call get = MakeCall("GET", ExecsPath() + "/" + exec_id);
    get.connect_timeout = kPollConnect;
    get.timeout = kPollRead;
    int failures = 0;
    for (milliseconds pause{2};; pause = std::min(pause * 2, milliseconds(250))) {
      if (!SleepUnlessStopped(pause, stop)) return Err(CancelledError("modal: cancelled"));
      auto answer = http_->Send(get, stop);
      if (!answer) {
        if (answer.error().code() == StatusCode::kCancelled) return Err(answer.error());
        if (++failures > kPollFailuresAllowed) return Err(answer.error());
        continue;  // a dropped connection mid-poll: ask again
      }
      if (answer->status == 404) {
        if (++failures > kPollFailuresAllowed) {
          return Err(NotFoundError("modal: exec " + exec_id + " not found"));
        }
        continue;
      }
      if (answer->status >= 300) {
        if (answer->status < 500 || ++failures > kPollFailuresAllowed) {
          return Err(ServiceError("modal", *answer));
        }
        continue;
      }
      failures = 0;
      if (Finished(JsonStringField(answer->json, "status"))) return AnswerOf(answer->json);
    }
  }

  const SandboxServiceOptions o_;
  const std::unique_ptr<ApiHttp> http_;
  std::string id_;
};

}  // namespace

Result<std::unique_ptr<SandboxApi>> MakeModalApi(const SandboxServiceOptions& options) {
  const auto headers_for = [](const std::string& token) {
    return net::HeaderList{{"Authorization", "Bearer " + token}};
  };
  auto http = TALARIA_TRY(
      ApiHttp::Make("modal", options.base_url, headers_for(options.api_key), options.ca_file));
  RenewKeyWith(*http, options.renew_api_key, headers_for);
  return std::unique_ptr<SandboxApi>(new ModalApi(options, std::move(http)));
}

}  // namespace talaria::sandboxes
