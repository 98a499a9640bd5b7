// Where commands run: one interface over the local machine, a bubblewrap sandbox, SSH and
// Docker. An Environment is a shell session: the working directory and the exported variables a
// command leaves behind are what the next command starts with.
//
//   auto env = talaria::env::OpenLocal({.initial_cwd = "/srv/project"});
//   auto r = (*env)->Run("cd src && export MODE=fast", {});
//   r = (*env)->Run("pwd; echo $MODE", {});   // "/srv/project/src\nfast\n"
//
// Thread-safety: Run and Start may be called from any thread; Run calls of one session are
// serialized (each sees the state the previous one left).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/spawn.h"
#include "talaria/base/status.h"

namespace talaria::env {

struct CommandOptions {
  // Absolute directory to run in; empty: the session's current directory.
  std::string workdir;
  // Wall-clock limit; zero: none. On expiry the command's whole process group is killed and the
  // outcome says timed_out (exit 124) with the output so far.
  std::chrono::milliseconds timeout{0};
  // Cancellation: the group is killed, exit 130.
  std::stop_token cancel;
  // The interleaved stdout+stderr is kept as 40 % head / 60 % tail of this many bytes.
  size_t max_output_bytes = 50'000;
  std::string stdin_data;
};

struct CommandOutcome {
  std::string output;
  size_t output_total_bytes = 0;
  int exit_code = 0;
  bool timed_out = false;
  bool cancelled = false;
};

class Environment {
 public:
  virtual ~Environment() = default;

  // "local", "bwrap", "ssh", "docker" or "apptainer".
  virtual std::string_view kind() const = 0;
  // Whether execute_code runs its scripts through this environment, on the machine its commands
  // run on (whose interpreter and files are not this process's), instead of beside talaria.
  virtual bool RunsScriptsRemotely() const { return false; }
  // The directory the next command starts in.
  virtual std::string cwd() const = 0;

  // Runs `command` with bash in the session; its cwd and exports carry over.
  virtual Result<CommandOutcome> Run(std::string_view command, const CommandOptions& options) = 0;
  // Starts `command` in the background from the session's current state (its own changes do
  // not carry back). The caller owns the returned process (see StartProcess).
  virtual Result<StartedProcess> Start(std::string_view command, const CommandOptions& options,
                                       const StartOptions& start) = 0;
};

struct LocalOptions {
  // Where the first command runs; empty: the process's current directory.
  std::string initial_cwd;
  // Variables kept although their names look secret (KEY, TOKEN, SECRET, PASSWORD, ...).
  std::vector<std::string> env_passthrough;
  // Private directory for the session's shell state; empty: a fresh one under $TMPDIR.
  std::string state_dir;
};

// Errors: NotFound (no bash, or initial_cwd missing), Internal (state directory).
Result<std::shared_ptr<Environment>> OpenLocal(LocalOptions options);

// A bubblewrap sandbox on this machine: the whole file system read-only, the `writable`
// directories (the workspace) and a private /tmp writable, no network unless allowed, own
// PID namespace, and the sandbox dies with its parent. Same shell-state rules as local.
struct SandboxOptions {
  LocalOptions local;
  std::vector<std::string> writable;  // absolute directories
  bool network = false;
  std::string bwrap = "bwrap";  // the program (looked up in PATH)
  // Hidden inside the sandbox: talaria's own state and the user's credential stores under
  // `home` (~/.ssh, ~/.aws, ~/.gnupg, ~/.kube, ~/.docker, ~/.config/gh, ~/.netrc,
  // ~/.git-credentials and the like; see CredentialStores). Empty: not hidden.
  std::string home;
  std::string user_home;  // the password database's, when it differs from `home`
  std::string talaria_home;
  // The private /tmp's size limit; 0: none.
  uint64_t tmp_size_bytes = uint64_t{512} << 20;
  // The caller ran ProbeBwrap(bwrap) successfully in this process already: OpenSandbox does not
  // spawn another probe.
  bool bwrap_probed = false;
};

// The credential stores a sandbox hides: those of the list that exist under `home`, and
// `talaria_home` when it exists.
std::vector<std::string> CredentialStores(const std::string& home, const std::string& talaria_home);
// Errors: NotFound when bwrap is missing, FailedPrecondition when it cannot create namespaces.
Result<std::shared_ptr<Environment>> OpenSandbox(SandboxOptions options);

// A remote machine over OpenSSH: one multiplexed connection (ControlMaster/ControlPersist),
// BatchMode (never a password prompt), the shell state kept in a private directory on the
// remote side.
struct SshOptions {
  std::string host;
  int port = 22;
  std::string user;                        // empty: ssh's default
  std::string identity_file;               // -i; empty: ssh's default keys
  std::string known_hosts_file;            // UserKnownHostsFile; empty: ssh's default
  std::string initial_cwd;                 // remote directory; empty: the remote home
  std::string control_dir;                 // ControlPath sockets; empty: $TALARIA_HOME/ssh
  std::vector<std::string> extra_options;  // more "-o Key=Value" options
  std::chrono::seconds connect_timeout{10};
};
// Connects (and checks the connection) before returning. Errors: NotFound (no ssh client),
// Unavailable (cannot connect or authenticate; the message carries ssh's stderr).
Result<std::shared_ptr<Environment>> OpenSsh(SshOptions options);

// A Docker container (the docker CLI), started with the original's hardening flags
// (--cap-drop ALL plus DAC_OVERRIDE/CHOWN/FOWNER, no-new-privileges, --pids-limit 256, tmpfs
// /tmp /var/tmp /run, cpu/memory limits), the workspace bind-mounted, kept for the session.
struct DockerOptions {
  std::string image = "debian:12-slim";
  std::vector<std::string> mounts;         // "host_dir:container_dir" bind mounts
  std::string initial_cwd = "/workspace";  // inside the container
  std::vector<std::string> forward_env;    // variable names passed through (none by default)
  double cpus = 1;
  int64_t memory_mb = 5120;
  std::string docker = "docker";
  // The engine's address (docker -H, e.g. "unix:///run/talaria/docker.sock"); empty: the CLI's
  // own default (DOCKER_HOST, its context, /var/run/docker.sock).
  std::string host;
  // --network for the container; empty: the engine's default.
  std::string network;
  // --pull: "missing" (docker's default), "never" (offline, images imported locally) or
  // "always"; empty: not passed.
  std::string pull;
  // More --label KEY=VALUE on the container (talaria.session=1 is always set).
  std::vector<std::string> labels;
};
// The image must hold bash (the session's shell); `ps` is used when present. Commands run as
// one `docker exec` each; the shell state lives in the container (see remote_shell_scripts.h).
// Errors: NotFound (no docker CLI), Unavailable (no engine answers, the container does not
// start or runs no bash; the message says which), NotFound (initial_cwd missing in the image).
Result<std::shared_ptr<Environment>> OpenDocker(DockerOptions options);

// Singularity / Apptainer: one instance per session (`instance start --containall --no-home`,
// with a persistent overlay directory or a writable tmpfs), commands through
// `exec instance://<name>`, `instance stop` when the session ends. A docker:// image is built
// into a SIF once (under a lock, at most 10 minutes) in the cache directory; when that build
// fails the docker:// URL is given to the instance as is.
struct ApptainerOptions {
  std::string image = "docker://debian:12-slim";  // a SIF file, a sandbox directory or docker://
  // The program; empty: `apptainer`, else `singularity`, the first in PATH that answers
  // `version`.
  std::string program;
  std::vector<std::string> binds;           // "host_dir:container_dir" read-write
  std::vector<std::string> readonly_binds;  // host paths bound read-only at the same path
  std::string initial_cwd;                  // inside; empty: the instance's default
  std::string overlay;    // a directory kept between sessions; empty: --writable-tmpfs
  std::string cache_dir;  // SIFs built from docker://; empty: $APPTAINER_CACHEDIR, else
                          // $TALARIA_HOME/apptainer
  int64_t memory_mb = 0;  // --memory; 0: no limit
  double cpus = 0;        // --cpus; 0: no limit
};
// Errors: NotFound (neither program, or initial_cwd missing), Unavailable (the instance does not
// start or runs no bash; the message carries the program's output).
Result<std::shared_ptr<Environment>> OpenApptainer(ApptainerOptions options);

}  // namespace talaria::env
