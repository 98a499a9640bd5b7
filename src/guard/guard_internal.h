// Private pieces of the command guard shared by command_guard.cpp and the guard_rules_*.cpp
// files: the Judge (collects reasons while walking parsed commands), the peeled command view,
// path resolution, and the per-command rule table.
// Thread-safety: a Judge is used by one thread for one JudgeCommand call.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "talaria/confinement/path_rules.h"
#include "talaria/guard/command_guard.h"
#include "talaria/guard/shell_parser.h"

namespace talaria::safety::guard {

using internal::OneOf;

// Bits of ProgramTraits: which rule families look at a program, and what kind it is.
inline constexpr uint32_t kTraitWrapper = 1u << 0;        // peeled by PeelWrappers
inline constexpr uint32_t kTraitDelete = 1u << 1;         // JudgeDeleteRules
inline constexpr uint32_t kTraitDisk = 1u << 2;           // JudgeDiskRules
inline constexpr uint32_t kTraitSystem = 1u << 3;         // JudgeSystemRules
inline constexpr uint32_t kTraitExec = 1u << 4;           // JudgeExecRules
inline constexpr uint32_t kTraitWrite = 1u << 5;          // JudgeWriteRules
inline constexpr uint32_t kTraitVcs = 1u << 6;            // JudgeVcsRules
inline constexpr uint32_t kTraitCarrier = 1u << 7;        // JudgeCarrierRules
inline constexpr uint32_t kTraitPrivilege = 1u << 8;      // JudgePrivilegeRules
inline constexpr uint32_t kTraitDeclaration = 1u << 9;    // export, local, declare, ...
inline constexpr uint32_t kTraitDirChange = 1u << 10;     // cd, pushd
inline constexpr uint32_t kTraitShell = 1u << 11;         // IsShell
inline constexpr uint32_t kTraitInterpreter = 1u << 12;   // IsInterpreter
inline constexpr uint32_t kTraitVersioned = 1u << 13;     // interpreter family: python3.11 too
inline constexpr uint32_t kTraitNetworkTool = 1u << 14;   // IsNetworkTool
inline constexpr uint32_t kTraitSink = 1u << 15;          // sends data off the machine
inline constexpr uint32_t kTraitSinkName = 1u << 16;      // nc/socat/awk: reverse-shell options
inline constexpr uint32_t kTraitServerModule = 1u << 17;  // http.server, SimpleHTTPServer
inline constexpr uint32_t kTraitSsh = 1u << 18;
// Runs a command string it is given (eval, su -c, tmux, at, ...; shells and interpreters
// too): what such a payload does with the data the carrier holds is judged there.
inline constexpr uint32_t kTraitPayload = 1u << 19;

// The traits of a program name (a basename): one table lookup plus the prefix families
// (mkfs.*, newfs*, pip3*, iptables*, python3.11). 0 for names no rule family looks at.
uint32_t ProgramTraits(std::string_view name);

// A command after wrapper peeling: its program name (basename) and its arguments.
struct CommandView {
  // "rm" for /bin/rm, \rm, 'r'm, sudo rm, ...: a view into name_word's text (or a static
  // string), stable while the command is judged.
  std::string_view name;
  uint32_t traits = 0;  // ProgramTraits(name), set by Judge::JudgeArgv
  const ShellWord* name_word = nullptr;
  std::vector<const ShellWord*> args;  // argv[1..] of the peeled command
  const SimpleCommand* cmd = nullptr;  // the simple command it came from (redirections, pipe)
  const ParsedScript* script = nullptr;
  bool stdin_is_data = false;  // stdin is a pipe, heredoc or here-string
  std::string_view via;        // "xargs" or "find -exec" when run on found items
};

// A path operand after tilde/$HOME expansion and lexical normalisation.
struct ResolvedPath {
  std::string abs;        // normalized absolute path; empty when relative
  std::string rel;        // the text as given when relative
  bool in_home = false;   // abs is the home directory or beneath it
  std::string home_rest;  // "" for home itself, else "a/b" beneath home
  bool in_talaria_home = false;
  std::string talaria_rest;
  bool glob = false;     // unquoted glob characters
  bool dynamic = false;  // parameter expansion or substitution left in the text
};

// The home directory and $TALARIA_HOME of one GuardOptions, normalized, with their
// components: every path resolution compares against them. Immutable once built.
struct JudgeHomes {
  std::string home_option;     // GuardOptions::home as given (the cache key)
  std::string talaria_option;  // GuardOptions::talaria_home as given
  std::string home_abs;
  std::string talaria_abs;
  std::vector<std::string> home_comps;
  std::vector<std::string> talaria_comps;
};

class Judge {
 public:
  Judge(const GuardOptions& options, GuardVerdict& out);

  // Parses and judges `text`; `depth` counts payload nesting (bash -c "bash -c ...").
  void JudgeScript(std::string_view text, int depth);
  void JudgeParsed(const ParsedScript& script, int depth);
  // Judges argv as a command of `origin` (find -exec, xargs, env -S payloads). Takes the view
  // by value: peeling rewrites it.
  void JudgeArgv(CommandView view, int depth);

  void Add(std::string_view rule, std::string_view description, GuardTier tier);
  void Add(std::string_view rule, std::string_view description, GuardTier tier,
           std::string_view segment);

  ResolvedPath Resolve(const ShellWord& word) const;
  ResolvedPath ResolveText(std::string_view text, uint8_t flags) const;
  // $TALARIA_HOME, normalized absolute (GuardOptions::talaria_home, else <home>/.talaria).
  std::string TalariaHome() const;

  // Owns words synthesized while peeling (env -S, find -exec {} ...). Stable addresses.
  const ShellWord* Own(ShellWord w) {
    owned_.push_back(std::move(w));
    return &owned_.back();
  }

  const GuardOptions& options() const { return options_; }
  std::string_view segment() const { return segment_; }
  const ParsedScript* script() const { return script_; }

  // Directories a `cd`/`pushd` earlier in the line may have left the shell in (absolute,
  // normalized). Every target is kept, not only the last: `cd /; cd /nonexistent; rm -rf *`
  // still runs in / when the second cd fails.
  // The working directory of GuardOptions, when set, is the first of them.
  const std::vector<std::string>& cwds() const { return cwds_; }
  void NoteDirectoryChange(const CommandView& view);

  // True when `cmd` (of the script being judged) carries data read from a credential path
  // (ComputeCredentialFlow).
  bool Tainted(const SimpleCommand* cmd) const;

  // `text` (a word holding parameter expansions) as the shell would see it with values
  // assigned literally earlier in the line substituted ($HOME: the home directory) and every
  // other variable unset, i.e. empty: "$DIR/" -> "/", "${X}/*" -> "/*", "/$A$B" -> "/".
  // nullopt when some expansion's value is unknown but never empty (a variable assigned a
  // computed value earlier in the line or bound by `for`, ${X:?}, ${X:-default}, $$, $#, $PWD),
  // for $( ) and other forms not modelled, and when there is no expansion.
  std::optional<std::string> EmptyExpansionPath(std::string_view text) const;

 private:
  void JudgeSimple(const ParsedScript& script, const SimpleCommand& cmd, int depth);
  void JudgeRedirections(const SimpleCommand& cmd, int depth);
  // Records NAME=value (a prefix assignment or an export/local/declare argument).
  void NoteAssignment(const ShellWord& assignment);
  // Sets homes_: the last options' homes are reused per thread, since a caller judges many
  // commands with the same options (guard_paths.cpp).
  void InitHomes();

  const GuardOptions& options_;
  GuardVerdict& out_;
  std::deque<ShellWord> owned_;
  // NAME -> literal value of plain `NAME=value` commands seen so far (a=rm; $a -rf /).
  std::vector<std::pair<std::string, std::string>> variables_;
  // Names assigned a non-literal value ($(mktemp -d)) or bound by `for NAME in WORDS`:
  // presumed set, value unknown.
  std::vector<std::string> assigned_;
  std::vector<std::string> cwds_;
  std::string_view segment_;  // the command being judged (in a script JudgeParsed walks)
  const ParsedScript* script_ = nullptr;
  const std::vector<bool>* taint_ = nullptr;  // per command of script_
  const SimpleCommand* current_ = nullptr;    // the command of script_ being judged
  std::shared_ptr<const JudgeHomes> homes_;
};

inline constexpr int kMaxPayloadDepth = 8;

// Peels wrappers (sudo, env, nice, timeout, xargs, busybox, ...) off `view` in place; judges
// string payloads of wrappers (su -c, flock -c, watch, ssh host CMD) itself. Returns false
// when nothing is left to judge.
bool PeelWrappers(Judge& judge, CommandView& view, int depth);

// Rule families; each inspects `view` when its name matches and adds reasons.
void JudgeDeleteRules(Judge& judge, const CommandView& view, int depth);
void JudgeDiskRules(Judge& judge, const CommandView& view);
void JudgeSystemRules(Judge& judge, const CommandView& view);
void JudgeExecRules(Judge& judge, const CommandView& view, int depth);
void JudgeWriteRules(Judge& judge, const CommandView& view);
void JudgeVcsRules(Judge& judge, const CommandView& view, int depth);
// Inline interpreter code (python -c, perl -e, ruby -e, node -e, php -r, ...): commands handed
// to the shell (os.system, subprocess.*, system, backticks, child_process.exec) are judged as
// shell commands, deletes of paths (shutil.rmtree, os.remove, fs.rmSync) like rm. `language` is
// the interpreter family ("python", "perl", "ruby", "node", ...) (guard_interpreter_code.cpp).
void JudgeInterpreterCode(Judge& judge, std::string_view language, std::string_view code,
                          int depth);
// setuid bits, uid-0 accounts, firewall off, containers given the host, services enabled
// (guard_rules_privilege.cpp).
void JudgePrivilegeRules(Judge& judge, const CommandView& view);
// Carriers (guard_rules_carriers.cpp): trap, alias, tmux, screen, at/batch, make, editors,
// debuggers and database shells; each payload is judged as the code it is.
void JudgeCarrierRules(Judge& judge, const CommandView& view, int depth);
// NAME=VALUE wherever it is set (prefix, bare, export, env): variables that make programs load
// or run code (guard_rules_env.cpp).
void JudgeEnvAssignment(Judge& judge, std::string_view assignment, int depth);
// What `view` reads as its program text on stdin: heredoc and here-string bodies, and what an
// echo/printf piped straight into it prints (guard_carrier_text.cpp).
std::vector<std::string> StdinTexts(const CommandView& view);
// When an earlier command of the same line downloads to `path` (curl -o, wget -O or its default
// name, a redirection or tee of a download).
bool DownloadedEarlier(const CommandView& view, std::string_view path);
// When an earlier command of the same line writes `path` (a redirection or tee): what it wrote
// when known (a heredoc, an echo), else "". nullopt when nothing earlier writes it.
std::optional<std::string> WrittenEarlier(const CommandView& view, std::string_view path);

// Credentials leaving the machine (guard_rules_exfil.cpp). IsCredentialPath: keys, ~/.ssh,
// ~/.aws and other credential stores, .env, $TALARIA_HOME, /etc/shadow, /proc/*/environ.
bool IsCredentialPath(const Judge& judge, const ResolvedPath& p);
// Per command of `script`: does it carry data read from a credential path (read directly, or
// through a pipe, a file written earlier, a variable or a substitution)? Empty (nothing is)
// when the script has no network sink at all. `inherited`: the script is the payload of a
// command that carries such data (`cat key | bash -c '...'`), so its stdin and environment do
// and every command of it starts out carrying it.
std::vector<bool> ComputeCredentialFlow(const Judge& judge, const ParsedScript& script,
                                        bool inherited);
// Tainted data reaching a network sink; reverse shells.
void JudgeNetworkSinkRules(Judge& judge, const CommandView& view);

// Rules over the whole script: pipelines into shells, chmod +x then run, fork bombs.
void JudgeScriptRules(Judge& judge, const ParsedScript& script, int depth);

// Paths (guard_paths.cpp).
bool IsBlockDevice(const ResolvedPath& p);
// Rule id + description when writing to `p` needs approval (or is hardline for devices).
struct WriteFinding {
  std::string_view rule;
  std::string_view description;
  GuardTier tier;
};
std::optional<WriteFinding> ClassifyWrite(const ResolvedPath& p);
// Judges a write to `word`: as written, and for a relative path also at every directory the
// command may run in (Judge::cwds).
void CheckWriteTarget(Judge& judge, const ShellWord& word);
// For commands that change a file without writing its content (chmod, chown, touch, mkdir,
// rmdir, a link's source): only the hardline finding, a change inside $TALARIA_HOME.
void CheckStateTarget(Judge& judge, const ShellWord& word);
// True when inline code of an interpreter or awk both names $TALARIA_HOME (by path, by its
// name under home, or as the variable) and contains something that writes, deletes or runs.
bool CodeModifiesTalariaHome(const Judge& judge, std::string_view code);

// Helpers.
std::string_view Basename(std::string_view path);
bool IsShell(std::string_view name);
bool IsInterpreter(std::string_view name);
bool IsNetworkTool(std::string_view name);
bool StartsWith(std::string_view s, std::string_view prefix);
// Short flags of a "-abc" cluster (not "--long"); empty for non-flags.
bool ShortFlagsContain(std::string_view arg, char flag);
bool IsOption(std::string_view arg);

// chmod modes (also install -m): whether `mode` is octal digits, and each action of a symbolic
// mode as who, operator ('+', '-' or '='), permissions: "u-x+s,o=w" is (u,-,x) (u,+,s) (o,=,w).
inline bool IsOctalMode(std::string_view mode) {
  return !mode.empty() && mode.find_first_not_of("01234567") == std::string_view::npos;
}
template <class Action>  // void(std::string_view who, char op, std::string_view perms)
void ForEachModeAction(std::string_view mode, Action&& action) {
  size_t start = 0;
  while (start <= mode.size()) {
    size_t end = mode.find(',', start);
    if (end == std::string_view::npos) end = mode.size();
    const std::string_view clause = mode.substr(start, end - start);
    size_t op = clause.find_first_of("+-=");
    const std::string_view who = clause.substr(0, op);
    while (op != std::string_view::npos) {
      const size_t next = clause.find_first_of("+-=", op + 1);
      action(who, clause[op],
             clause.substr(op + 1, next == std::string_view::npos ? next : next - op - 1));
      op = next;
    }
    start = end + 1;
  }
}

}  // namespace talaria::safety::guard
