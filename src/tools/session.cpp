#include "talaria/tools/session.h"
#include "talaria/checkpoints/checkpoint_manager.h"

#include "talaria/tools/session_services.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <map>
#include <mutex>

#include "talaria/audit/audit_log.h"
#include "talaria/base/log.h"
#include "talaria/base/paths.h"
#include "talaria/base/random.h"
#include "talaria/confinement/workspace.h"
#include "talaria/env/bwrap.h"
#include "talaria/env/environment.h"
#include "talaria/env/process_table.h"
#include "talaria/net/tool_gateway.h"
#include "talaria/sandboxes/sandboxes.h"
#include "tools/files/file_tracker.h"
#include "tools/synced_environment.h"
#include "tools/terminal_backends.h"

namespace talaria::tools {
namespace {

std::string CurrentDirectory() {
  char buf[PATH_MAX];
  return ::getcwd(buf, sizeof buf) != nullptr ? std::string(buf) : std::string(".");
}

// Whether `bwrap` can make its namespaces on this machine: asked once per program and process
// (a probe is a process start, ~35 ms of `talaria mcp`'s start), and when it cannot, said once.
bool SandboxWorksHere(const std::string& bwrap) {
  static std::mutex mu;
  static std::map<std::string, bool> known;  // Guarded by mu.
  std::lock_guard lock(mu);
  if (auto it = known.find(bwrap); it != known.end()) return it->second;
  const Status probed = env::ProbeBwrap(bwrap);
  if (!probed.ok()) {
    LogWarn("terminal: commands run UNSANDBOXED (backend local): " + probed.message() +
            ". Set terminal.backend: local to silence this, or make bubblewrap work.");
  }
  known.emplace(bwrap, probed.ok());
  return probed.ok();
}

// A sandbox service backend (modal, daytona, e2b, kubernetes): the service's section of the
// config, its key from the environment (never from config files), the session id as the
// sandbox's task label.
Result<std::shared_ptr<env::Environment>> OpenSandboxServiceFor(const TerminalSettings& t,
                                                                const std::string& session_id) {
  const auto from_env = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr ? std::string(v) : std::string();
  };
  sandboxes::SandboxServiceOptions o;
  o.kind = t.backend;
  o.base_url = t.sandbox_url;
  o.data_plane_url = t.sandbox_data_plane_url;
  o.ca_file = t.sandbox_ca_file;
  o.organization = t.sandbox_organization;
  o.initial_cwd = t.sandbox_cwd;
  o.persistent = t.sandbox_persistent;
  o.k8s_namespace = t.sandbox_namespace;
  o.kubeconfig = t.sandbox_kubeconfig;
  o.kube_context = t.sandbox_kube_context;
  o.k8s_warm_pool = t.sandbox_warm_pool;
  o.task_id = session_id;
  if (!t.sandbox_image.empty()) o.image = t.sandbox_image;
  std::string key_name;
  if (t.backend == "modal") {
    // Through the managed tool gateway: its origin (unless terminal.modal.url says otherwise)
    // and the user's gateway token, refreshed when near its expiry and again when the gateway
    // refuses it mid-session.
    auto gateway = net::ResolveToolGateway("modal");
    if (!gateway) return Err(gateway.error().WithContext("terminal backend modal"));
    if (o.base_url.empty()) o.base_url = gateway->origin;
    o.api_key = gateway->token;
    o.renew_api_key = []() -> Result<std::string> {
      auto renewed = net::ResolveToolGateway("modal");
      if (!renewed) return Err(renewed.error());
      return renewed->token;
    };
  } else if (t.backend == "daytona") {
    key_name = "DAYTONA_API_KEY";
    if (o.base_url.empty()) o.base_url = from_env("DAYTONA_API_URL");
    if (o.base_url.empty()) o.base_url = "https://app.daytona.io/api";
    if (o.organization.empty()) o.organization = from_env("DAYTONA_ORGANIZATION_ID");
  } else if (t.backend == "e2b") {
    key_name = "E2B_API_KEY";
    if (o.base_url.empty()) o.base_url = from_env("E2B_API_URL");
    if (o.base_url.empty()) o.base_url = "https://api.e2b.app";
    if (t.sandbox_image.empty()) o.image = "base";
  } else {  // kubernetes: the token file, else the kubeconfig's or the pod's service account
    o.token_file = t.sandbox_token_file;
  }
  if (!key_name.empty()) {
    o.api_key = from_env(key_name.c_str());
    if (o.api_key.empty()) {
      return Err(InvalidArgumentError("terminal backend " + t.backend + " needs " + key_name +
                                      " in the environment"));
    }
  }
  return sandboxes::OpenSandboxService(std::move(o));
}

// The terminal backend of `options`: auto (default: the bwrap sandbox where it works, else
// local), local, a bwrap sandbox whose writable part is the workspace, a remote machine over
// SSH, Docker with the workspace mounted at /workspace, Apptainer, or a pool of SSH hosts.
Result<std::shared_ptr<env::Environment>> OpenEnvironment(
    const SessionOptions& options, const std::shared_ptr<safety::Workspace>& workspace,
    const std::vector<std::string>& roots, const std::string& session_id) {
  const TerminalSettings& t = options.terminal;
  env::LocalOptions local;
  local.initial_cwd = workspace->cwd();
  local.env_passthrough = options.env_passthrough;
  const bool sandboxed = t.backend == "bwrap" || (t.backend == "auto" && SandboxWorksHere(t.bwrap));
  if (sandboxed) {
    env::SandboxOptions sandbox;
    sandbox.local = std::move(local);
    sandbox.writable = roots;
    // The default sandbox keeps the network (installing dependencies, fetching docs); the
    // explicit bwrap backend has always been offline.
    sandbox.network = t.network.value_or(t.backend == "auto");
    sandbox.home = ShellHome();
    sandbox.user_home = UserHome();
    sandbox.talaria_home = TalariaHome();
    sandbox.tmp_size_bytes = t.tmp_size_mb << 20;
    sandbox.bwrap = t.bwrap;
    // Probed just above for auto; the explicit backend lets OpenSandbox find out itself.
    sandbox.bwrap_probed = t.backend == "auto";
    return env::OpenSandbox(std::move(sandbox));
  }
  if (t.backend == "auto") return env::OpenLocal(std::move(local));
  if (t.backend == "docker") {
    env::DockerOptions docker;
    docker.image = t.docker_image;
    docker.forward_env = t.docker_forward_env;
    docker.mounts = {roots.front() + ":/workspace"};
    return env::OpenDocker(std::move(docker));
  }
  if (t.backend == "ssh") {
    env::SshOptions ssh;
    ssh.host = t.ssh_host;
    ssh.port = t.ssh_port;
    ssh.user = t.ssh_user;
    ssh.identity_file = t.ssh_identity_file;
    ssh.known_hosts_file = t.ssh_known_hosts_file;
    ssh.initial_cwd = t.ssh_cwd;
    return env::OpenSsh(std::move(ssh));
  }
  if (t.backend == "apptainer" || t.backend == "pool") {
    return OpenClusterBackend(t, roots, session_id);
  }
  if (t.backend == "modal" || t.backend == "daytona" || t.backend == "e2b" ||
      t.backend == "kubernetes") {
    auto remote = TALARIA_TRY(OpenSandboxServiceFor(t, session_id));
    if (!t.sandbox_sync) return remote;
    std::string remote_dir = t.sandbox_cwd.empty() ? remote->cwd() : t.sandbox_cwd;
    return WithWorkspaceSync(std::move(remote), workspace, roots.front(), std::move(remote_dir));
  }
  if (t.backend != "local")
    return Err(InvalidArgumentError("terminal backend '" + t.backend + "' is not available"));
  return env::OpenLocal(std::move(local));
}

}  // namespace

Result<std::shared_ptr<Session>> Session::Open(SessionOptions options) {
  safety::WorkspaceOptions ws;
  ws.roots = options.roots.empty() ? std::vector<std::string>{CurrentDirectory()} : options.roots;
  for (std::string& root : ws.roots) {
    if (!root.empty() && root.front() != '/')
      root.insert(0, CurrentDirectory() + "/");  // "." works
  }
  const std::vector<std::string> ws_roots = ws.roots;
  ws.cwd = options.cwd;
  ws.hard_link_reads = options.hard_link_reads;
  std::shared_ptr<Session> session(new Session());
  SessionServices& services = *session->services_;
  services.workspace = TALARIA_TRY(safety::Workspace::Open(std::move(ws)));
  session->id_ = options.session_id.empty() ? "sess_" + RandomHex(6) : options.session_id;
  session->tracker_ = std::make_shared<FileTracker>(options.read_guards);
  services.environment =
      TALARIA_TRY(OpenEnvironment(options, services.workspace, ws_roots, session->id_));
  services.processes = std::make_shared<env::ProcessTable>();
  if (options.checkpoints.enabled) {
    // Not fatal either: the tools work without snapshots; the reason is said once.
    auto store = checkpoints::CheckpointStore::Open(options.checkpoints);
    if (store) {
      services.checkpoints =
          std::make_shared<checkpoints::CheckpointManager>(std::move(*store), ws_roots);
    } else {
      LogWarn("checkpoints unavailable: " + store.error().message());
    }
  }
  if (options.audit) {
    auto audit = safety::AuditLog::Open(options.audit_log_path);
    if (audit) {
      services.audit_log = std::shared_ptr<const safety::AuditLog>(std::move(*audit));
    } else {
      // Not fatal: the tools still work, but say loudly that mutations go unrecorded.
      LogWarn("audit log unavailable, mutations are not recorded: " + audit.error().message());
    }
  }
  session->options_ = std::move(options);  // kept for Narrowed
  return session;
}

Result<std::shared_ptr<Session>> Session::Narrowed(std::vector<std::string> roots) const {
  SessionOptions options = options_;
  options.roots = std::move(roots);
  options.cwd.clear();
  options.session_id = id_;
  options.audit = false;                // shares ours below
  options.checkpoints.enabled = false;  // shares ours below (one snapshot per turn)
  auto narrowed = TALARIA_TRY(Open(std::move(options)));
  narrowed->tracker_ = tracker_;
  narrowed->services_->audit_log = services_->audit_log;
  narrowed->services_->checkpoints = services_->checkpoints;
  return narrowed;
}

void Session::NewTurn() const {
  if (services_->checkpoints) services_->checkpoints->NewTurn();
}

void Session::ForgetReads() const { static_cast<FileTracker&>(*tracker_).ForgetReads(); }

ToolContext Session::NewContext(std::string call_id, std::string task_id) const {
  ToolContext ctx;
  ctx.session_id = id_;
  ctx.task_id = std::move(task_id);
  ctx.call_id = std::move(call_id);
  ctx.services = services_;  // shared by every call of the session; set up once by Open
  ctx.read_tracker = tracker_;
  return ctx;
}

}  // namespace talaria::tools
