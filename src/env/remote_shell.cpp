// RemoteShellCommandLine and friends: the session wrapper of shell_session.cpp (the same
// script every other environment runs, with its state directory on the far side) inside a
// small outer script that a sandbox service runs as one command. Only builtins run around the
// command, as in the wrapper: each extra process would be paid on every exec.
#include "talaria/env/remote_shell.h"

#include "env/shell_session.h"
#include "talaria/base/shell_words.h"

namespace talaria::env {
namespace {

// Sets __talaria_d to `cwd` or its nearest existing ancestor and enters it.
std::string EnterNearest(std::string_view cwd) {
  std::string s = cwd.empty() ? std::string("__talaria_d=$HOME") : "__talaria_d=" + ShellQuote(cwd);
  s += "\nwhile [ ! -d \"$__talaria_d\" ] && [ \"$__talaria_d\" != / ]; do "
       "__talaria_d=${__talaria_d%/*}; [ -n \"$__talaria_d\" ] || __talaria_d=/; done\n"
       "cd -- \"$__talaria_d\" 2>/dev/null\n";
  return s;
}

}  // namespace

std::string RemoteShellCommandLine(std::string_view state_dir, std::string_view cwd,
                                   std::string_view marker, std::string_view token,
                                   std::string_view command, bool persist, StartDir start_dir) {
  const std::string state = ShellQuote(state_dir);
  std::string s = EnterNearest(cwd);
  s += "echo " + ShellQuote(token) + " $$ > " + state + "/exec.pid 2>/dev/null\n";
  s +=
      ShellJoin(ShellSession::ArgvFor("bash", std::string(state_dir), command, persist, start_dir));
  s += "\n__talaria_s=$?\n__talaria_c=\n";
  if (persist) s += "{ read -r __talaria_c < " + state + "/cwd; } 2>/dev/null\n";
  s += "printf '\\n%s%s' " + ShellQuote(marker) + " \"$__talaria_c\"\nexit $__talaria_s\n";
  return s;
}

std::string RemoteShellBackgroundCommandLine(std::string_view state_dir, std::string_view cwd,
                                             std::string_view command) {
  std::string s = EnterNearest(cwd);
  s += "exec " + ShellJoin(ShellSession::ArgvFor("bash", std::string(state_dir), command, false));
  return s + "\n";
}

std::string KillRemoteShellCommandLine(std::string_view state_dir, std::string_view token) {
  // The group of the command's outer shell: every process it started that did not leave it.
  // When the service runs every exec in one group (its own), only the shell is killed.
  const std::string state = ShellQuote(state_dir);
  std::string s = "__n=0\nwhile [ $__n -lt 50 ]; do\n";
  s += "  if read -r __t __p < " + state +
       "/exec.pid 2>/dev/null && [ \"$__t\" = " + ShellQuote(token) + " ]; then\n";
  s += "    if read -r _ _ _ _ __g _ < /proc/$__p/stat 2>/dev/null; then\n"
       "      read -r _ _ _ _ __m _ < /proc/$$/stat\n"
       "      if [ \"$__g\" != \"$__m\" ] && [ \"$__g\" -gt 1 ]; then kill -KILL -- -$__g; "
       "else kill -KILL $__p; fi 2>/dev/null\n"
       "    fi\n    exit 0\n  fi\n  __n=$((__n + 1)); sleep 0.1\ndone\n";
  return s;
}

std::string PrepareRemoteShellCommandLine(std::string_view state_dir, std::string_view cwd) {
  const std::string state = ShellQuote(state_dir);
  // One process: every exec'd program is paid on each session's start.
  std::string s = "mkdir -p -m 700 " + state + " || exit 1\n";
  s += EnterNearest(cwd);
  s += "pwd -P\n";
  return s;
}

RemoteShellReport SplitRemoteShellOutput(std::string output, std::string_view marker) {
  RemoteShellReport r;
  std::string needle = "\n";
  needle += marker;
  const size_t at = output.rfind(needle);
  if (at == std::string::npos) {
    r.output = std::move(output);
    return r;
  }
  r.found = true;
  r.cwd = output.substr(at + needle.size());
  while (!r.cwd.empty() && (r.cwd.back() == '\n' || r.cwd.back() == '\r')) r.cwd.pop_back();
  output.resize(at);
  r.output = std::move(output);
  return r;
}

}  // namespace talaria::env
