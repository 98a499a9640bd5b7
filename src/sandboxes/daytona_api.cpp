// Daytona: the control plane's /sandbox resource and the toolbox's process/execute.
//   POST   /sandbox                 {image, labels, env, autoStopInterval, cpu, memory, disk}
//                                   -> {id, state}; waited on until state is "started"
//   GET    /sandbox/{id}            {id, state, labels}
//   GET    /sandbox?labels={json}   sandboxes with those labels (reaping; a persistent session's)
//   PUT    /sandbox/{id}/labels     {labels} (a persistent sandbox taken over by a new owner)
//   POST   /sandbox/{id}/start, /stop, DELETE /sandbox/{id}
//   POST   /toolbox/{id}/toolbox/process/execute  {command, timeout (s)} -> {exitCode|code, result}
// Bearer API key, X-Daytona-Organization-ID when configured. Sizes in GiB (memory rounded up,
// disk capped at 10 GiB, as the original does). process/execute runs a command line, not a
// script: the script goes to `bash -c` as one quoted word.
// Persistent sessions: the sandbox is stopped, not deleted, and carries talaria.persistent; the
// next environment for the same task (session id) finds it by its task label, takes it over
// (its owner label becomes this process's) and starts it, files and all, instead of creating
// another. The reaper stops such a sandbox of a dead talaria instead of deleting it.
// One owner at a time: an environment that closes drops its owner label along with stopping
// the sandbox, so an owner label naming a live process means the session is open there, and a
// second talaria resuming it is refused (FailedPrecondition naming the owner) instead of
// sharing it. Two resuming at once: Daytona's labels have no compare-and-set, so each writes its
// label, waits longer than the other's read-then-write can take and reads the label back; the
// last writer wins and the other is refused without touching the sandbox.
#include <algorithm>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "sandboxes/api_http.h"
#include "sandboxes/sandbox_api.h"
#include "talaria/base/shell_words.h"
#include "talaria/base/uri.h"

namespace talaria::sandboxes {
namespace {

using std::chrono::milliseconds;

// How long a takeover waits before reading its owner label back: longer than a rival's
// listing-to-relabel gap (one request each), so a rival that listed before our write has
// written by then.
constexpr milliseconds kTakeoverSettle{500};

class DaytonaApi final : public SandboxApi {
 public:
  DaytonaApi(SandboxServiceOptions o, std::unique_ptr<ApiHttp> http)
      : o_(std::move(o)), http_(std::move(http)) {}

  std::string_view kind() const override { return "daytona"; }

  Status Create() override {
    if (o_.persistent) {
      std::optional<Json> kept = TALARIA_TRY(FindKept());
      if (kept) return TakeOver(*kept);
    }
    Json body = {{"image", o_.image},
                 {"labels", Labels()},
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
    return WaitStarted(JsonStringField(answer.json, "state"));
  }

  // Waits until the sandbox is started, starting it (once) when it is stopped or archived.
  Status WaitStarted(std::string state) {
    const auto ready_by = std::chrono::steady_clock::now() + o_.ready_timeout;
    bool start_asked = false;
    for (milliseconds pause{20}; state != "started";
         pause = std::min(pause * 2, milliseconds(1000))) {
      if (Unusable(state)) {
        return UnavailableError("daytona: sandbox " + id_ + " is in state " + state);
      }
      if (!start_asked && (state == "stopped" || state == "archived")) {
        start_asked = true;
        ApiHttp::Call start = MakeCall("POST", "/sandbox/" + id_ + "/start");
        start.timeout = o_.request_timeout;
        ApiAnswer started = TALARIA_TRY(http_->Expect2xx(start, 3));
        const std::string now = JsonStringField(started.json, "state");
        state = now.empty() ? "starting" : now;
        continue;
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
    TALARIA_RETURN_IF_ERROR(DeleteOrStop(id_, o_.persistent));
    if (!o_.persistent) return Status::Ok();
    // Released: the next environment of the task may take it over at once.
    return Relabel(Labels(/*owned=*/false));
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
      if (owner.empty()) continue;
      ListedSandbox listed;
      listed.id = JsonStringField(s, "id");
      listed.owner = owner;
      listed.kept = JsonStringField(s["labels"], kPersistentLabel) == "true";
      const std::string state = JsonStringField(s, "state");
      listed.stopped = state == "stopped" || state == "archived" || state == "stopping";
      out.push_back(std::move(listed));
    }
    return out;
  }

  Status DeleteById(const std::string& id) override { return DeleteOrStop(id, false); }
  Status StopById(const std::string& id) override { return DeleteOrStop(id, true); }

 private:
  static bool Unusable(const std::string& state) {
    return state == "error" || state == "build_failed" || state == "destroyed" ||
           state == "destroying";
  }

  Json Labels(bool owned = true) const {
    Json labels = {{std::string(kTaskLabel), o_.task_id}};
    if (owned) labels[std::string(kOwnerLabel)] = OwnerLabel();
    if (o_.persistent) labels[std::string(kPersistentLabel)] = "true";
    return labels;
  }

  Status Relabel(const Json& labels) {
    const Json body = {{"labels", labels}};
    ApiHttp::Call put = MakeCall("PUT", "/sandbox/" + id_ + "/labels", &body);
    put.timeout = o_.request_timeout;
    auto relabelled = http_->Expect2xx(put, 3);
    return relabelled ? Status::Ok() : relabelled.error();
  }

  // The owner label of sandbox `s` when it names a live talaria (this one included: a session
  // is open once); empty when the sandbox is free to take over.
  static std::string LiveOwner(const Json& s) {
    const std::string owner = s.contains("labels") ? JsonStringField(s["labels"], kOwnerLabel) : "";
    return owner.empty() || OwnerIsGone(owner) ? std::string() : owner;
  }

  Status InUse(const std::string& id, const std::string& owner) const {
    return FailedPreconditionError("daytona: the sandbox " + id + " of session " + o_.task_id +
                                   " is in use by talaria " + owner +
                                   (owner == OwnerLabel() ? " (this process)" : "") +
                                   "; end that session first, or start another session");
  }

  // This task's kept sandbox, if the service has one that can still run.
  Result<std::optional<Json>> FindKept() {
    const Json filter = {{std::string(kTaskLabel), o_.task_id},
                         {std::string(kPersistentLabel), "true"}};
    ApiHttp::Call get = MakeCall("GET", "/sandbox?labels=" + PercentEncode(DumpJson(filter)));
    get.timeout = o_.request_timeout;
    ApiAnswer answer = TALARIA_TRY(http_->Expect2xx(get, 3));
    const Json* items = &answer.json;
    if (answer.json.is_object() && answer.json.contains("items")) items = &answer.json["items"];
    if (!items->is_array()) return std::optional<Json>();
    for (const Json& s : *items) {
      // The filter is checked here too: a service that ignored it must not hand over another
      // task's sandbox.
      if (!s.is_object() || !s.contains("labels") || !s["labels"].is_object()) continue;
      if (JsonStringField(s["labels"], kTaskLabel) != o_.task_id ||
          JsonStringField(s["labels"], kPersistentLabel) != "true" ||
          JsonStringField(s, "id").empty() || Unusable(JsonStringField(s, "state"))) {
        continue;
      }
      return std::optional<Json>(s);
    }
    return std::optional<Json>();
  }

  // Makes `kept` this environment's sandbox: owned by this process, then started. Refused
  // (FailedPrecondition, the sandbox left as it is) while another live talaria owns it.
  Status TakeOver(const Json& kept) {
    const std::string id = JsonStringField(kept, "id");
    if (const std::string owner = LiveOwner(kept); !owner.empty()) return InUse(id, owner);
    id_ = id;
    if (Status relabelled = Relabel(Labels()); !relabelled.ok()) {
      id_.clear();  // not ours: nothing to stop on the way out
      return relabelled;
    }
    std::this_thread::sleep_for(kTakeoverSettle);
    ApiHttp::Call get = MakeCall("GET", "/sandbox/" + id_);
    get.timeout = o_.request_timeout;
    auto now = http_->Expect2xx(get, 3);
    if (!now) {
      id_.clear();
      return now.error();
    }
    if (const std::string owner = LiveOwner(now->json); owner != OwnerLabel()) {
      id_.clear();  // a rival's relabel came last: the sandbox is its
      return InUse(id, owner.empty() ? "unknown" : owner);
    }
    return WaitStarted(JsonStringField(now->json, "state"));
  }

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
  const auto headers_for = [organization = options.organization](const std::string& key) {
    net::HeaderList headers = {{"Authorization", "Bearer " + key}};
    if (!organization.empty()) headers.emplace_back("X-Daytona-Organization-ID", organization);
    return headers;
  };
  auto http = TALARIA_TRY(
      ApiHttp::Make("daytona", options.base_url, headers_for(options.api_key), options.ca_file));
  RenewKeyWith(*http, options.renew_api_key, headers_for);
  return std::unique_ptr<SandboxApi>(new DaytonaApi(options, std::move(http)));
}

}  // namespace talaria::sandboxes
