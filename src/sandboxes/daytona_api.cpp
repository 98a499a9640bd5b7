// Daytona: the control plane's /sandbox resource and the toolbox's process/execute.
//   POST   /sandbox                 {image, labels, env, autoStopInterval, cpu, memory, disk}
//                                   -> {id, state}; waited on until state is "started"
//   GET    /sandbox/{id}            {id, state, labels}
//   GET    /sandbox?labels={json}   talaria's sandboxes (reaping)
//   POST   /sandbox/{id}/stop, DELETE /sandbox/{id}
//   POST   /toolbox/{id}/toolbox/process/execute  {command, timeout (s)} -> {exitCode|code, result}
// Bearer API key, X-Daytona-Organization-ID when configured. Sizes in GiB (memory rounded up,
// disk capped at 10 GiB, as the original does). process/execute runs a command line, not a
// script: the script goes to `bash -c` as one quoted word.
#include <algorithm>
#include <cctype>
#include <thread>

#include <nlohmann/json.hpp>

#include "sandboxes/api_http.h"
#include "sandboxes/sandbox_api.h"
#include "talaria/base/shell_words.h"

namespace talaria::sandboxes {
namespace {

using std::chrono::milliseconds;

class DaytonaApi final : public SandboxApi {
 public:
  DaytonaApi(SandboxServiceOptions o, std::unique_ptr<ApiHttp> http)
      : o_(std::move(o)), http_(std::move(http)) {}

  std::string_view kind() const override { return "daytona"; }

  Status Create() override {
    Json body = {
        {"image", o_.image},
        {"labels",
         {{std::string(kOwnerLabel), OwnerLabel()}, {std::string(kTaskLabel), o_.task_id}}},
        {"autoStopInterval", 0},
        {"cpu", o_.cpu},
        {"memory", (o_.memory_mib + 1023) / 1024}};
    if (o_.disk_mib > 0) body["disk"] = std::min<int64_t>(10, (o_.disk_mib + 1023) / 1024);
    ApiHttp::Call call = MakeCall("POST", "/sandbox", &body);
    call.timeout = o_.request_timeout;
    // Not retried: a create has no idempotency key here; a lost answer leaves a labelled
    // sandbox the reaper finds.
    ApiAnswer answer = TALARIA_TRY(http_->Expect2xx(call, 1));
    id_ = JsonStringField(answer.json, "id");
    if (id_.empty()) return UnavailableError("daytona: the API answered without a sandbox id");
    std::string state = JsonStringField(answer.json, "state");
    const auto ready_by = std::chrono::steady_clock::now() + o_.ready_timeout;
    for (milliseconds pause{20}; state != "started";
         pause = std::min(pause * 2, milliseconds(1000))) {
      if (state == "error" || state == "build_failed" || state == "destroyed") {
        return UnavailableError("daytona: sandbox " + id_ + " is in state " + state);
      }
      if (std::chrono::steady_clock::now() > ready_by) {
        return DeadlineExceededError("daytona: sandbox " + id_ + " not started in time (state " +
                                     state + ")");
      }
      std::this_thread::sleep_for(pause);
      ApiHttp::Call get = MakeCall("GET", "/sandbox/" + id_);
      get.timeout = o_.request_timeout;
      ApiAnswer got = TALARIA_TRY(http_->Expect2xx(get, 3));
      state = JsonStringField(got.json, "state");
    }
    return Status::Ok();
  }

  Result<ExecAnswer> Exec(const ExecCall& call, std::stop_token stop) override {
    // process/execute has no stdin: the data goes in through a base64 pipe.
    const std::string script = ScriptWithStdin(call.script, call.stdin_data);
    Json body = {{"command", "bash -c " + ShellQuote(script)}};
    // Always a timeout: the toolbox's default is 10 s. The environment's own deadline (a
    // second command) comes first; this one is the service's backstop.
    body["timeout"] = call.timeout.count() > 0 ? (call.timeout.count() + 999) / 1000 + 5 : 86'400;
    ApiHttp::Call post = MakeCall("POST", "/toolbox/" + id_ + "/toolbox/process/execute", &body);
    post.timeout = call.timeout.count() > 0 ? call.timeout + o_.request_timeout
                                            : milliseconds(24 * 3600 * 1000);
    ApiAnswer answer = TALARIA_TRY(http_->Expect2xx(post, 1, stop));
    ExecAnswer a;
    a.output = JsonStringField(answer.json, "result");
    for (const char* key : {"exitCode", "code"}) {
      auto it = answer.json.find(key);
      if (it != answer.json.end() && it->is_number_integer()) {
        a.exit_code = it->get<int>();
        break;
      }
    }
    return a;
  }

  Status Destroy() override {
    if (id_.empty()) return Status::Ok();
    return DeleteOrStop(id_, o_.persistent);
  }

  Result<std::vector<ListedSandbox>> ListOwned() override {
    ApiHttp::Call get = MakeCall("GET", "/sandbox");
    get.timeout = o_.request_timeout;
    ApiAnswer answer = TALARIA_TRY(http_->Expect2xx(get, 3));
    const Json* items = &answer.json;
    if (answer.json.is_object() && answer.json.contains("items")) items = &answer.json["items"];
    std::vector<ListedSandbox> out;
    if (!items->is_array()) return out;
    for (const Json& s : *items) {
      if (!s.is_object() || !s.contains("labels")) continue;
      const std::string owner = JsonStringField(s["labels"], kOwnerLabel);
      if (!owner.empty()) out.push_back({JsonStringField(s, "id"), owner});
    }
    return out;
  }

  Status DeleteById(const std::string& id) override { return DeleteOrStop(id, false); }

 private:
  Status DeleteOrStop(const std::string& id, bool stop) {
    ApiHttp::Call call =
        MakeCall(stop ? "POST" : "DELETE", "/sandbox/" + id + (stop ? "/stop" : ""));
    call.timeout = o_.request_timeout;
    auto r = http_->Expect2xx(call, 3);
    if (!r && r.error().code() != StatusCode::kNotFound) return r.error();
    return Status::Ok();
  }

  const SandboxServiceOptions o_;
  const std::unique_ptr<ApiHttp> http_;
  std::string id_;
};

}  // namespace

Result<std::unique_ptr<SandboxApi>> MakeDaytonaApi(const SandboxServiceOptions& options) {
  net::HeaderList headers = {{"Authorization", "Bearer " + options.api_key}};
  if (!options.organization.empty())
    headers.emplace_back("X-Daytona-Organization-ID", options.organization);
  auto http =
      TALARIA_TRY(ApiHttp::Make("daytona", options.base_url, std::move(headers), options.ca_file));
  return std::unique_ptr<SandboxApi>(new DaytonaApi(options, std::move(http)));
}

}  // namespace talaria::sandboxes
