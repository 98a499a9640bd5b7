// A tool session: the per-conversation state the tools share — the workspace (roots and cwd),
// the read tracker behind the read guardrails, the audit log of mutations, the shell session
// terminal commands run in (local, starting in the workspace cwd) and its background processes.
//
//   talaria::tools::SessionOptions options;
//   options.roots = {"/srv/project"};
//   auto session = talaria::tools::OpenSession(std::move(options));
//   talaria::ToolContext ctx = session->NewContext("call_1");
//   dispatcher.Dispatch("read_file", R"({"path": "README.md"})", ctx);
//
// Thread-safety: a Session is thread-safe; each call gets its own ToolContext.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/checkpoints/checkpoint_store.h"
#include "talaria/confinement/workspace.h"
#include "talaria/core/config.h"
#include "talaria/core/tool_context.h"
#include "talaria/tools/session_services.h"

namespace talaria::tools {

// Where a session's terminal commands run: config.yaml's `terminal` section.
//   terminal:
//     backend: local            # local | bwrap | ssh | docker | apptainer | pool
//     env_passthrough: [GH_TOKEN]
//     network: false            # bwrap: keep the network
//     ssh: {host: build1, port: 22, user: ci, identity_file: /home/me/.ssh/id_ed25519, cwd: /srv}
//     docker: {image: "debian:12-slim", forward_env: []}
//     apptainer: {image: "docker://debian:12-slim", program: apptainer}
//     pool: {hosts: ["ci@build1:22", build2], health_interval_s: 10}
//     modal: {cwd: /root, sync: true}   # likewise daytona, e2b, kubernetes
struct TerminalSettings {
  // auto: the bwrap sandbox where bubblewrap can make namespaces here, else local (with one
  // warning); local | bwrap | ssh | docker | modal | daytona | e2b | kubernetes pick one.
  std::string backend = "auto";
  // The sandbox's network; unset: on for auto, off for an explicit bwrap.
  std::optional<bool> network;
  uint64_t tmp_size_mb = 512;   // the sandbox's private /tmp
  std::string bwrap = "bwrap";  // the sandbox's program (looked up in PATH)
  std::string ssh_host;
  int ssh_port = 22;
  std::string ssh_user;
  std::string ssh_identity_file;
  std::string ssh_cwd;
  // ssh.known_hosts_file (ssh and pool): host keys apart from ~/.ssh/known_hosts (new hosts are
  // accepted on first contact, a changed key is refused); empty: ssh's default file.
  std::string ssh_known_hosts_file;
  std::string docker_image = "debian:12-slim";
  std::vector<std::string> docker_forward_env;
  std::string apptainer_image = "docker://debian:12-slim";
  std::string apptainer_program;  // empty: apptainer, else singularity
  // pool: "user@host:port" SSH machines (identity_file, known_hosts_file and cwd from ssh:),
  // probed every
  // pool_health_interval_s seconds.
  std::vector<std::string> pool_hosts;
  int64_t pool_health_interval_s = 10;
  // The sandbox services (backend modal | daytona | e2b | kubernetes), from the section named
  // after the backend. Keys come from the environment, never from config: TOOL_GATEWAY_USER_TOKEN
  // (modal), DAYTONA_API_KEY, E2B_API_KEY, the service account's token (kubernetes).
  std::string sandbox_url;             // url: the control plane; empty: the service's public one
  std::string sandbox_image;           // image (E2B: the template); empty: the default
  std::string sandbox_data_plane_url;  // data_plane_url: E2B's envd / the agent-sandbox router
  std::string sandbox_namespace;   // kubernetes namespace; empty: the kubeconfig's, else default
  std::string sandbox_kubeconfig;  // kubeconfig (files, ':'-separated); empty: KUBECONFIG, ~/.kube
  std::string sandbox_kube_context;  // context; empty: the kubeconfig's current-context
  std::string sandbox_warm_pool;     // warm_pool: claim from this SandboxWarmPool (kubernetes)
  std::string sandbox_ca_file;       // ca_file
  std::string sandbox_token_file;    // token_file (kubernetes bearer token)
  std::string sandbox_organization;  // organization (Daytona)
  std::string sandbox_cwd;           // cwd inside the sandbox
  bool sandbox_persistent = false;   // persistent
  // sync: the workspace goes into the sandbox's cwd at open (one tar stream), files the file
  // tools change go in before each command, and files a command changed come back after it
  // (written through the workspace, its confinement rules applying).
  bool sandbox_sync = false;
};

// The read guardrails of read_file and search_files (the original's): an unchanged re-read
// returns a stub ("File unchanged since last read … refer to it"), the same read or search made
// 3 times in a row warns and 4 times is refused. They assume the caller is one conversation
// whose context still holds the earlier results, so they belong to whoever owns that context:
// kOn for an agent loop (call Session::ForgetReads when it compacts its context), kOff for a
// server whose callers are many conversations (`talaria mcp` unless `mcp.read_guards: true`).
// write_file and patch warn about files changed since they were last read either way.
enum class ReadGuards : unsigned char { kOn, kOff };

struct SessionOptions {
  std::vector<std::string> roots;  // empty: the process's current directory; relative: beneath it
  std::string cwd;                 // empty: the first root
  std::string session_id;          // empty: a random id
  std::string audit_log_path;      // empty: $TALARIA_HOME/audit.jsonl
  bool audit = true;
  // Terminal: variables kept in commands' environment although their names look secret.
  std::vector<std::string> env_passthrough;
  TerminalSettings terminal;
  // files.read_hard_links: read files that have more than one hard link (see HardLinkReads).
  safety::HardLinkReads hard_link_reads = safety::HardLinkReads::kRefuse;
  ReadGuards read_guards = ReadGuards::kOn;
  // config `checkpoints`: snapshots before write_file, patch and destructive terminal commands.
  checkpoints::CheckpointSettings checkpoints;
};

// The `terminal`, `files` and `checkpoints` sections of `config` (defaults when absent);
// SessionOptions.env_passthrough is filled from it too. Errors: InvalidArgument naming the bad key.
Result<SessionOptions> SessionOptionsFromConfig(const Config& config, SessionOptions base = {});

class Session {
 public:
  // Errors: those of Workspace::Open (bad roots or cwd).
  static Result<std::shared_ptr<Session>> Open(SessionOptions options);

  const std::string& id() const { return id_; }
  const std::shared_ptr<safety::Workspace>& workspace() const { return services_->workspace; }

  // A context for one call of this session.
  ToolContext NewContext(std::string call_id, std::string task_id = "default") const;

  // The same conversation confined to `roots` (the caller checks they lie inside this
  // session's): a workspace of those roots and a terminal of its own — a shell that starts in
  // roots[0], and under bwrap/docker one that can write only there. The read tracker and the
  // audit log are shared. Errors: those of Open.
  Result<std::shared_ptr<Session>> Narrowed(std::vector<std::string> roots) const;

  // The conversation's context no longer holds earlier read results (it was compacted or
  // restarted): the read guardrails start over, so the next read returns content again.
  void ForgetReads() const;

  // A new turn of the conversation: the next mutation of each project directory is
  // snapshotted again (checkpoints.enabled). An agent loop calls it as each turn starts.
  void NewTurn() const;
  // The session's checkpoints; null when checkpoints are off.
  const std::shared_ptr<checkpoints::CheckpointManager>& checkpoints() const {
    return services_->checkpoints;
  }

 private:
  Session() = default;
  SessionOptions options_;
  std::string id_;
  // Workspace, audit log, environment and processes: what every call's context carries.
  std::shared_ptr<SessionServices> services_ = std::make_shared<SessionServices>();
  std::shared_ptr<ReadLoopObserver> tracker_;
};

inline Result<std::shared_ptr<Session>> OpenSession(SessionOptions options) {
  return Session::Open(std::move(options));
}

}  // namespace talaria::tools
