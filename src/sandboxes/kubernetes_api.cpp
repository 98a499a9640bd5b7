// Kubernetes through kubernetes-sigs/agent-sandbox: a `Sandbox` (agents.x-k8s.io/v1beta1)
// created through the API server (Bearer token or client certificate, TLS with the cluster's
// CA: a kubeconfig's, kubeconfig.h, or the pod's service account), waited on until its
// Ready condition is True, commands through the pod's runtime `POST /execute {command}` ->
// {stdout, stderr, exit_code} (port 8888), reached through the sandbox router (X-Sandbox-ID,
// X-Sandbox-Namespace, X-Sandbox-Port) or the pod's address; deleted with the environment.
// With a warm pool configured, a `SandboxClaim` (extensions.agents.x-k8s.io/v1beta1) on it
// instead: the controller hands over a pre-warmed Sandbox once the claim is Ready, and the claim
// is what talaria deletes. Every Sandbox and claim carries talaria's owner and task labels
// (label selector `talaria.owner` finds them). The runtime splits the command like a POSIX shell
// and runs it without one: the script goes to `bash -c` as one quoted word, with stderr joined to
// stdout inside it (the runtime returns them apart, which would lose their order).
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

constexpr int kRuntimePort = 8888;

// A label value: at most 63 of [A-Za-z0-9._-], starting and ending alphanumeric.
std::string LabelValue(std::string_view s) {
  std::string out;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    out += ok ? c : '_';
    if (out.size() == 63) break;
  }
  while (!out.empty() && !std::isalnum(static_cast<unsigned char>(out.back()))) out.pop_back();
  while (!out.empty() && !std::isalnum(static_cast<unsigned char>(out.front()))) out.erase(0, 1);
  return out;
}

bool IsReady(const Json& sandbox) {
  if (!sandbox.is_object() || !sandbox.contains("status")) return false;
  const Json& status = sandbox["status"];
  if (!status.is_object() || !status.contains("conditions") || !status["conditions"].is_array())
    return false;
  for (const Json& c : status["conditions"]) {
    if (JsonStringField(c, "type") == "Ready") return JsonStringField(c, "status") == "True";
  }
  return false;
}

class KubernetesApi final : public SandboxApi {
 public:
  KubernetesApi(SandboxServiceOptions o, std::unique_ptr<ApiHttp> http)
      : o_(std::move(o)), http_(std::move(http)) {}

  std::string_view kind() const override { return "kubernetes"; }

  Status Create() override {
    const Json labels = {{std::string(kOwnerLabel), LabelValue(OwnerLabel())},
                         {std::string(kTaskLabel), LabelValue(o_.task_id)}};
    if (!o_.k8s_warm_pool.empty()) return Claim(labels);
    Json container = {{"name", "runtime"}, {"image", o_.image}};
    container["ports"] = Json::array({Json{{"containerPort", kRuntimePort}}});
    container["resources"]["limits"] = {{"cpu", std::to_string(o_.cpu)},
                                        {"memory", std::to_string(o_.memory_mib) + "Mi"}};
    Json body = {{"apiVersion", "agents.x-k8s.io/v1beta1"}, {"kind", "Sandbox"}};
    body["metadata"] = {{"generateName", "talaria-"}, {"labels", labels}};
    body["spec"]["podTemplate"]["metadata"]["labels"] = labels;
    body["spec"]["podTemplate"]["spec"]["containers"] = Json::array({container});
    ApiHttp::Call call = MakeCall("POST", CollectionPath(), &body);
    call.timeout = o_.request_timeout;
    ApiAnswer answer = TALARIA_TRY(http_->Expect2xx(call, 1));
    if (answer.json.is_object() && answer.json.contains("metadata"))
      name_ = JsonStringField(answer.json["metadata"], "name");
    if (name_.empty()) return UnavailableError("kubernetes: the API server returned no name");
    // Ready is the only authoritative signal (the pod may run before its service exists).
    const Json current = TALARIA_TRY(WaitReady(CollectionPath() + "/" + name_, answer.json));
    const Json& status = current["status"];
    std::string host = JsonStringField(status, "serviceFQDN");
    if (host.empty()) host = FirstPodIp(status);
    return UseRuntime(host);
  }

  Result<ExecAnswer> Exec(const ExecCall& call, std::stop_token stop) override {
    const std::string script = "exec 2>&1\n" + ScriptWithStdin(call.script, call.stdin_data);
    const Json body = {{"command", "bash -c " + ShellQuote(script)}};
    ApiHttp::Call post = MakeCall("POST", runtime_ + "/execute", &body);
    post.headers = {{"X-Sandbox-ID", name_},
                    {"X-Sandbox-Namespace", o_.k8s_namespace},
                    {"X-Sandbox-Port", std::to_string(kRuntimePort)}};
    post.timeout = milliseconds(24 * 3600 * 1000);
    ApiAnswer answer = TALARIA_TRY(http_->Expect2xx(post, 1, stop));
    ExecAnswer a;
    a.output = JsonStringField(answer.json, "stdout") + JsonStringField(answer.json, "stderr");
    auto code = answer.json.find("exit_code");
    a.exit_code = code != answer.json.end() && code->is_number_integer() ? code->get<int>() : 0;
    return a;
  }

  Status Destroy() override {
    if (!claim_.empty()) return DeleteAt(ClaimsPath() + "/" + claim_);
    if (name_.empty()) return Status::Ok();
    return DeleteById(name_);
  }

  // With a warm pool, talaria's objects are its claims (deleting one deletes its Sandbox).
  Result<std::vector<ListedSandbox>> ListOwned() override {
    const std::string path = o_.k8s_warm_pool.empty() ? CollectionPath() : ClaimsPath();
    ApiHttp::Call get = MakeCall("GET", path + "?labelSelector=" + std::string(kOwnerLabel));
    get.timeout = o_.request_timeout;
    ApiAnswer answer = TALARIA_TRY(http_->Expect2xx(get, 3));
    std::vector<ListedSandbox> out;
    if (!answer.json.is_object() || !answer.json.contains("items") ||
        !answer.json["items"].is_array())
      return out;
    for (const Json& s : answer.json["items"]) {
      if (!s.is_object() || !s.contains("metadata") || !s["metadata"].is_object()) continue;
      const Json& meta = s["metadata"];
      const std::string owner =
          meta.contains("labels") ? JsonStringField(meta["labels"], kOwnerLabel) : "";
      if (!owner.empty()) out.push_back({JsonStringField(meta, "name"), owner});
    }
    return out;
  }

  Status DeleteById(const std::string& id) override {
    return DeleteAt((o_.k8s_warm_pool.empty() ? CollectionPath() : ClaimsPath()) + "/" + id);
  }

 private:
  std::string CollectionPath() const {
    return "/apis/agents.x-k8s.io/v1beta1/namespaces/" + o_.k8s_namespace + "/sandboxes";
  }
  // The agent-sandbox extension's claims on a SandboxWarmPool.
  std::string ClaimsPath() const {
    return "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/" + o_.k8s_namespace +
           "/sandboxclaims";
  }

  Status DeleteAt(const std::string& path) {
    ApiHttp::Call call = MakeCall("DELETE", path);
    call.timeout = o_.request_timeout;
    auto r = http_->Expect2xx(call, 3);
    if (!r && r.error().code() != StatusCode::kNotFound) return r.error();
    return Status::Ok();
  }

  // GETs `path` until the object's Ready condition is True (`first`: the object as created).
  Result<Json> WaitReady(const std::string& path, Json first) {
    const auto ready_by = std::chrono::steady_clock::now() + o_.ready_timeout;
    Json current = std::move(first);
    for (milliseconds pause{20}; !IsReady(current);
         pause = std::min(pause * 2, milliseconds(1000))) {
      if (std::chrono::steady_clock::now() > ready_by) {
        return Err(DeadlineExceededError("kubernetes: " + path + " not Ready in time"));
      }
      std::this_thread::sleep_for(pause);
      ApiHttp::Call get = MakeCall("GET", path);
      get.timeout = o_.request_timeout;
      current = TALARIA_TRY(http_->Expect2xx(get, 3)).json;
    }
    return current;
  }

  static std::string FirstPodIp(const Json& status) {
    if (!status.is_object() || !status.contains("podIPs") || !status["podIPs"].is_array() ||
        status["podIPs"].empty())
      return "";
    const Json& ip = status["podIPs"][0];
    return ip.is_string() ? ip.get<std::string>() : JsonStringField(ip, "ip");
  }

  // The runtime: the configured router, else `host` (the pod's service or address) :8888.
  Status UseRuntime(const std::string& host) {
    if (o_.data_plane_url.empty()) {
      if (host.empty()) return UnavailableError("kubernetes: Sandbox " + name_ + " has no address");
      runtime_ = "http://" + host + ":" + std::to_string(kRuntimePort);
    } else {
      runtime_ = o_.data_plane_url;
    }
    while (!runtime_.empty() && runtime_.back() == '/') runtime_.pop_back();
    return Status::Ok();
  }

  // A SandboxClaim on the warm pool: the controller hands over a pre-warmed Sandbox (named in
  // status.sandbox) once the claim is Ready; deleting the claim deletes that Sandbox.
  Status Claim(const Json& labels) {
    Json body = {{"apiVersion", "extensions.agents.x-k8s.io/v1beta1"}, {"kind", "SandboxClaim"}};
    body["metadata"] = {{"generateName", "talaria-"}, {"labels", labels}};
    body["spec"]["warmPoolRef"]["name"] = o_.k8s_warm_pool;
    body["spec"]["additionalPodMetadata"]["labels"] = labels;
    ApiHttp::Call call = MakeCall("POST", ClaimsPath(), &body);
    call.timeout = o_.request_timeout;
    ApiAnswer answer = TALARIA_TRY(http_->Expect2xx(call, 1));
    if (answer.json.is_object() && answer.json.contains("metadata"))
      claim_ = JsonStringField(answer.json["metadata"], "name");
    if (claim_.empty())
      return UnavailableError("kubernetes: the API server returned no claim name");
    const Json current = TALARIA_TRY(WaitReady(ClaimsPath() + "/" + claim_, answer.json));
    const Json& sandbox =
        current["status"].contains("sandbox") ? current["status"]["sandbox"] : Json::object();
    name_ = JsonStringField(sandbox, "name");
    if (name_.empty()) {
      return UnavailableError("kubernetes: SandboxClaim " + claim_ + " is Ready without a Sandbox");
    }
    return UseRuntime(FirstPodIp(sandbox));
  }

  const SandboxServiceOptions o_;
  const std::unique_ptr<ApiHttp> http_;
  std::string name_;   // the Sandbox
  std::string claim_;  // the SandboxClaim that holds it; empty: a Sandbox of talaria's own
  std::string runtime_;
};

}  // namespace

Result<std::unique_ptr<SandboxApi>> MakeKubernetesApi(const SandboxServiceOptions& options) {
  // No token: the client certificate alone authenticates.
  const auto headers_for = [](const std::string& token) {
    net::HeaderList headers;
    if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
    return headers;
  };
  auto http = TALARIA_TRY(
      ApiHttp::Make("kubernetes", options.base_url, headers_for(options.api_key), options.ca_file));
  RenewKeyWith(*http, options.renew_api_key, headers_for);
  http->UseTls(options.ca_pem, options.client_cert_pem, options.client_key_pem);
  SandboxServiceOptions o = options;
  if (o.k8s_namespace.empty()) o.k8s_namespace = "default";
  return std::unique_ptr<SandboxApi>(new KubernetesApi(std::move(o), std::move(http)));
}

}  // namespace talaria::sandboxes
