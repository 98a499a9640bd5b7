// OpenSandboxService: the dialect by kind; the owner label; the reaper of a dead talaria's
// sandboxes.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "sandboxes/kubeconfig.h"
#include "sandboxes/remote_environment.h"
#include "sandboxes/sandbox_api.h"
#include "talaria/base/file_io.h"
#include "talaria/base/random.h"
#include "talaria/sandboxes/sandboxes.h"

namespace talaria::sandboxes {
namespace {

// Field 22 of /proc/<pid>/stat: the start time in clock ticks since boot ("" when gone).
std::string StartTicks(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return "";
  const size_t close = line.rfind(')');  // the name may hold spaces
  if (close == std::string::npos) return "";
  size_t at = close + 2;
  for (int field = 3; field < 22; ++field) {
    at = line.find(' ', at);
    if (at == std::string::npos) return "";
    ++at;
  }
  return line.substr(at, line.find(' ', at) - at);
}

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  std::string host;
  for (char* p = buf; *p != '\0'; ++p) {
    const char c = *p;
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    host += ok ? c : '_';
  }
  return host.substr(0, 40);
}

Result<std::unique_ptr<SandboxApi>> MakeApi(const SandboxServiceOptions& o) {
  if (o.kind == "modal") return MakeModalApi(o);
  if (o.kind == "daytona") return MakeDaytonaApi(o);
  if (o.kind == "e2b") return MakeE2bApi(o);
  if (o.kind == "kubernetes") return MakeKubernetesApi(o);
  return Err(InvalidArgumentError("sandbox service '" + o.kind +
                                  "' is not one of modal, daytona, e2b, kubernetes"));
}

// Without an API server configured: the kubeconfig's (the configured files, else
// $KUBECONFIG, else ~/.kube/config), when there is one. What is configured stays.
Status FillFromKubeconfig(SandboxServiceOptions& o) {
  if (!o.base_url.empty()) return Status::Ok();
  const std::string paths = o.kubeconfig.empty() ? DefaultKubeconfigPaths() : o.kubeconfig;
  if (paths.empty()) return Status::Ok();
  const KubeAccess access = TALARIA_TRY(LoadKubeconfig(paths, o.kube_context));
  o.base_url = access.server;
  if (o.api_key.empty() && !access.token.empty()) {
    o.api_key = access.token;
    // A refused token is looked up again: the kubeconfig may have been refreshed since.
    if (!o.renew_api_key) {
      o.renew_api_key = [paths, context = o.kube_context]() -> Result<std::string> {
        const KubeAccess again = TALARIA_TRY(LoadKubeconfig(paths, context));
        return again.token;
      };
    }
  }
  if (o.ca_file.empty() && o.ca_pem.empty()) o.ca_pem = access.ca_pem;
  if (o.client_cert_pem.empty()) {
    o.client_cert_pem = access.client_cert_pem;
    o.client_key_pem = access.client_key_pem;
  }
  if (o.k8s_namespace.empty()) o.k8s_namespace = access.k8s_namespace;
  return Status::Ok();
}

// A bearer token file's content without its trailing whitespace. Followed through symbolic
// links: Kubernetes mounts service account tokens as links into a directory it swaps when it
// rotates them.
Result<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Err(NotFoundError("cannot read the token file " + path));
  std::string token((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!token.empty() && (token.back() == '\n' || token.back() == ' ' || token.back() == '\r'))
    token.pop_back();
  return token;
}

// The token in `path` as the key, read again when the service refuses it (a rotated token).
Status UseTokenFile(SandboxServiceOptions& o, const std::string& path) {
  o.api_key = TALARIA_TRY(ReadTokenFile(path));
  if (!o.renew_api_key) o.renew_api_key = [path] { return ReadTokenFile(path); };
  return Status::Ok();
}

// In a pod: the API server and the service account's token and CA, when not configured.
void FillInCluster(SandboxServiceOptions& o) {
  // Whole literals: GCC 12 misreads the bounds of a concatenated temporary (-Warray-bounds).
  constexpr const char* kToken = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  constexpr const char* kCa = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (o.base_url.empty() && host != nullptr && *host != '\0') {
    o.base_url = std::string("https://") + host + ":" + (port != nullptr ? port : "443");
  }
  if (o.api_key.empty() && ::access(kToken, R_OK) == 0) (void)UseTokenFile(o, kToken);
  const std::string ca = kCa;
  if (o.ca_file.empty() && o.ca_pem.empty() && ::access(ca.c_str(), R_OK) == 0) o.ca_file = ca;
}

// Kubernetes: the token file, the kubeconfig, else (in a pod) the service account, else what is
// configured.
Status FillKubernetes(SandboxServiceOptions& o) {
  if (o.api_key.empty() && !o.token_file.empty()) {
    if (Status read = UseTokenFile(o, o.token_file); !read.ok()) {
      return read.WithContext("kubernetes token file");
    }
  }
  TALARIA_RETURN_IF_ERROR(FillFromKubeconfig(o));
  FillInCluster(o);
  if (o.k8s_namespace.empty()) o.k8s_namespace = "default";
  return Status::Ok();
}

}  // namespace

std::string OwnerLabel() {
  static const std::string label = [] {
    const long pid = static_cast<long>(::getpid());
    return HostName() + "." + std::to_string(pid) + "." + StartTicks(pid);
  }();
  return label;
}

bool OwnerIsGone(std::string_view owner) {
  const size_t last = owner.rfind('.');
  if (last == std::string_view::npos || last == 0) return false;
  const size_t mid = owner.rfind('.', last - 1);
  if (mid == std::string_view::npos) return false;
  if (owner.substr(0, mid) != HostName()) return false;  // another machine's: not ours to judge
  const std::string pid_text(owner.substr(mid + 1, last - mid - 1));
  char* end = nullptr;
  const long pid = std::strtol(pid_text.c_str(), &end, 10);
  if (pid_text.empty() || *end != '\0' || pid <= 0) return false;
  return StartTicks(pid) != owner.substr(last + 1);
}

Result<std::shared_ptr<env::Environment>> OpenSandboxService(SandboxServiceOptions options) {
  if (options.kind == "kubernetes") TALARIA_RETURN_IF_ERROR(FillKubernetes(options));
  if (options.task_id.empty()) options.task_id = "talaria-" + RandomHex(6);
  auto api = TALARIA_TRY(MakeApi(options));
  return OpenRemoteEnvironment(std::move(api), options.initial_cwd);
}

Result<int> ReapOrphanSandboxes(const SandboxServiceOptions& options,
                                const std::function<bool(std::string_view owner)>& is_gone) {
  SandboxServiceOptions o = options;
  if (o.kind == "kubernetes") TALARIA_RETURN_IF_ERROR(FillKubernetes(o));
  auto api = TALARIA_TRY(MakeApi(o));
  const std::vector<ListedSandbox> listed = TALARIA_TRY(api->ListOwned());
  int reaped = 0;
  for (const ListedSandbox& s : listed) {
    if (s.id.empty() || (s.kept && s.stopped)) continue;  // kept for its session to find
    const bool gone = is_gone ? is_gone(s.owner) : OwnerIsGone(s.owner);
    if (!gone) continue;
    TALARIA_RETURN_IF_ERROR(s.kept ? api->StopById(s.id) : api->DeleteById(s.id));
    ++reaped;
  }
  return reaped;
}

}  // namespace talaria::sandboxes
