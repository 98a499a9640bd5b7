// JudgeCommand: control characters, parsing (fail closed), the walk over every simple command,
// redirections, and the residual pattern over the whole text (cloud metadata endpoints).
#include "talaria/guard/command_guard.h"

#include <fnmatch.h>

#include <algorithm>
#include <array>

#include <re2/re2.h>

#include "guard/guard_internal.h"
#include "talaria/confinement/path_rules.h"

namespace talaria::safety {

std::string_view GuardDecisionName(GuardDecision decision) {
  switch (decision) {
    case GuardDecision::kAllow:
      return "allow";
    case GuardDecision::kApprove:
      return "approve";
    case GuardDecision::kBlock:
      return "block";
  }
  return "block";
}

std::string_view GuardTierName(GuardTier tier) {
  switch (tier) {
    case GuardTier::kNone:
      return "none";
    case GuardTier::kDangerous:
      return "dangerous";
    case GuardTier::kHardline:
      return "hardline";
  }
  return "hardline";
}

namespace guard {
namespace {

constexpr size_t kMaxSegment = 300;
constexpr size_t kMaxCwds = 16;

bool IsDeclaration(std::string_view name) {
  return name == "export" || name == "local" || name == "declare" || name == "typeset" ||
         name == "readonly";
}

bool IsNameChar(char c, bool first) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (!first && c >= '0' && c <= '9');
}

std::string_view Excerpt(std::string_view text, bool* cut) {
  *cut = text.size() > kMaxSegment;
  return *cut ? text.substr(0, kMaxSegment) : text;
}

// Names a glob-spelled command (/???/r?) might resolve to; each is judged as that command.
constexpr std::array<std::string_view, 24> kGlobCandidates = {
    "rm",     "dd",    "mkfs",      "shutdown", "reboot", "halt", "poweroff",   "kill",
    "wipefs", "shred", "chmod",     "chown",    "sh",     "bash", "python3",    "curl",
    "wget",   "sudo",  "systemctl", "find",     "git",    "eval", "blkdiscard", "init"};

}  // namespace

Judge::Judge(const GuardOptions& options, GuardVerdict& out) : options_(options), out_(out) {
  InitHomes();
  if (!options.working_directory.empty() && options.working_directory[0] == '/') {
    cwds_.push_back(internal::NormalizeAbsolute(options.working_directory));
  }
}

void Judge::Add(std::string_view rule, std::string_view description, GuardTier tier) {
  Add(rule, description, tier, segment_);
}

void Judge::Add(std::string_view rule, std::string_view description, GuardTier tier,
                std::string_view segment) {
  bool cut = false;
  const std::string_view seg = Excerpt(segment, &cut);
  for (const GuardReason& r : out_.reasons) {
    if (r.rule == rule && r.segment.starts_with(seg) &&
        r.segment.size() == seg.size() + (cut ? 3 : 0)) {
      return;
    }
  }
  GuardReason& r = out_.reasons.emplace_back();
  r.rule.assign(rule);
  r.description.assign(description);
  r.segment.reserve(seg.size() + 3);
  r.segment.append(seg);
  if (cut) r.segment.append("...");
  r.tier = tier;
}

void Judge::JudgeScript(std::string_view text, int depth) {
  if (depth > kMaxPayloadDepth) {
    Add("payload_too_deep", "command payloads nested too deeply", GuardTier::kDangerous, text);
    return;
  }
  auto parsed = ParseShell(text);
  if (!parsed) {
    if (parsed.error().code() == StatusCode::kResourceExhausted) {
      Add("parser_limit", "command parser limit exceeded", GuardTier::kHardline, text);
    } else {
      Add("unparseable", "command could not be parsed", GuardTier::kDangerous, text);
    }
    return;
  }
  JudgeParsed(*parsed, depth);
}

void Judge::JudgeParsed(const ParsedScript& script, int depth) {
  const ParsedScript* saved_script = script_;
  const std::vector<bool>* saved_taint = taint_;
  const std::string_view saved_segment = segment_;
  const SimpleCommand* saved_current = current_;
  // A payload (bash -c, eval, a heredoc, os.system(...)) run by a command that carries
  // credential data gets it on its stdin and in its environment.
  const std::vector<bool> taint = ComputeCredentialFlow(*this, script, Tainted(current_));
  script_ = &script;
  taint_ = &taint;
  for (const SimpleCommand& cmd : script.commands) {
    segment_ = cmd.segment;
    current_ = &cmd;
    if (cmd.argv.empty()) {
      for (const ShellWord& a : cmd.assignments) NoteAssignment(a);
    } else if (IsDeclaration(cmd.argv[0].text)) {
      for (size_t i = 1; i < cmd.argv.size(); ++i) NoteAssignment(cmd.argv[i]);
    } else if (cmd.argv[0].text == "for" && cmd.argv.size() >= 3 && cmd.argv[2].text == "in" &&
               assigned_.size() < 64) {
      // `for d in WORDS`: the body only runs with d bound to one of WORDS. Literal words (and
      // unquoted substitutions, which field-split) are never empty.
      bool non_empty = true;
      for (size_t i = 3; i < cmd.argv.size(); ++i) {
        const ShellWord& w = cmd.argv[i];
        if (w.text.empty() || (w.Has(kWordExpansion | kWordCommandSubst) && w.Has(kWordQuoted))) {
          non_empty = false;
        }
      }
      if (non_empty) assigned_.push_back(cmd.argv[1].text);
    }
    JudgeSimple(script, cmd, depth);
  }
  JudgeScriptRules(*this, script, depth);
  script_ = saved_script;
  taint_ = saved_taint;
  segment_ = saved_segment;
  current_ = saved_current;
}

bool Judge::Tainted(const SimpleCommand* cmd) const {
  if (cmd == nullptr || script_ == nullptr || taint_ == nullptr || script_->commands.empty()) {
    return false;
  }
  const SimpleCommand* first = script_->commands.data();
  if (cmd < first || cmd >= first + script_->commands.size()) return false;
  const size_t i = static_cast<size_t>(cmd - first);
  return i < taint_->size() && (*taint_)[i];
}

void Judge::NoteAssignment(const ShellWord& a) {
  const size_t eq = a.text.find('=');
  if (eq == std::string::npos || eq == 0) return;
  std::string_view name = std::string_view(a.text).substr(0, eq);
  if (name.ends_with('+')) name.remove_suffix(1);  // X+=more
  if (a.IsLiteral()) {
    if (variables_.size() < 64) variables_.emplace_back(std::string(name), a.text.substr(eq + 1));
  } else if (assigned_.size() < 64) {
    assigned_.emplace_back(name);
  }
}

void Judge::JudgeRedirections(const SimpleCommand& cmd, int /*depth*/) {
  for (const Redirection& r : cmd.redirections) {
    if (r.Writes()) CheckWriteTarget(*this, r.target);
  }
}

void Judge::JudgeSimple(const ParsedScript& script, const SimpleCommand& cmd, int depth) {
  JudgeRedirections(cmd, depth);
  for (const ShellWord& a : cmd.assignments) {
    JudgeEnvAssignment(*this, a.text, depth);
    if (StartsWith(a.text, "DOCKER_HOST=") || StartsWith(a.text, "CONTAINER_HOST=")) {
      Add("container_remote_host", "container engine pointed at another host or context",
          GuardTier::kDangerous);
    }
  }
  if (cmd.argv.empty()) return;
  CommandView view;
  view.name_word = &cmd.argv[0];
  view.name = Basename(cmd.argv[0].text);
  view.args.reserve(cmd.argv.size() - 1);
  for (size_t i = 1; i < cmd.argv.size(); ++i) view.args.push_back(&cmd.argv[i]);
  view.cmd = &cmd;
  view.script = &script;
  view.stdin_is_data = cmd.stdin_piped;
  for (const Redirection& r : cmd.redirections) {
    if (r.op == RedirectOp::kHeredoc || r.op == RedirectOp::kHereString) {
      view.stdin_is_data = true;
    }
  }
  JudgeArgv(std::move(view), depth);
}

void Judge::JudgeArgv(CommandView view, int depth) {
  view.traits = ProgramTraits(view.name);
  // ssh is peeled as a wrapper (its remote command is judged), but it is also a sink.
  if ((view.traits & kTraitSsh) != 0) JudgeNetworkSinkRules(*this, view);
  if ((view.traits & kTraitWrapper) != 0) {
    if (!PeelWrappers(*this, view, depth)) return;
    view.traits = ProgramTraits(view.name);
  }
  if (view.name_word == nullptr) return;
  if (!view.name_word->IsLiteral()) {
    if (view.name_word->Has(kWordGlob) &&
        !view.name_word->Has(kWordExpansion | kWordCommandSubst | kWordProcessSubst)) {
      const std::string pattern(Basename(view.name_word->text));
      for (std::string_view candidate : kGlobCandidates) {
        const std::string c(candidate);
        if (::fnmatch(pattern.c_str(), c.c_str(), 0) == 0) {
          CommandView as = view;
          as.name = candidate;
          as.name_word = Own(ShellWord{c, 0});
          JudgeArgv(std::move(as), depth + 1);
        }
      }
    }
    Add("dynamic_command", "command name built at run time", GuardTier::kDangerous);
    // $NAME / ${NAME} with a literal value assigned earlier: judge what it expands to
    // (unquoted, so the value is split on blanks).
    std::string_view ref = view.name_word->text;
    if (ref.starts_with("${") && ref.ends_with("}")) {
      ref = ref.substr(2, ref.size() - 3);
    } else if (ref.starts_with("$")) {
      ref.remove_prefix(1);
    } else {
      return;
    }
    for (auto it = variables_.rbegin(); it != variables_.rend(); ++it) {
      if (it->first != ref) continue;
      CommandView as = view;
      std::vector<const ShellWord*> words;
      size_t start = 0;
      const std::string& value = it->second;
      while (start < value.size()) {
        const size_t end = std::min(value.find_first_of(" \t\n", start), value.size());
        if (end > start) words.push_back(Own(ShellWord{value.substr(start, end - start), 0}));
        start = end + 1;
      }
      if (words.empty() || depth >= kMaxPayloadDepth) return;
      as.name_word = words[0];
      as.name = Basename(words[0]->text);
      as.args.assign(words.begin() + 1, words.end());
      as.args.insert(as.args.end(), view.args.begin(), view.args.end());
      JudgeArgv(std::move(as), depth + 1);
      return;
    }
    return;
  }
  // One lookup decides which rule families look at this program at all.
  const uint32_t t = view.traits;
  if ((t & kTraitDirChange) != 0) NoteDirectoryChange(view);
  if ((t & kTraitDelete) != 0) JudgeDeleteRules(*this, view, depth);
  if ((t & kTraitDisk) != 0) JudgeDiskRules(*this, view);
  if ((t & kTraitSystem) != 0) JudgeSystemRules(*this, view);
  if ((t & kTraitExec) != 0) JudgeExecRules(*this, view, depth);
  if ((t & kTraitWrite) != 0) JudgeWriteRules(*this, view);
  if ((t & kTraitVcs) != 0) JudgeVcsRules(*this, view, depth);
  JudgeNetworkSinkRules(*this, view);  // also redirections to sockets and tainted data
  if ((t & kTraitCarrier) != 0) JudgeCarrierRules(*this, view, depth);
  if ((t & kTraitPrivilege) != 0) JudgePrivilegeRules(*this, view);
  if ((t & kTraitDeclaration) != 0) {
    for (const ShellWord* w : view.args) JudgeEnvAssignment(*this, w->text, depth);
  }
}

void Judge::NoteDirectoryChange(const CommandView& view) {
  const ShellWord* target = nullptr;
  bool options_done = false;
  for (const ShellWord* w : view.args) {
    if (!options_done && w->text == "--") {
      options_done = true;
      continue;
    }
    if (!options_done && IsOption(w->text)) continue;  // -P, -L, -e, -@
    target = w;
    break;
  }
  std::vector<std::string> found;
  const std::string home = Resolve(ShellWord{"~", kWordTilde}).abs;
  if (target == nullptr) {
    if (view.name == "cd") found.push_back(home);  // bare cd goes home
  } else if (target->text == "-" || target->text.starts_with("+") ||
             target->text.starts_with("-")) {
    // cd - / pushd +N: a directory visited before; already among cwds_ if we saw it.
  } else {
    const ResolvedPath p = Resolve(*target);
    if (p.dynamic) {
      if (target->Has(kWordExpansion)) {
        if (auto e = EmptyExpansionPath(target->text)) {
          if (e->starts_with('/')) {
            found.push_back(internal::NormalizeAbsolute(*e));
          } else if (e->empty() && !target->Has(kWordQuoted)) {
            found.push_back(home);  // `cd $UNSET` is a bare cd
          }
        }
      }
    } else if (!p.abs.empty()) {
      found.push_back(p.abs);
    } else if (!p.rel.empty()) {
      for (const std::string& cwd : cwds_) {
        found.push_back(internal::NormalizeAbsolute(cwd + "/" + p.rel));
      }
    }
  }
  for (std::string& f : found) {
    if (cwds_.size() >= kMaxCwds) break;
    if (std::find(cwds_.begin(), cwds_.end(), f) == cwds_.end()) cwds_.push_back(std::move(f));
  }
}

std::optional<std::string> Judge::EmptyExpansionPath(std::string_view text) const {
  std::string out;
  bool expanded = false;
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '$' || i + 1 >= text.size()) {
      out += text[i++];
      continue;
    }
    std::string_view name;
    bool never_empty = false;
    size_t end = 0;
    if (text[i + 1] == '{') {
      const size_t close = text.find('}', i + 2);
      if (close == std::string_view::npos) return std::nullopt;
      const std::string_view inner = text.substr(i + 2, close - i - 2);
      if (inner.starts_with('#')) never_empty = true;  // ${#X}: a length
      size_t n = 0;
      while (n < inner.size() && IsNameChar(inner[n], n == 0)) ++n;
      if (n == 0 && !inner.empty() && inner[0] != '!') n = 1;  // ${1}, ${@}
      name = inner.substr(0, n);
      const std::string_view op = inner.substr(n);
      if (op.starts_with(":?") ||
          ((op.starts_with(":-") || op.starts_with(":=")) && op.size() > 2)) {
        never_empty = true;
      }
      end = close + 1;
    } else if (IsNameChar(text[i + 1], true)) {
      size_t n = i + 1;
      while (n < text.size() && IsNameChar(text[n], false)) ++n;
      name = text.substr(i + 1, n - i - 1);
      end = n;
    } else if ((text[i + 1] >= '0' && text[i + 1] <= '9') || text[i + 1] == '@' ||
               text[i + 1] == '*' || text[i + 1] == '!') {
      name = text.substr(i + 1, 1);
      end = i + 2;
    } else if (text[i + 1] == '$' || text[i + 1] == '#' || text[i + 1] == '?' ||
               text[i + 1] == '-') {
      never_empty = true;
      name = text.substr(i + 1, 1);
      end = i + 2;
    } else {
      return std::nullopt;  // $( ), $(( )), $'...': not modelled
    }
    if (never_empty || name == "PWD") return std::nullopt;
    if (name == "HOME") {
      out += Resolve(ShellWord{"~", kWordTilde}).abs;
    } else {
      const std::pair<std::string, std::string>* literal = nullptr;
      for (auto it = variables_.rbegin(); it != variables_.rend(); ++it) {
        if (it->first == name) {
          literal = &*it;
          break;
        }
      }
      if (literal != nullptr) {
        out += literal->second;
      } else if (std::find(assigned_.begin(), assigned_.end(), name) != assigned_.end()) {
        return std::nullopt;  // set earlier in the line, value unknown
      }                       // else unset here: expands to nothing
    }
    expanded = true;
    i = end;
  }
  if (!expanded) return std::nullopt;
  return out;
}

namespace {

// Cloud metadata endpoints (credential theft), in the spellings curl and friends accept.
const RE2& MetadataPattern() {
  static const RE2 re(
      "(?i)(169\\.254\\.169\\.254|\\b2852039166\\b|0xa9fea9fe|0251\\.0376\\.0251\\.0376|"
      "169\\.254\\.170\\.2\\b|100\\.100\\.100\\.200|metadata\\.google\\.internal|"
      "fd00:ec2::254|metadata\\.azure\\.com)");
  return re;
}

bool IsControl(unsigned char c) { return (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f; }

// The text with ANSI escape sequences and other control characters removed, for judging what
// remains after a control-character finding.
std::string StripControls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == 0x1b && i + 1 < text.size() && text[i + 1] == '[') {
      i += 2;
      while (i < text.size() && !(text[i] >= 0x40 && text[i] <= 0x7e)) ++i;
      continue;
    }
    if (IsControl(c)) continue;
    out += static_cast<char>(c);
  }
  return out;
}

}  // namespace
}  // namespace guard

GuardVerdict JudgeCommand(std::string_view command, const GuardOptions& options) {
  GuardVerdict verdict;
  guard::Judge judge(options, verdict);
  std::string stripped;
  std::string_view text = command;
  if (std::any_of(command.begin(), command.end(),
                  [](char c) { return guard::IsControl(static_cast<unsigned char>(c)); })) {
    stripped = guard::StripControls(command);
    judge.Add("control_characters", "control characters (CR, NUL, escape sequences) in the command",
              GuardTier::kHardline, stripped);
    text = stripped;
  }
  judge.JudgeScript(text, 0);
  if (text.size() >= 11 && RE2::PartialMatch(text, guard::MetadataPattern())) {
    judge.Add("cloud_metadata", "cloud metadata credential endpoint", GuardTier::kDangerous, text);
  }
  for (const GuardReason& r : verdict.reasons) verdict.tier = std::max(verdict.tier, r.tier);
  verdict.decision = verdict.tier == GuardTier::kHardline    ? GuardDecision::kBlock
                     : verdict.tier == GuardTier::kDangerous ? GuardDecision::kApprove
                                                             : GuardDecision::kAllow;
  return verdict;
}

std::string PeeledProgramName(const std::vector<std::string>& argv) {
  if (argv.empty()) return {};
  std::deque<ShellWord> words;
  for (const std::string& a : argv) words.push_back(ShellWord{a, 0});
  guard::CommandView view;
  view.name_word = &words[0];
  view.name = guard::Basename(words[0].text);
  for (size_t i = 1; i < words.size(); ++i) view.args.push_back(&words[i]);
  GuardVerdict scratch;
  guard::Judge judge(GuardOptions{}, scratch);
  if (!guard::PeelWrappers(judge, view, guard::kMaxPayloadDepth) || view.name_word == nullptr) {
    return {};
  }
  return std::string(view.name);
}

}  // namespace talaria::safety
