// The bubblewrap sandbox: local commands behind `bwrap`, with the host read-only.
#include <sys/stat.h>

#include <string>
#include <vector>

#include "env/child_environment.h"
#include "talaria/base/subprocess.h"

namespace talaria::env {
namespace {

// bwrap's mount options for the sandbox; the shell-state directory and the writable
// directories are bound read-write on top of the read-only host.
std::vector<std::string> BwrapPrefix(const SandboxOptions& options, const std::string& state_dir, bool pty) {
  std::vector<std::string> argv = {options.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                                   "--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--unshare-all"};
  if (options.network) argv.push_back("--share-net");
  argv.insert(argv.end(), {"--die-with-parent", "--bind", state_dir, state_dir});
  for (const std::string& dir : options.writable) argv.insert(argv.end(), {"--bind", dir, dir});
  // A new session keeps a sandboxed command from injecting input into our terminal (TIOCSTI);
  // with a pty the command's own terminal must stay its controlling one.
  if (!pty) argv.push_back("--new-session");
  return argv;
}

}  // namespace

Result<std::shared_ptr<Environment>> OpenSandbox(SandboxOptions options) {
  for (const std::string& dir : options.writable) {
    struct stat st {};
    if (dir.empty() || dir.front() != '/' || ::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Err(InvalidArgumentError("sandbox: writable directory '" + dir + "' is not an existing absolute directory"));
    }
  }
  // bwrap must exist and be able to make namespaces here; find out now, not at the first command.
  SpawnOptions probe;
  probe.argv = {options.bwrap, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "--", "/bin/true"};
  probe.timeout = std::chrono::seconds(10);
  auto probed = RunProcess(probe);
  if (!probed) {
    if (probed.error().code() == StatusCode::kNotFound) {
      return Err(NotFoundError("sandbox: '" + options.bwrap + "' not found (apt-get install bubblewrap)"));
    }
    return Err(probed.error());
  }
  if (probed->exit_code != 0) {
    return Err(FailedPreconditionError("sandbox: bwrap cannot create namespaces here: " + probed->stderr_text));
  }
  LocalOptions local = options.local;
  return OpenChildEnvironment("bwrap", std::move(local), [options = std::move(options)](const std::string& state_dir) {
    return ArgvWrapper([options, state_dir](std::vector<std::string> bash_argv, const std::string& cwd, bool pty) {
      std::vector<std::string> argv = BwrapPrefix(options, state_dir, pty);
      argv.insert(argv.end(), {"--chdir", cwd, "--"});
      argv.insert(argv.end(), std::make_move_iterator(bash_argv.begin()), std::make_move_iterator(bash_argv.end()));
      return argv;
    });
  });
}

}  // namespace talaria::env
