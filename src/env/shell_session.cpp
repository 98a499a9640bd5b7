#include "env/shell_session.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

namespace talaria::env {
namespace {

// $1 state directory, $2 "1" to save state on exit, $3 the command. PWD, OLDPWD and SHLVL are
// not saved: they describe the shell that ran, not the session. Only builtins run around the
// command (no mv for an atomic rename: two extra processes per command would triple its cost);
// a command killed while its state is written leaves a partial file, whose errors the next
// source ignores, and a cwd that is not a directory is not adopted. The pid file lets an
// environment whose client cannot signal the command directly (docker exec) end it.
constexpr std::string_view kWrapper = R"sh(__talaria_dir=$1; __talaria_save=$2; __talaria_cmd=$3; set --
if [ -r "$__talaria_dir/env" ]; then . "$__talaria_dir/env" >/dev/null 2>&1; fi
__talaria_on_exit() {
  __talaria_status=$?
  export -n PWD OLDPWD SHLVL _ 2>/dev/null
  export -p > "$__talaria_dir/env" 2>/dev/null
  pwd -P > "$__talaria_dir/cwd" 2>/dev/null
  exit $__talaria_status
}
if [ "$__talaria_save" = 1 ]; then trap __talaria_on_exit EXIT; echo $$ > "$__talaria_dir/pid"; fi
eval "$__talaria_cmd"
)sh";

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Where a session's state directory goes: shared memory when there is some. Each command
// rewrites its state files, and on ext4 rewriting a truncated file forces its data out on close
// (auto_da_alloc): ~0.7 ms per file per command, more than bash's own startup costs. On tmpfs
// the writes stay in memory — where exported secrets belong anyway.
std::string StateParent() {
  if (IsDirectory("/dev/shm") && ::access("/dev/shm", W_OK | X_OK) == 0) return "/dev/shm";
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

std::string FindBash() {
  for (const char* candidate : {"/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"}) {
    if (::access(candidate, X_OK) == 0) return candidate;
  }
  return "bash";  // posix_spawnp searches PATH
}

}  // namespace

Result<std::unique_ptr<ShellSession>> ShellSession::Create(std::string state_dir, std::string initial_cwd) {
  if (initial_cwd.empty()) {
    char buf[4096];
    if (::getcwd(buf, sizeof buf) == nullptr) return Err(InternalError("getcwd failed"));
    initial_cwd = buf;
  }
  if (!IsDirectory(initial_cwd)) return Err(NotFoundError("working directory '" + initial_cwd + "' does not exist"));
  bool owned = false;
  if (state_dir.empty()) {
    std::string tmpl = StateParent() + "/talaria-shell-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) return Err(InternalError("cannot create a shell state directory"));
    state_dir = tmpl;
    owned = true;
  } else {
    std::error_code ec;
    std::filesystem::create_directories(state_dir, ec);
    if (ec || ::chmod(state_dir.c_str(), 0700) != 0) {
      return Err(InternalError("cannot create the shell state directory " + state_dir));
    }
  }
  return std::unique_ptr<ShellSession>(new ShellSession(std::move(state_dir), owned, std::move(initial_cwd)));
}

ShellSession::ShellSession(std::string state_dir, bool owned, std::string cwd)
    : state_dir_(std::move(state_dir)), owned_(owned), bash_(FindBash()), cwd_(std::move(cwd)) {}

ShellSession::~ShellSession() {
  if (!owned_) return;
  std::error_code ec;
  std::filesystem::remove_all(state_dir_, ec);
}

std::vector<std::string> ShellSession::Argv(std::string_view command, bool persist) const {
  return ArgvFor(bash_, state_dir_, command, persist);
}

std::vector<std::string> ShellSession::ArgvFor(std::string bash, std::string state_dir, std::string_view command,
                                               bool persist) {
  return {std::move(bash), "--noprofile", "--norc", "-c", std::string(kWrapper), "talaria", std::move(state_dir),
          persist ? "1" : "0", std::string(command)};
}

void ShellSession::AdoptSavedCwd() {
  std::ifstream in(state_dir_ + "/cwd");
  std::string dir;
  if (!std::getline(in, dir) || dir.empty() || !IsDirectory(dir)) return;
  std::lock_guard lock(mu_);
  cwd_ = std::move(dir);
}

std::string ShellSession::cwd() const {
  std::lock_guard lock(mu_);
  return cwd_;
}

}  // namespace talaria::env
