#include "env/shell_session.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <unordered_map>

#include "talaria/base/file_io.h"

namespace talaria::env {
namespace {

// $1 state directory, $2 "1" to save state on exit, $3 the command, $4 the saved exports to
// source first (empty: none), $5 "1" to write the shell's pid to $1/pid when saving, $6 "1"
// when the shell starts in a one-off directory (a command's workdir): the session's cwd is then
// saved only when the command moved away from it (a `cd` of its own), so a workdir does not
// become the session's directory (the original's bug, hermes-agent#73683). PWD,
// OLDPWD and SHLVL are not saved: they describe the shell that ran, not the session. Only
// builtins run around the command (no mv for an atomic rename: two extra processes per command
// would triple its cost); a command killed while its state is written leaves a partial file,
// whose errors the next source ignores, and a cwd that is not a directory is not adopted. The
// pid file lets an environment whose client cannot signal the command directly (docker exec)
// end it; the others know the pid and skip it. The save shares one stderr redirection: bash
// pays an open and half a dozen descriptor calls for each.
constexpr std::string_view kWrapper =
    R"sh(__talaria_dir=$1; __talaria_save=$2; __talaria_cmd=$3; __talaria_src=$4; __talaria_pid=$5; __talaria_once=$6; __talaria_here=$PWD; set --
if [ -n "$__talaria_src" ] && [ -r "$__talaria_src" ]; then . "$__talaria_src" >/dev/null 2>&1; fi
__talaria_on_exit() {
  __talaria_status=$?
  { export -n PWD OLDPWD SHLVL _; export -p > "$__talaria_dir/env"
    if [ "$__talaria_once" != 1 ] || ! [ . -ef "$__talaria_here" ]; then pwd -P > "$__talaria_dir/cwd"; fi; } 2>/dev/null
  exit $__talaria_status
}
if [ "$__talaria_save" = 1 ]; then
  trap __talaria_on_exit EXIT
  if [ "$__talaria_pid" = 1 ]; then echo $$ > "$__talaria_dir/pid"; fi
fi
eval "$__talaria_cmd"
)sh";

enum class PidFile : unsigned char { kSkip, kWrite };

std::vector<std::string> WrapperArgv(std::string bash, std::string state_dir,
                                     std::string_view command, bool persist, std::string source,
                                     PidFile pid_file, StartDir start_dir) {
  return {std::move(bash),
          "--noprofile",
          "--norc",
          "-c",
          std::string(kWrapper),
          "talaria",
          std::move(state_dir),
          persist ? "1" : "0",
          std::string(command),
          std::move(source),
          pid_file == PidFile::kWrite ? "1" : "0",
          start_dir == StartDir::kOneOff ? "1" : "0"};
}

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

std::optional<std::string> ExportsNotInherited(std::string_view saved,
                                               const std::vector<std::string>& base_env) {
  // A name given twice in the base environment is not trusted to be inherited as either value.
  std::unordered_map<std::string_view, std::optional<std::string_view>> base;
  for (const std::string& entry : base_env) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string_view e(entry);
    auto [it, inserted] = base.try_emplace(e.substr(0, eq), e.substr(eq + 1));
    if (!inserted) it->second = std::nullopt;
  }
  const auto is_name_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  constexpr std::string_view kDeclare = "declare -";
  std::string out;
  size_t i = 0;
  const size_t n = saved.size();
  while (i < n) {
    const size_t start = i;
    if (saved.substr(i, kDeclare.size()) != kDeclare) return std::nullopt;
    i += kDeclare.size();
    const size_t flags_at = i;
    while (i < n && ((saved[i] >= 'a' && saved[i] <= 'z') || (saved[i] >= 'A' && saved[i] <= 'Z')))
      ++i;
    const std::string_view flags = saved.substr(flags_at, i - flags_at);
    if (flags.empty() || i >= n || saved[i] != ' ') return std::nullopt;
    const size_t name_at = ++i;
    while (i < n && is_name_char(saved[i])) ++i;
    const std::string_view name = saved.substr(name_at, i - name_at);
    if (name.empty() || (name[0] >= '0' && name[0] <= '9') || i >= n) return std::nullopt;
    // The value as bash will read it back; nullopt when it is not plain text in double quotes
    // (none at all, $'...', or an expansion bash would perform).
    std::optional<std::string> value;
    if (saved[i] == '=') {
      ++i;
      if (saved.substr(i, 1) == "\"") {
        // bash's sh_double_quote: \ escapes " \ $ and `; every other byte stands for itself.
        value.emplace();
        for (++i;; ++i) {
          if (i >= n) return std::nullopt;
          const char c = saved[i];
          if (c == '"') break;
          if (c == '\\') {
            if (++i >= n) return std::nullopt;
            if (std::string_view("\"\\$`").find(saved[i]) == std::string_view::npos) value.reset();
            if (value) *value += saved[i];
            continue;
          }
          if (c == '$' || c == '`') value.reset();
          if (value) *value += c;
        }
        ++i;
      } else if (saved.substr(i, 2) == "$'") {
        // ANSI-C quoting (control or non-ASCII bytes): kept as is, its extent is all we need.
        for (i += 2;; ++i) {
          if (i >= n) return std::nullopt;
          if (saved[i] == '\\') {
            ++i;
          } else if (saved[i] == '\'') {
            break;
          }
        }
        ++i;
      } else {
        return std::nullopt;  // an array, or something bash's export -p does not print
      }
    }
    if (i >= n || saved[i] != '\n') return std::nullopt;
    ++i;
    bool inherited = false;
    if (flags == "x" && value) {
      auto it = base.find(name);
      inherited = it != base.end() && it->second && *it->second == *value;
    }
    if (!inherited) out.append(saved.substr(start, i - start));
  }
  return out;
}

Result<std::unique_ptr<ShellSession>> ShellSession::Create(std::string state_dir,
                                                           std::string initial_cwd,
                                                           std::vector<std::string> base_env) {
  if (initial_cwd.empty()) {
    char buf[4096];
    if (::getcwd(buf, sizeof buf) == nullptr) return Err(InternalError("getcwd failed"));
    initial_cwd = buf;
  }
  if (!IsDirectory(initial_cwd))
    return Err(NotFoundError("working directory '" + initial_cwd + "' does not exist"));
  bool owned = false;
  if (state_dir.empty()) {
    std::string tmpl = StateParent() + "/talaria-shell-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr)
      return Err(InternalError("cannot create a shell state directory"));
    state_dir = tmpl;
    owned = true;
  } else {
    std::error_code ec;
    std::filesystem::create_directories(state_dir, ec);
    if (ec || ::chmod(state_dir.c_str(), 0700) != 0) {
      return Err(InternalError("cannot create the shell state directory " + state_dir));
    }
  }
  return std::unique_ptr<ShellSession>(
      new ShellSession(std::move(state_dir), owned, std::move(initial_cwd), std::move(base_env)));
}

ShellSession::ShellSession(std::string state_dir, bool owned, std::string cwd,
                           std::vector<std::string> base_env)
    : state_dir_(std::move(state_dir)),
      owned_(owned),
      bash_(FindBash()),
      base_env_(std::move(base_env)),
      cwd_(std::move(cwd)),
      // A fresh directory holds no state yet; one handed in may hold an earlier session's.
      source_file_(owned_ ? std::string() : state_dir_ + "/env") {}

ShellSession::~ShellSession() {
  if (!owned_) return;
  std::error_code ec;
  std::filesystem::remove_all(state_dir_, ec);
}

std::vector<std::string> ShellSession::Argv(std::string_view command, bool persist,
                                            StartDir start_dir) const {
  std::string source;
  {
    std::lock_guard lock(mu_);
    source = source_file_;
  }
  return WrapperArgv(bash_, state_dir_, command, persist, std::move(source), PidFile::kSkip,
                     start_dir);
}

std::vector<std::string> ShellSession::ArgvFor(std::string bash, std::string state_dir,
                                               std::string_view command, bool persist,
                                               StartDir start_dir) {
  std::string source = state_dir + "/env";
  return WrapperArgv(std::move(bash), std::move(state_dir), command, persist, std::move(source),
                     PidFile::kWrite, start_dir);
}

void ShellSession::AdoptSavedState() {
  std::string dir;
  if (auto text = ReadWholeFile(state_dir_ + "/cwd")) dir = text->substr(0, text->find('\n'));
  const bool adopt_cwd = !dir.empty() && IsDirectory(dir);

  // Sourcing every saved export costs bash about a fifth of its whole run (each assignment,
  // and LANG's reloading the locale): only what the base environment does not already give
  // the next shell is sourced, usually nothing.
  std::lock_guard save(save_mu_);
  std::string source = state_dir_ + "/env";
  auto saved = ReadWholeFile(source);
  if (!saved) {
    // Nothing saved (the command was killed first): the previous state stands.
    std::lock_guard lock(mu_);
    if (adopt_cwd) cwd_ = std::move(dir);
    return;
  }
  std::optional<std::string> delta;
  if (!base_env_.empty()) delta = ExportsNotInherited(*saved, base_env_);
  if (delta && delta->empty()) {
    source.clear();
  } else if (delta) {
    // Renamed into place: a background command may be sourcing the previous one.
    const std::string delta_file = state_dir_ + "/env.delta";
    if (*delta == written_delta_ ||
        WriteFileAtomic(delta_file, *delta, {.mode = 0600, .sync = false}).ok()) {
      source = delta_file;
      written_delta_ = std::move(*delta);
    }
  }
  std::lock_guard lock(mu_);
  if (adopt_cwd) cwd_ = std::move(dir);
  source_file_ = std::move(source);
}

std::string ShellSession::cwd() const {
  std::lock_guard lock(mu_);
  return cwd_;
}

}  // namespace talaria::env
