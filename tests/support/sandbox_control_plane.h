// A local sandbox control plane for the sandboxes module's tests and benchmark: one cpp-httplib
// server on 127.0.0.1 (port 0) speaking four dialects at once, with their paths, auth headers,
// fields and status codes:
//   - the managed Modal gateway (/v1/sandboxes, execs with client ids, poll, cancel, terminate;
//     idempotent creates by x-idempotency-key);
//   - Daytona (/sandbox create/get/list/start/stop/delete with labels; the toolbox's
//     /toolbox/{id}/toolbox/process/execute);
//   - E2B (/sandboxes, /v2/sandboxes, DELETE; envd's Connect process API /process.Process/Start
//     routed by E2b-Sandbox-Id, checked against the sandbox's envdAccessToken);
//   - Kubernetes agent-sandbox (an API-server stub for agents.x-k8s.io/v1beta1 Sandbox objects
//     with a Ready condition, and extensions.agents.x-k8s.io/v1beta1 SandboxClaims on the warm
//     pool `warm_pool`, each handed a sandbox named in its status once Ready; the pod runtime's
//     /execute routed by the router's X-Sandbox-ID).
// Its sandboxes are bubblewrap jails on this machine (the whole file system read-only, a
// private persistent /tmp per sandbox, the configured workspace writable) where bwrap works,
// plain processes otherwise; each exec is one process group, killed on timeout or cancel.
// Served over HTTPS (optionally requiring client certificates) when given a certificate.
// Modal's persistent filesystems: a terminate with snapshotBeforeTerminate copies the
// sandbox's /tmp under its logicalKey, and a create with persistentFilesystem for that key
// starts from the copy. Daytona's stopped sandboxes keep their files and are found by labels.
// Faults on demand: 409 while a Modal sandbox builds, 404 and dropped connections on polls, a
// create that fails after creating (the retry must find the same sandbox), slow claims, idle
// reaping.
// Thread-safety: the accessors are thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace talaria::test_support {

struct SandboxControlPlaneOptions {
  std::string api_key = "test-key";      // Bearer / X-API-Key every control request must carry
  std::string root;                      // per-sandbox directories; required
  std::string workspace;                 // bound writable into every sandbox; may be empty
  bool jail = true;                      // bwrap where it works
  int modal_build_409s = 0;              // per Modal sandbox: execs answered 409 first
  int modal_poll_404s = 0;               // per Modal exec: polls answered 404 first
  int modal_poll_drops = 0;              // per Modal exec: polls whose connection is cut mid-body
  int create_failures_after_create = 0;  // creates that make the sandbox, then answer 503
  std::chrono::milliseconds claim_delay{0};         // Daytona "starting" / k8s not Ready this long
  std::chrono::milliseconds idle_reap{0};           // >0: sandboxes idle this long are deleted
  std::chrono::milliseconds modal_exec_wait{2000};  // a Modal exec POST waits this long
  int threads = 64;
  std::string warm_pool = "talaria-pool";  // the SandboxWarmPool claims may name
  // HTTPS (all dialects): the server's certificate and key; with client_ca_file, a client
  // certificate signed by that CA is required at the handshake, and a request without the
  // Bearer key is let in only when the certificate's CN is client_cert_cn (a kubeconfig user).
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string client_ca_file;
  std::string client_cert_cn = "talaria-client";
};

struct FakeSandboxCounts {
  int live = 0;     // sandboxes not deleted (stopped ones count)
  int created = 0;  // sandboxes ever made
  int create_requests = 0;
  int execs = 0;          // commands run
  int auth_failures = 0;  // requests refused for their credentials
  int reaped_idle = 0;
  int client_cert_auths = 0;  // requests let in by their client certificate
  int claims = 0;             // SandboxClaims made
  int snapshots = 0;          // Modal filesystems snapshotted on terminate
  int restores = 0;           // Modal sandboxes created from their logical key's snapshot
  int label_queries = 0;      // Daytona listings filtered by labels
  int label_updates = 0;      // Daytona sandboxes relabelled
};

class SandboxControlPlane {
 public:
  static std::unique_ptr<SandboxControlPlane> Start(SandboxControlPlaneOptions options);
  virtual ~SandboxControlPlane() = default;
  virtual std::string url() const = 0;
  virtual FakeSandboxCounts counts() const = 0;
  // The Kubernetes namespaces of the live sandboxes.
  virtual std::vector<std::string> live_namespaces() const = 0;
  // Labels/metadata owner values of the live sandboxes.
  virtual std::vector<std::string> live_owners() const = 0;
  // Total wall time the fake spent running commands (its own cost, for the benchmark).
  virtual std::chrono::nanoseconds exec_time() const = 0;
  // From now on Daytona's process/execute answers exit 0 without running anything, after
  // waiting `hold` (counted in exec_time as a command's run would be): what is left of an
  // exec's cost is the client's and the HTTP exchange's (the benchmark's floor), with the
  // service's time spent idle instead of on processes that load the machine.
  virtual void SetNoopExecs(bool noop, std::chrono::microseconds hold = {}) = 0;
  // From now on only `key` is let in (a token rotated: the old one expired).
  virtual void SetApiKey(std::string key) = 0;
  // Whether the jail is bwrap (false: plain processes).
  virtual bool jailed() const = 0;
};

}  // namespace talaria::test_support
