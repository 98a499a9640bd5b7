// The bubblewrap sandbox: local commands behind `bwrap`, with the host read-only, talaria's
// state and the user's credential stores hidden, a private size-limited /tmp, and a PID
// namespace of its own (talaria's process, its /proc/<pid>/environ and mem, are not there).
#include <sys/stat.h>

#include <array>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "env/child_environment.h"
#include "talaria/env/bwrap.h"

namespace talaria::env {
namespace {

// Beneath the home directory: where tools keep keys, tokens and passwords.
constexpr std::array<std::string_view, 20> kCredentialStores = {".ssh",
                                                                ".aws",
                                                                ".gnupg",
                                                                ".kube",
                                                                ".docker",
                                                                ".azure",
                                                                ".config/gh",
                                                                ".config/gcloud",
                                                                ".password-store",
                                                                ".netrc",
                                                                ".git-credentials",
                                                                ".pgpass",
                                                                ".npmrc",
                                                                ".pypirc",
                                                                ".my.cnf",
                                                                ".local/share/keyrings",
                                                                ".config/hub",
                                                                ".terraform.d",
                                                                ".vault-token",
                                                                ".cargo/credentials.toml"};

// bwrap's mount options for the sandbox; the shell-state directory and the writable
// directories are bound read-write on top of the read-only host.
std::vector<std::string> BwrapPrefix(const SandboxOptions& options, const std::string& state_dir,
                                     const std::string& cwd, bool pty) {
  BwrapLayout layout;
  layout.bwrap = options.bwrap;
  layout.host = BwrapLayout::HostView::kWholeHost;
  layout.network = options.network;
  layout.writable.push_back(state_dir);
  layout.writable.insert(layout.writable.end(), options.writable.begin(), options.writable.end());
  // With a pty the command's own terminal must stay its controlling one.
  layout.new_session = !pty;
  layout.chdir = cwd;
  layout.hidden = CredentialStores(options.home, options.talaria_home);
  if (!options.user_home.empty() && options.user_home != options.home) {
    for (std::string& path : CredentialStores(options.user_home, ""))
      layout.hidden.push_back(std::move(path));
  }
  layout.tmp_size_bytes = options.tmp_size_bytes;
  return BwrapArgv(layout);
}

}  // namespace

std::vector<std::string> CredentialStores(const std::string& home,
                                          const std::string& talaria_home) {
  std::vector<std::string> out;
  // A store that is a symlink (dotfile managers) is hidden at its real path: the host is
  // readable under every name, and the link then leads to the cover (bwrap cannot mount on the
  // link itself: inside the new root it resolves to nothing).
  auto add_if_present = [&out](const std::string& path) {
    struct stat st {};
    if (path.empty() || path.front() != '/' || ::lstat(path.c_str(), &st) != 0) return;
    if (!S_ISLNK(st.st_mode)) {
      out.push_back(path);
      return;
    }
    if (char* real = ::realpath(path.c_str(), nullptr)) {
      out.emplace_back(real);
      ::free(real);
    }
  };
  if (!home.empty()) {
    for (std::string_view store : kCredentialStores)
      add_if_present(home + "/" + std::string(store));
  }
  add_if_present(talaria_home);
  return out;
}

Result<std::shared_ptr<Environment>> OpenSandbox(SandboxOptions options) {
  for (const std::string& dir : options.writable) {
    struct stat st {};
    if (dir.empty() || dir.front() != '/' || ::stat(dir.c_str(), &st) != 0 ||
        !S_ISDIR(st.st_mode)) {
      return Err(InvalidArgumentError("sandbox: writable directory '" + dir +
                                      "' is not an existing absolute directory"));
    }
  }
  // bwrap must exist and be able to make namespaces here; find out now, not at the first command.
  if (!options.bwrap_probed) TALARIA_RETURN_IF_ERROR(ProbeBwrap(options.bwrap));
  LocalOptions local = options.local;
  return OpenChildEnvironment(
      "bwrap", std::move(local), [options = std::move(options)](const std::string& state_dir) {
        return ArgvWrapper([options, state_dir](std::vector<std::string> bash_argv,
                                                const std::string& cwd, bool pty) {
          std::vector<std::string> argv = BwrapPrefix(options, state_dir, cwd, pty);
          argv.insert(argv.end(), std::make_move_iterator(bash_argv.begin()),
                      std::make_move_iterator(bash_argv.end()));
          return argv;
        });
      });
}

}  // namespace talaria::env
