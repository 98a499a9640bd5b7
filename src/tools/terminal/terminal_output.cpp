#include "tools/terminal/terminal_output.h"

#include <array>
#include <string>
#include <vector>

#include "talaria/base/redact.h"
#include "talaria/guard/command_guard.h"
#include "talaria/guard/shell_parser.h"

namespace talaria::tools {
namespace {

// The program of the last simple command the line runs at top level (not inside $( ) or
// <( )), as the command guard's shell parser sees it: quotes, ; && || | & and newlines,
// subshells and compound commands all understood; assignments and wrappers (sudo, env, time,
// timeout 5s, nice, ...) peeled by the guard. Empty when the line does not parse.
std::string LastProgram(std::string_view command) {
  auto parsed = safety::ParseShell(command);
  if (!parsed) return {};
  const std::vector<safety::SimpleCommand>& commands = parsed->commands;
  for (auto it = commands.rbegin(); it != commands.rend(); ++it) {
    if (it->origin != safety::CommandOrigin::kTop || it->argv.empty()) continue;
    std::vector<std::string> argv;
    argv.reserve(it->argv.size());
    for (const safety::ShellWord& w : it->argv) argv.push_back(w.text);
    return std::string(safety::PeeledProgramName(argv));
  }
  return {};
}

struct Meaning {
  std::string_view program;  // empty: any program
  int code;
  std::string_view text;
};

constexpr std::array<Meaning, 23> kMeanings = {{
    {"grep", 1, "No matches found (not an error)"},
    {"egrep", 1, "No matches found (not an error)"},
    {"fgrep", 1, "No matches found (not an error)"},
    {"rg", 1, "No matches found (not an error)"},
    {"ag", 1, "No matches found (not an error)"},
    {"diff", 1, "Files differ (not an error)"},
    {"cmp", 1, "Files differ (not an error)"},
    {"test", 1, "Condition is false (not an error)"},
    {"[", 1, "Condition is false (not an error)"},
    {"[[", 1, "Condition is false (not an error)"},
    {"find", 1, "Some paths could not be read (results may be partial)"},
    {"curl", 6, "Could not resolve host"},
    {"curl", 7, "Failed to connect to host"},
    {"curl", 22, "HTTP error status returned (--fail)"},
    {"curl", 28, "Operation timed out"},
    {"", 124, "Timed out"},
    {"", 126, "Command found but not executable (permissions?)"},
    {"", 127, "Command not found"},
    {"", 130, "Interrupted (SIGINT)"},
    {"", 137, "Killed (SIGKILL; often out of memory)"},
    {"", 139, "Segmentation fault (SIGSEGV)"},
    {"", 141, "Broken pipe (SIGPIPE; usually harmless after head/grep -q)"},
    {"", 143, "Terminated (SIGTERM)"},
}};

}  // namespace

std::string StripAnsi(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == 0x1B) {
      if (i + 1 >= text.size()) break;
      const char kind = text[i + 1];
      if (kind == '[') {  // CSI: parameters and intermediates, then one final byte @..~
        size_t j = i + 2;
        while (j < text.size() && static_cast<unsigned char>(text[j]) >= 0x20 &&
               static_cast<unsigned char>(text[j]) <= 0x3F)
          ++j;
        while (j < text.size() && static_cast<unsigned char>(text[j]) >= 0x20 &&
               static_cast<unsigned char>(text[j]) <= 0x2F)
          ++j;
        i = j;  // the final byte (or the end)
      } else if (kind == ']' || kind == 'P' || kind == '_' ||
                 kind == '^') {  // OSC/DCS: up to BEL or ESC '\'
        size_t j = i + 2;
        while (j < text.size() && text[j] != '\x07' &&
               !(text[j] == '\x1B' && j + 1 < text.size() && text[j + 1] == '\\'))
          ++j;
        i = j < text.size() && text[j] == '\x1B' ? j + 1 : j;
      } else {
        i += 1;  // two-byte escape such as ESC ( B or ESC =
        if ((kind == '(' || kind == ')') && i + 1 < text.size()) ++i;
      }
      continue;
    }
    if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') continue;
    if (c == 0x7F) continue;
    out += static_cast<char>(c);
  }
  return out;
}

std::string CleanOutput(std::string_view text) { return RedactSecrets(StripAnsi(text)); }

std::optional<std::string> ExitCodeMeaning(std::string_view command, int exit_code) {
  if (exit_code == 0) return std::nullopt;
  const std::string program = LastProgram(command);
  for (const Meaning& m : kMeanings) {
    if (m.code == exit_code && (m.program.empty() || m.program == program))
      return std::string(m.text);
  }
  return std::nullopt;
}

}  // namespace talaria::tools
