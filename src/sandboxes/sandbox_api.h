// One sandbox service's dialect behind one interface: create the sandbox, run a command line in
// it, end a running one, delete it, list talaria's. RemoteEnvironment (the env::Environment
// every service shares) is written against this; each service's file implements it.
// Thread-safety: Exec, EndExec and Destroy may run at once on different threads.
#pragma once

#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/sandboxes/sandboxes.h"

namespace talaria::sandboxes {

struct ExecCall {
  std::string exec_id;  // client-chosen, unique per call
  std::string script;   // run with bash -c
  std::string stdin_data;
  // The service ends the call itself after this long (ServiceEndsCalls); zero: none.
  std::chrono::milliseconds timeout{0};
};

struct ExecAnswer {
  std::string output;  // stdout and stderr
  int exit_code = 0;
  bool timed_out = false;  // the service ended it at its timeout
  bool cancelled = false;  // the service ended it on EndExec
};

struct ListedSandbox {
  std::string id;
  std::string owner;     // talaria's owner label; empty: not talaria's
  bool kept = false;     // a persistent session's: stopped, never deleted, by the reaper
  bool stopped = false;  // not running (nothing to reap while kept)
};

class SandboxApi {
 public:
  virtual ~SandboxApi() = default;
  virtual std::string_view kind() const = 0;
  // Creates the sandbox and waits until commands can run in it.
  virtual Status Create() = 0;
  // Runs `call` to its end. `stop` requested: the wait ends (Cancelled) — the command goes on
  // until EndExec.
  virtual Result<ExecAnswer> Exec(const ExecCall& call, std::stop_token stop) = 0;
  // Whether the service has its own exec timeout and cancel (EndExec ends the call and its
  // answer says so). Otherwise the environment ends calls with a second command.
  virtual bool ServiceEndsCalls() const { return false; }
  // Ends call `exec_id` and returns what it printed (ServiceEndsCalls only).
  virtual Result<ExecAnswer> EndExec(const std::string& /*exec_id*/) {
    return Err(FailedPreconditionError("no service-side cancel"));
  }
  // Deletes the sandbox (stops it when persistent).
  virtual Status Destroy() = 0;
  // talaria's sandboxes on the service (those carrying the owner label).
  virtual Result<std::vector<ListedSandbox>> ListOwned() = 0;
  virtual Status DeleteById(const std::string& id) = 0;
  // Stops a kept sandbox (ListedSandbox::kept; only services that keep sandboxes list them).
  virtual Status StopById(const std::string& /*id*/) {
    return FailedPreconditionError(std::string(kind()) + ": sandboxes are not kept");
  }
};

// The dialects. Errors as OpenSandboxService's.
Result<std::unique_ptr<SandboxApi>> MakeModalApi(const SandboxServiceOptions& options);
Result<std::unique_ptr<SandboxApi>> MakeDaytonaApi(const SandboxServiceOptions& options);
Result<std::unique_ptr<SandboxApi>> MakeE2bApi(const SandboxServiceOptions& options);
Result<std::unique_ptr<SandboxApi>> MakeKubernetesApi(const SandboxServiceOptions& options);

// The label (Daytona, Kubernetes) / metadata key (E2B) naming a sandbox's owner, and the one
// carrying the task id.
inline constexpr std::string_view kOwnerLabel = "talaria.owner";
inline constexpr std::string_view kTaskLabel = "talaria.task";
// "true" on a persistent session's sandbox (Daytona): found again by its task label.
inline constexpr std::string_view kPersistentLabel = "talaria.persistent";

}  // namespace talaria::sandboxes
