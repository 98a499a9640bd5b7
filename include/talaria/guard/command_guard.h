// The command guard: decides whether a shell command line may run as is (allow), needs a
// human's approval (approve, the "dangerous" tier) or must never run (block, the "hardline"
// tier, not even in yolo mode).
//
// The command is parsed (not grepped) into simple commands — also those inside subshells,
// groups, control structures, $( ), backticks and process substitutions — and each one is
// judged on its own after peeling wrappers (sudo, env, nice, timeout, xargs, busybox, ...).
// Code handed to another program is judged too: `bash -c STRING`, eval, heredocs fed to a
// shell, find -exec, git -c core.pager=..., sed's e command, the strings inline interpreter
// code (python -c, perl -e, node -e, ...) passes to os.system/subprocess/system/exec, and so
// on. A recursive delete is judged at every directory an earlier `cd` may have moved to, and
// with unset variables expanded empty (`rm -rf "$DIR"/` is `rm -rf /` when DIR is unset).
// Quoted arguments of harmless commands are data: `echo "rm -rf /"` is allowed. Input that does not
// parse is dangerous; input past the parser's limits, and raw control characters, are hardline
// (fail closed).
//
// Reasons carry a stable `rule` id and a stable `description`; both are fit to key approvals
// ("allow this rule for the session").
// Thread-safety: JudgeCommand is thread-safe (no mutable state; patterns compiled once).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace talaria::safety {

enum class GuardTier : unsigned char { kNone = 0, kDangerous = 1, kHardline = 2 };
enum class GuardDecision : unsigned char { kAllow = 0, kApprove = 1, kBlock = 2 };

struct GuardReason {
  std::string rule;         // stable id, e.g. "recursive_delete_root"
  std::string description;  // stable human text, e.g. "recursive delete of the root directory"
  std::string segment;      // the simple command (or payload) that triggered it
  GuardTier tier = GuardTier::kDangerous;
};

struct GuardVerdict {
  GuardDecision decision = GuardDecision::kAllow;
  GuardTier tier = GuardTier::kNone;  // the highest tier among the reasons
  std::vector<GuardReason> reasons;   // one per (rule, segment); empty when allowed
};

struct GuardOptions {
  // The user's home directory (absolute), so "/home/u/.ssh" is judged like "~/.ssh". Taken
  // from here, never from the environment of the judging process. Empty: only ~ and $HOME
  // spellings are recognised.
  std::string home;
  // $TALARIA_HOME (absolute; typically <home>/.talaria). The whole directory is talaria's own
  // state (config, approvals, trust, audit, memories, sessions, plugins): any command that
  // writes, truncates, moves, deletes, links over or changes the mode of anything in it is
  // hardline, so an agent can never approve or trust itself. Reading it is not judged here.
  // Empty: <home>/.talaria.
  std::string talaria_home;
  // The directory the command will start in (absolute), so relative paths are judged where
  // they land (`echo x > approvals.json` run inside $TALARIA_HOME, `ln /etc/shadow .`).
  // Empty: unknown; relative paths are then judged only against `cd` targets in the line.
  std::string working_directory;
};

// Judges one command line (what a `terminal` call would hand to bash -c). Never throws.
GuardVerdict JudgeCommand(std::string_view command, const GuardOptions& options);

// The program (basename) a simple command runs once the wrappers the guard peels are taken
// off: "diff" for {"sudo", "/usr/bin/diff", "a", "b"}, "curl" for {"timeout", "5s", "curl",
// "x"}. Empty when nothing would run (`command -v x`, `sudo -l`) or the wrapper runs a command
// string (`su -c ...`). Words are taken as literal text. Thread-safe.
std::string PeeledProgramName(const std::vector<std::string>& argv);

// "allow" | "approve" | "block" and "none" | "dangerous" | "hardline".
std::string_view GuardDecisionName(GuardDecision decision);
std::string_view GuardTierName(GuardTier tier);

}  // namespace talaria::safety
