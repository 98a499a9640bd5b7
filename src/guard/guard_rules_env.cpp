// Variables that make programs load or run code: BASH_ENV/ENV (sourced by every shell),
// LD_PRELOAD/LD_LIBRARY_PATH/LD_AUDIT (loaded into every program), PROMPT_COMMAND and prompt
// strings with substitutions (PS1/PS4 expand under `set -x` or at every prompt), the programs
// git takes from the environment (GIT_SSH_COMMAND, GIT_EXTERNAL_DIFF, GIT_PAGER, GIT_EDITOR,
// GIT_CONFIG_*), pagers and editors other tools run (PAGER, EDITOR, VISUAL, LESSOPEN), and
// interpreters' option variables (PERL5OPT, RUBYOPT, NODE_OPTIONS with --require).
// Each is judged wherever it is set: a prefix assignment, a bare assignment, export/declare,
// env NAME=VALUE. A command value is also judged as the command it is.
#include <array>
#include <string>

#include "guard/guard_internal.h"

namespace talaria::safety::guard {
namespace {

// Loaded or run whatever the value (a path to a library, a script, a program).
constexpr std::array<std::string_view, 20> kAlwaysCode = {
    "BASH_ENV",          "ENV",
    "LD_PRELOAD",        "LD_LIBRARY_PATH",
    "LD_AUDIT",          "PROMPT_COMMAND",
    "GIT_SSH_COMMAND",   "GIT_SSH",
    "GIT_EXTERNAL_DIFF", "GIT_ASKPASS",
    "SSH_ASKPASS",       "SUDO_ASKPASS",
    "GIT_PROXY_COMMAND", "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
    "GIT_EXEC_PATH",     "GIT_TEMPLATE_DIR",
    "LESSOPEN",          "LESSCLOSE"};

// A program another tool runs; harmless when it is a plain pager or editor.
constexpr std::array<std::string_view, 12> kProgramVars = {
    "PAGER",    "GIT_PAGER",     "EDITOR",     "VISUAL",  "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
    "MANPAGER", "SYSTEMD_PAGER", "SVN_EDITOR", "BROWSER", "DIFFPROG",   "MERGE"};

constexpr std::array<std::string_view, 18> kPlainPrograms = {
    "cat",  "less", "more",  "most", "bat",  "batcat", "delta", "vim",           "vi",
    "nvim", "nano", "emacs", "code", "true", ":",      "micro", "diff-so-fancy", "ed"};

bool IsPlainProgram(std::string_view value) {
  // One program among kPlainPrograms, with options only: "less -R", "code --wait".
  size_t start = 0;
  bool first = true;
  while (start < value.size()) {
    size_t end = value.find(' ', start);
    if (end == std::string_view::npos) end = value.size();
    const std::string_view w = value.substr(start, end - start);
    if (!w.empty()) {
      if (first) {
        if (!OneOf(Basename(w), kPlainPrograms) || w.find('$') != std::string_view::npos) {
          return false;
        }
        first = false;
      } else if (!IsOption(w) || w.find_first_of("$`;|&<>") != std::string_view::npos) {
        return false;
      }
    }
    start = end + 1;
  }
  return true;
}

void Inject(Judge& judge) {
  judge.Add("env_code_injection",
            "variable that makes programs load or run code (BASH_ENV, LD_PRELOAD, "
            "GIT_SSH_COMMAND, PAGER, ...)",
            GuardTier::kDangerous);
}

}  // namespace

void JudgeEnvAssignment(Judge& judge, std::string_view assignment, int depth) {
  const size_t eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) return;
  std::string_view name = assignment.substr(0, eq);
  if (name.ends_with('+')) name.remove_suffix(1);
  const std::string_view value = assignment.substr(eq + 1);
  if (depth > kMaxPayloadDepth) return;
  if (OneOf(name, kAlwaysCode) || name.starts_with("GIT_CONFIG_KEY_") ||
      name.starts_with("GIT_CONFIG_VALUE_") || name == "GIT_CONFIG_COUNT") {
    if (value.empty() && name != "GIT_CONFIG_COUNT") return;  // unsetting by emptying
    Inject(judge);
    if (name == "GIT_SSH_COMMAND" || name == "PROMPT_COMMAND" || name == "GIT_EXTERNAL_DIFF" ||
        name == "LESSOPEN" || name == "LESSCLOSE" || name.ends_with("ASKPASS") ||
        name == "GIT_PROXY_COMMAND" || name.starts_with("GIT_CONFIG_VALUE_")) {
      std::string_view code = value;
      if (code.starts_with('|')) code.remove_prefix(1);  // LESSOPEN='|cmd %s'
      judge.JudgeScript(code, depth + 1);
    }
  } else if (OneOf(name, kProgramVars)) {
    if (!value.empty() && !IsPlainProgram(value)) {
      Inject(judge);
      judge.JudgeScript(value, depth + 1);
    }
  } else if (name == "PS0" || name == "PS1" || name == "PS2" || name == "PS3" || name == "PS4") {
    // Prompt strings undergo command substitution when shown (PS4 under set -x).
    if (value.find("$(") != std::string_view::npos || value.find('`') != std::string_view::npos) {
      Inject(judge);
      judge.JudgeScript(": " + std::string(value), depth + 1);
    }
  } else if (name == "PERL5OPT" || name == "RUBYOPT" || name == "NODE_OPTIONS" ||
             name == "PYTHONSTARTUP" || name == "PYTHONINSPECT" || name == "JAVA_TOOL_OPTIONS" ||
             name == "_JAVA_OPTIONS" || name == "MAKEFLAGS" || name == "GNUMAKEFLAGS") {
    auto has = [&](std::string_view x) { return value.find(x) != std::string_view::npos; };
    const bool make = name == "MAKEFLAGS" || name == "GNUMAKEFLAGS";
    const bool loads = make ? (has("--eval") || has("SHELL=") || has("-E"))
                       : name == "NODE_OPTIONS"
                           ? (has("-r") || has("--require") || has("--import") || has("--loader") ||
                              has("--eval") || has("-e "))
                       : name.ends_with("JAVA_OPTIONS") || name == "JAVA_TOOL_OPTIONS"
                           ? (has("-javaagent") || has("-agentpath") || has("-agentlib"))
                           : true;  // PERL5OPT, RUBYOPT, PYTHONSTARTUP: any value loads code
    if (loads && !value.empty()) Inject(judge);
  }
}

}  // namespace talaria::safety::guard
