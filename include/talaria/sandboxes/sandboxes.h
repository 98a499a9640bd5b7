// Sandbox services as execution environments: a remote sandbox (Modal through its managed
// gateway, Daytona, E2B, Kubernetes agent-sandbox) created for the session, commands run through
// the service's exec API with the session's shell state kept inside the sandbox, the sandbox
// deleted (or stopped, when persistent) with the environment.
//
//   talaria::sandboxes::SandboxServiceOptions o;
//   o.kind = "daytona"; o.base_url = "https://app.daytona.io/api"; o.api_key = key;
//   auto env = talaria::sandboxes::OpenSandboxService(o);
//   auto r = (*env)->Run("cd /srv && export A=1", {});
//
// Every sandbox talaria creates carries its owner (this process: host, pid and start time) as a
// label or metadata, so a talaria killed without cleanup leaves sandboxes that the next one
// finds and deletes (ReapOrphanSandboxes).
// Thread-safety: as env::Environment; ReapOrphanSandboxes is thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/env/environment.h"

namespace talaria::sandboxes {

struct SandboxServiceOptions {
  // "modal" (the managed gateway's REST API; the direct Modal SDK speaks gRPC and is not
  // supported), "daytona", "e2b" or "kubernetes".
  std::string kind;
  // The control plane: the Modal gateway origin, Daytona's API base (".../api"), E2B's API
  // ("https://api.e2b.app"), the Kubernetes API server.
  std::string base_url;
  // Bearer token / API key (E2B: X-API-Key; Kubernetes: the service account's token).
  std::string api_key;
  // Asked for a fresh api_key when the control plane answers 401 mid-session; the request is
  // then sent once more with it (every kind). Set for Modal by the session (the managed tool
  // gateway's token, refreshed: net/tool_gateway.h) and, for Kubernetes, by OpenSandboxService
  // when the token comes from a file (token_file, the kubeconfig, the pod's service account:
  // rotated tokens are read again). Daytona's and E2B's keys are static. Empty: a 401 is final.
  std::function<Result<std::string>()> renew_api_key;
  // Kubernetes: a file holding the bearer token (read when api_key is empty); empty: none.
  std::string token_file;
  std::string organization;  // Daytona: X-Daytona-Organization-ID; empty: none
  // E2B: the envd data plane's base URL; empty: https://49983-<sandboxID>.<domain>.
  // Kubernetes: the sandbox router's base URL (X-Sandbox-* headers); empty: the pod address
  // (http://<serviceFQDN or podIP>:8888).
  std::string data_plane_url;
  std::string ca_file;  // HTTPS: PEM CA bundle instead of the system's
  // HTTPS, in memory (a kubeconfig's): PEM certificates to trust instead of ca_file, and a
  // client certificate with its key. Empty: none.
  std::string ca_pem;
  std::string client_cert_pem;
  std::string client_key_pem;
  // Kubernetes without base_url: the kubeconfig files (':'-separated, as KUBECONFIG; empty:
  // $KUBECONFIG, else ~/.kube/config when it exists) and the context (empty: its
  // current-context) giving the API server, its CA, the user's token or client certificate and
  // the namespace; with none of them, in a pod, the service account's.
  std::string kubeconfig;
  std::string kube_context;
  std::string image = "debian:12-slim";  // Modal/Daytona image, E2B template, pod image
  std::string initial_cwd;               // inside the sandbox; empty: its home directory
  std::string task_id;                   // logical key / label; empty: a random one
  std::string k8s_namespace;             // empty: the kubeconfig context's, else "default"
  // Kubernetes: a SandboxWarmPool to claim a sandbox from (a SandboxClaim of the agent-sandbox
  // extensions); empty: a Sandbox of talaria's own, from `image`.
  std::string k8s_warm_pool;
  int cpu = 1;
  int64_t memory_mib = 5120;
  int64_t disk_mib = 0;  // 0: the service's default
  // Keep the sandbox's files for the next environment of the same task_id: Daytona stops the
  // sandbox instead of deleting it and finds it again by its task label; Modal's gateway
  // snapshots its filesystem on terminate and restores it for the same logical key (task_id).
  bool persistent = false;
  std::chrono::milliseconds ready_timeout{120'000};
  std::chrono::milliseconds request_timeout{60'000};  // one control-plane request
};

// Creates the sandbox (waiting until it is ready) and prepares the session in it.
// Errors: InvalidArgument (unknown kind, no base_url, a kubeconfig that does not resolve),
// NotFound and FailedPrecondition (a kubeconfig's: sandboxes/kubeconfig.h), Unavailable (the
// service refused or could not be reached; the message carries its status and error text),
// DeadlineExceeded (not ready within ready_timeout).
Result<std::shared_ptr<env::Environment>> OpenSandboxService(SandboxServiceOptions options);

// This process as a sandbox owner: "<host>.<pid>.<start time in ticks>" (a label value).
std::string OwnerLabel();
// Whether `owner` (an OwnerLabel) names a process on this host that is gone. An owner on
// another host is never judged dead.
bool OwnerIsGone(std::string_view owner);

// Lists the service's sandboxes that carry talaria's owner label and deletes those whose owner
// OwnerIsGone says is gone (`is_gone` replaces that judgement when set); a persistent session's
// (Daytona) is stopped instead, and left alone once stopped, for the session to find again.
// Returns how many were deleted or stopped. Modal's gateway has no listing: there the gateway's
// idle timeout reaps.
Result<int> ReapOrphanSandboxes(const SandboxServiceOptions& options,
                                const std::function<bool(std::string_view owner)>& is_gone = {});

}  // namespace talaria::sandboxes
