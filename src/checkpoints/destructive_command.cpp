// IsDestructiveCommand: the original's heuristic for "snapshot before this terminal command",
// judged on the parsed command (every simple command, also inside $( ), subshells and bodies;
// wrappers such as sudo, env, timeout and xargs peeled) rather than on the raw text.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "talaria/checkpoints/checkpoint_store.h"
#include "talaria/guard/command_guard.h"
#include "talaria/guard/shell_parser.h"

namespace talaria::checkpoints {
namespace {

constexpr std::array<std::string_view, 9> kFilePrograms = {
    "rm", "rmdir", "mv", "cp", "install", "truncate", "dd", "shred", "unlink"};
constexpr std::array<std::string_view, 7> kGitSubcommands = {
    "reset", "clean", "checkout", "restore", "stash", "rm", "mv"};

bool In(std::string_view word, auto const& list) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

std::string_view Basename(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// -i, -i.bak, -ni, --in-place[=SUFFIX] (sed); -i, -pi (perl).
bool HasInPlaceFlag(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(), [](const std::string& a) {
    if (a.starts_with("--")) return a == "--in-place" || a.starts_with("--in-place=");
    if (!a.starts_with("-") || a.size() < 2) return false;
    const size_t flags_end = std::min(a.find('.'), a.size());  // -i.bak: suffix after the dot
    return a.substr(1, flags_end - 1).find('i') != std::string::npos;
  });
}

// git's subcommand: the first word after git that is not an option (-C DIR, -c K=V take one).
std::string_view GitSubcommand(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "--namespace") {
      ++i;
      continue;
    }
    if (a.starts_with("-")) continue;
    return a;
  }
  return {};
}

bool OverwritesFile(const safety::Redirection& r) {
  using safety::RedirectOp;
  const bool overwrite = r.op == RedirectOp::kOut || r.op == RedirectOp::kClobber ||
                         r.op == RedirectOp::kOutErr || r.op == RedirectOp::kInOut ||
                         (r.op == RedirectOp::kDupOut && !r.IsFdTarget());
  if (!overwrite) return false;
  const std::string& target = r.target.text;
  return target != "/dev/null" && target != "/dev/stdout" && target != "/dev/stderr" &&
         target != "/dev/tty";
}

bool DestroysFiles(const safety::SimpleCommand& command) {
  if (std::any_of(command.redirections.begin(), command.redirections.end(), OverwritesFile)) {
    return true;
  }
  std::vector<std::string> argv;
  argv.reserve(command.argv.size());
  for (const safety::ShellWord& w : command.argv) argv.push_back(w.text);
  const std::string program = safety::PeeledProgramName(argv);
  if (program.empty()) return false;
  // The words after the program itself (the wrappers before it peeled off).
  auto self = std::find_if(argv.begin(), argv.end(),
                           [&program](const std::string& w) { return Basename(w) == program; });
  const std::vector<std::string> args(self == argv.end() ? argv.end() : self + 1, argv.end());
  if (In(program, kFilePrograms)) return true;
  if (program == "sed" || program == "perl") return HasInPlaceFlag(args);
  if (program == "git") return In(GitSubcommand(args), kGitSubcommands);
  if (program == "find") {
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i] == "-delete") return true;
      if ((args[i] == "-exec" || args[i] == "-execdir" || args[i] == "-ok") &&
          i + 1 < args.size() && In(Basename(args[i + 1]), kFilePrograms)) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

bool IsDestructiveCommand(std::string_view command) {
  auto parsed = safety::ParseShell(command);
  if (!parsed) return true;  // cannot tell: a snapshot costs little
  return std::any_of(parsed->commands.begin(), parsed->commands.end(), DestroysFiles);
}

}  // namespace talaria::checkpoints
