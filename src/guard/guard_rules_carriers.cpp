// Carriers: programs that run a command string later or on the side. Each is modelled as
// "this argument (or this stdin text, or this file) is shell code that will run" and that code
// is judged like the command line itself: trap handlers, aliases, tmux and screen sessions
// (and keys sent to them), at/batch jobs, make recipes (--eval, a makefile written in the same
// line), editors' Ex commands (vim -c '!…', ex, ed), debuggers' (gdb -ex 'shell …', lldb -o
// 'platform shell …') and database shells' escapes (psql \!, sqlite3 .shell, mysql system).
// A carrier with a harmless payload stays allowed (`trap 'rm -f "$tmp"' EXIT`,
// `tmux new -d 'make test'`); at/batch always need approval (unattended, later).
#include <array>
#include <string>
#include <vector>

#include "guard/guard_internal.h"

namespace talaria::safety::guard {
namespace {

std::string JoinWords(const std::vector<const ShellWord*>& a, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < a.size() && i < to; ++i) {
    if (!out.empty()) out += ' ';
    out += a[i]->text;
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// A leading keyword of `s` among `words` (followed by a non-word character), removed.
bool TakeKeyword(std::string_view& s, std::initializer_list<std::string_view> words) {
  for (std::string_view w : words) {
    if (s.starts_with(w) && (s.size() == w.size() || !IsWordChar(s[w.size()]))) {
      s.remove_prefix(w.size());
      s = Trim(s);
      return true;
    }
  }
  return false;
}

// The first quoted string in `s` ('x' or "x"), unquoted.
std::string FirstQuoted(std::string_view s) {
  const size_t q = s.find_first_of("'\"");
  if (q == std::string_view::npos) return {};
  const size_t end = s.find(s[q], q + 1);
  if (end == std::string_view::npos) return std::string(s.substr(q + 1));
  return std::string(s.substr(q + 1, end - q - 1));
}

void ShellPayload(Judge& judge, std::string_view rule, std::string_view description,
                  std::string_view payload, int depth) {
  judge.Add(rule, description, GuardTier::kDangerous);
  if (!payload.empty()) judge.JudgeScript(payload, depth + 1);
}

// ---- editors (vi/vim/nvim/ex Ex commands, ed commands) ----------------------------------------

constexpr std::string_view kEditorRule = "editor_shell_command";
constexpr std::string_view kEditorText = "editor command that runs a shell or interpreter";

// One Ex (or ed) command line: `!cmd`, `r !cmd`, `w !cmd`, `%!cmd`, `silent !cmd`,
// `call system('cmd')`, `terminal cmd`, `py3 code`, `exe "…"`. Judges what runs.
void JudgeExCommand(Judge& judge, std::string_view line, int depth, int nest = 0) {
  for (int steps = 0; steps < 32 && !line.empty(); ++steps) {
    std::string_view s = Trim(line);
    while (!s.empty() && s.front() == ':') s = Trim(s.substr(1));
    TakeKeyword(s, {"silent!", "silent", "sil!", "sil", "keepalt", "noautocmd", "verbose"});
    if (s.starts_with("silent!")) s = Trim(s.substr(7));
    // A range: %, $, ., digits, 'x marks, commas, /pat/.
    while (!s.empty() &&
           (s.front() == '%' || s.front() == '$' || s.front() == '.' || s.front() == ',' ||
            s.front() == ';' || (s.front() >= '0' && s.front() <= '9') || s.front() == '\'')) {
      s.remove_prefix(s.front() == '\'' && s.size() > 1 ? 2 : 1);
    }
    s = Trim(s);
    // `:r !cmd` and `:r!cmd` read a command's output; `:w !cmd` pipes to one (`:w!` without
    // the blank is a forced write).
    std::string_view rest = s;
    bool bang = s.starts_with('!');
    if (!bang && TakeKeyword(rest, {"read", "r"})) bang = rest.starts_with('!');
    if (!bang && (rest = s, TakeKeyword(rest, {"write", "w"}))) {
      bang =
          rest.starts_with('!') && s.size() > rest.size() && s[s.size() - rest.size() - 1] == ' ';
    }
    if (bang) {
      std::string_view payload = s.starts_with('!') ? s.substr(1) : rest.substr(1);
      ShellPayload(judge, kEditorRule, kEditorText, Trim(payload), depth);
      return;  // a bang command takes the rest of the line, bars included
    }
    rest = s;
    if (TakeKeyword(rest, {"terminal", "term", "ter"})) {
      ShellPayload(judge, kEditorRule, kEditorText, rest, depth);
      return;
    }
    rest = s;
    if (TakeKeyword(rest, {"python3", "python", "py3", "py", "pyx", "pythonx", "pyfile", "py3file",
                           "pyf"})) {
      judge.Add(kEditorRule, kEditorText, GuardTier::kDangerous);
      JudgeInterpreterCode(judge, "python", rest, depth);
      return;
    }
    rest = s;
    if (TakeKeyword(rest,
                    {"lua", "luafile", "perl", "perldo", "ruby", "rubydo", "tcl", "mzscheme"})) {
      judge.Add(kEditorRule, kEditorText, GuardTier::kDangerous);
      return;
    }
    rest = s;
    if (TakeKeyword(rest, {"execute", "exe", "exec"}) && nest < 4) {
      JudgeExCommand(judge, FirstQuoted(rest), depth, nest + 1);
    }
    for (std::string_view fn : {"system(", "systemlist(", "jobstart(", "job_start(", "termopen("}) {
      const size_t at = s.find(fn);
      if (at != std::string_view::npos) {
        ShellPayload(judge, kEditorRule, kEditorText, FirstQuoted(s.substr(at)), depth);
      }
    }
    const size_t bar = s.find('|');
    if (bar == std::string_view::npos) return;
    line = s.substr(bar + 1);
  }
}

void JudgeExLines(Judge& judge, std::string_view text, int depth) {
  size_t start = 0;
  for (int n = 0; start <= text.size() && n < 2000; ++n) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    JudgeExCommand(judge, text.substr(start, end - start), depth);
    start = end + 1;
  }
}

void JudgeVim(Judge& judge, const CommandView& v, int depth) {
  bool ex_mode = v.name == "ex" || v.name == "exim";
  for (size_t i = 0; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    if ((t == "-c" || t == "--cmd") && i + 1 < v.args.size()) {
      JudgeExCommand(judge, v.args[++i]->text, depth);
    } else if (t.starts_with("+") && t.size() > 1 &&
               t.find_first_not_of("0123456789", 1) != std::string_view::npos) {
      JudgeExCommand(judge, t.substr(1), depth);  // +cmd (not +N, a line number)
    } else if ((t == "-S" || t == "-u" || t == "-s") && i + 1 < v.args.size()) {
      const std::string_view file = v.args[++i]->text;
      if (auto text = WrittenEarlier(v, file)) {
        judge.Add(kEditorRule, kEditorText, GuardTier::kDangerous);
        JudgeExLines(judge, *text, depth);
      }
    } else if (t == "-e" || t == "-es" || t == "-E" || t == "-Es" || t == "--clean") {
      ex_mode = ex_mode || t != "--clean";
    }
  }
  if (ex_mode) {
    for (const std::string& text : StdinTexts(v)) JudgeExLines(judge, text, depth);
  }
}

void JudgeEd(Judge& judge, const CommandView& v, int depth) {
  for (const std::string& text : StdinTexts(v)) JudgeExLines(judge, text, depth);
}

// ---- debuggers ------------------------------------------------------------------------------

constexpr std::string_view kDebuggerRule = "debugger_shell_command";
constexpr std::string_view kDebuggerText = "debugger command that runs a shell or interpreter";

void JudgeDebuggerCommand(Judge& judge, std::string_view cmd, int depth) {
  std::string_view s = Trim(cmd);
  std::string_view rest = s;
  if (s.starts_with('!')) {
    ShellPayload(judge, kDebuggerRule, kDebuggerText, Trim(s.substr(1)), depth);
  } else if (TakeKeyword(rest, {"shell", "she"})) {
    ShellPayload(judge, kDebuggerRule, kDebuggerText, rest, depth);
  } else if (TakeKeyword(rest = s, {"platform"}) && TakeKeyword(rest, {"shell"})) {
    ShellPayload(judge, kDebuggerRule, kDebuggerText, rest, depth);
  } else if (TakeKeyword(rest = s, {"pipe", "|"})) {
    const size_t bar = rest.rfind('|');
    ShellPayload(judge, kDebuggerRule, kDebuggerText,
                 bar == std::string_view::npos ? rest : rest.substr(bar + 1), depth);
  } else if (TakeKeyword(rest = s, {"python", "py", "python-interactive", "pi", "script"})) {
    judge.Add(kDebuggerRule, kDebuggerText, GuardTier::kDangerous);
    JudgeInterpreterCode(judge, "python", rest, depth);
  } else if (TakeKeyword(rest = s, {"guile", "gu", "source", "command"})) {
    judge.Add(kDebuggerRule, kDebuggerText, GuardTier::kDangerous);
  }
}

void JudgeDebugger(Judge& judge, const CommandView& v, int depth) {
  const bool lldb = v.name == "lldb";
  for (size_t i = 0; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    std::string_view name = t;
    while (name.starts_with('-')) name.remove_prefix(1);
    const size_t eq = name.find('=');
    const std::string_view key = name.substr(0, eq);
    const bool command_flag =
        lldb ? (key == "o" || key == "one-line" || key == "O" || key == "one-line-before-file" ||
                key == "k" || key == "one-line-on-crash")
             : (key == "ex" || key == "iex" || key == "eval-command" || key == "init-eval-command");
    const bool file_flag =
        lldb ? (key == "s" || key == "source" || key == "S")
             : (key == "x" || key == "command" || key == "ix" || key == "init-command");
    if (!t.starts_with('-')) {
      continue;
    } else if (command_flag || file_flag) {
      std::string_view value;
      if (eq != std::string_view::npos) {
        value = name.substr(eq + 1);
      } else if (i + 1 < v.args.size()) {
        value = v.args[++i]->text;
      }
      if (command_flag) {
        JudgeDebuggerCommand(judge, value, depth);
      } else if (auto text = WrittenEarlier(v, value)) {
        judge.Add(kDebuggerRule, kDebuggerText, GuardTier::kDangerous);
        size_t start = 0;
        while (start <= text->size()) {
          size_t end = text->find('\n', start);
          if (end == std::string::npos) end = text->size();
          JudgeDebuggerCommand(judge, std::string_view(*text).substr(start, end - start), depth);
          start = end + 1;
        }
      }
    } else if (key == "args" && i + 1 < v.args.size()) {
      // gdb --args PROG ARGS: the program the debugger starts.
      CommandView prog = v;
      prog.name_word = v.args[i + 1];
      prog.name = Basename(v.args[i + 1]->text);
      prog.args.assign(v.args.begin() + static_cast<std::ptrdiff_t>(i + 2), v.args.end());
      judge.JudgeArgv(prog, depth + 1);
      return;
    }
  }
  for (const std::string& text : StdinTexts(v)) {
    size_t start = 0;
    while (start <= text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      JudgeDebuggerCommand(judge, std::string_view(text).substr(start, end - start), depth);
      start = end + 1;
    }
  }
}

// ---- tmux and screen ---------------------------------------------------------------------------

// tmux: the shell command of new-session/new-window/split-window/respawn-*, run-shell and
// if-shell, the keys of send-keys (typed into a shell), and `tmux -c CMD`.
void JudgeTmux(Judge& judge, const CommandView& v, int depth) {
  size_t i = 0;
  while (i < v.args.size() && IsOption(v.args[i]->text)) {
    const std::string_view t = v.args[i]->text;
    if (t == "-c" && i + 1 < v.args.size()) {
      judge.JudgeScript(v.args[i + 1]->text, depth + 1);
      return;
    }
    i += (t == "-L" || t == "-S" || t == "-f" || t == "-T") ? 2 : 1;
  }
  while (i < v.args.size()) {
    // One tmux command, up to a lone ";" (written \; on the shell command line).
    size_t end = i;
    while (end < v.args.size() && v.args[end]->text != ";") ++end;
    const std::string_view sub = v.args[i]->text;
    size_t k = i + 1;
    bool literal = false;
    const bool keys = sub == "send-keys" || sub == "send";
    while (k < end && IsOption(v.args[k]->text)) {
      const std::string_view t = v.args[k]->text;
      if (t == "-l") literal = true;
      // Options taking a value (-t target, -s/-n names, -c dir, -e VAR=x, ...); -l is a size
      // except for send-keys, where it means "literal".
      const char last = t.back();
      const bool takes =
          t.size() == 2 && (std::string_view("tscnxyFeNwTp").find(last) != std::string_view::npos ||
                            (last == 'l' && !keys));
      k += takes ? 2 : 1;
    }
    if (keys) {
      std::string text;
      for (size_t m = k; m < end; ++m) {
        const std::string_view key = v.args[m]->text;
        if (!literal && (key == "Enter" || key == "C-m" || key == "KPEnter" || key == "C-j")) {
          text += '\n';
        } else {
          text += key;
          if (!literal) text += ' ';
        }
      }
      judge.JudgeScript(text, depth + 1);
    } else if (sub == "new-session" || sub == "new" || sub == "new-window" || sub == "neww" ||
               sub == "split-window" || sub == "splitw" || sub == "respawn-pane" ||
               sub == "respawnp" || sub == "respawn-window" || sub == "respawnw" ||
               sub == "run-shell" || sub == "run" || sub == "pipe-pane" || sub == "pipep" ||
               sub == "display-popup" || sub == "popup") {
      if (k < end) judge.JudgeScript(JoinWords(v.args, k, end), depth + 1);
    } else if ((sub == "if-shell" || sub == "if") && k < end) {
      judge.JudgeScript(v.args[k]->text, depth + 1);
    }
    i = end + 1;
  }
}

// screen: `screen [-dm] [-S name] CMD ARGS` runs CMD; `-X stuff TEXT` types TEXT into the
// session's shell; `-X exec CMD` runs CMD.
void JudgeScreen(Judge& judge, const CommandView& v, int depth) {
  size_t i = 0;
  while (i < v.args.size() && IsOption(v.args[i]->text)) {
    const std::string_view t = v.args[i]->text;
    if (t == "-X" && i + 1 < v.args.size()) {
      const std::string_view cmd = v.args[i + 1]->text;
      if ((cmd == "stuff" || cmd == "exec" || cmd == "screen") && i + 2 < v.args.size()) {
        std::string text;
        const std::string joined = JoinWords(v.args, i + 2, v.args.size());
        for (size_t k = 0; k < joined.size(); ++k) {
          if (joined[k] == '^' && k + 1 < joined.size() &&
              (joined[k + 1] == 'M' || joined[k + 1] == 'J')) {
            text += '\n';
            ++k;
          } else if (joined[k] == '\\' && k + 1 < joined.size() &&
                     (joined[k + 1] == 'n' || joined[k + 1] == 'r')) {
            text += '\n';
            ++k;
          } else {
            text += joined[k];
          }
        }
        judge.JudgeScript(text, depth + 1);
      }
      return;
    }
    const bool takes = t == "-S" || t == "-c" || t == "-e" || t == "-h" || t == "-p" || t == "-s" ||
                       t == "-T" || t == "-t" || t == "-Logfile" ||
                       (t.size() > 1 && t.back() == 'S' && t[1] != '-');
    i += takes ? 2 : 1;
  }
  if (i < v.args.size()) {
    CommandView run = v;
    run.name_word = v.args[i];
    run.name = Basename(v.args[i]->text);
    run.args.assign(v.args.begin() + static_cast<std::ptrdiff_t>(i + 1), v.args.end());
    judge.JudgeArgv(run, depth + 1);
  }
}

// ---- at / batch ----------------------------------------------------------------------------

void JudgeAt(Judge& judge, const CommandView& v, int depth) {
  const ShellWord* file = nullptr;
  for (size_t i = 0; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    if (!IsOption(t)) continue;
    if (t == "-l" || t == "-r" || t == "-d" || t == "-c" || t == "-V" || t == "--help") return;
    if (t == "-f" && i + 1 < v.args.size()) file = v.args[++i];
    if (t == "-q" || t == "-t") ++i;
  }
  judge.Add("scheduled_command", "command queued to run later, unattended (at, batch)",
            GuardTier::kDangerous);
  for (const std::string& text : StdinTexts(v)) judge.JudgeScript(text, depth + 1);
  if (file != nullptr) {
    if (auto text = WrittenEarlier(v, file->text)) judge.JudgeScript(*text, depth + 1);
  }
}

// ---- make ----------------------------------------------------------------------------------

// Recipe lines and $(shell ...) of makefile text: each is shell code make runs.
void JudgeMakefileText(Judge& judge, std::string_view text, int depth) {
  size_t start = 0;
  for (int n = 0; start <= text.size() && n < 2000; ++n) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    std::string_view recipe;
    if (line.starts_with('\t')) {
      recipe = line.substr(1);
    } else {
      const size_t colon = line.find(':');
      const size_t semi = line.find(';', colon == std::string_view::npos ? 0 : colon);
      if (colon != std::string_view::npos && semi != std::string_view::npos &&
          line.substr(colon, 2) != ":=") {
        recipe = line.substr(semi + 1);
      }
    }
    while (recipe.starts_with('@') || recipe.starts_with('-') || recipe.starts_with('+')) {
      recipe.remove_prefix(1);
    }
    const size_t shell = line.find("$(shell ");
    if (!Trim(recipe).empty() || shell != std::string_view::npos) {
      judge.Add("make_recipe", "make recipe given on the command line or written in it",
                GuardTier::kDangerous);
    }
    if (!Trim(recipe).empty()) judge.JudgeScript(recipe, depth + 1);
    if (shell != std::string_view::npos) {
      const size_t close = line.find(')', shell);
      judge.JudgeScript(
          line.substr(shell + 8,
                      close == std::string_view::npos ? std::string_view::npos : close - shell - 8),
          depth + 1);
    }
  }
}

void JudgeMake(Judge& judge, const CommandView& v, int depth) {
  auto makefile = [&](std::string_view f, const ShellWord* w) {
    if (f == "-" || f == "/dev/stdin" || (w != nullptr && w->Has(kWordProcessSubst))) {
      judge.Add("make_recipe", "make recipe given on the command line or written in it",
                GuardTier::kDangerous);
      for (const std::string& text : StdinTexts(v)) JudgeMakefileText(judge, text, depth);
      return;
    }
    if (auto text = WrittenEarlier(v, f)) {
      judge.Add("make_recipe", "make recipe given on the command line or written in it",
                GuardTier::kDangerous);
      JudgeMakefileText(judge, *text, depth);
    }
  };
  for (size_t i = 0; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    if ((t == "--eval" || t == "-E") && i + 1 < v.args.size()) {
      JudgeMakefileText(judge, v.args[++i]->text, depth);
    } else if (t.starts_with("--eval=")) {
      JudgeMakefileText(judge, t.substr(7), depth);
    } else if ((t == "-f" || t == "--file" || t == "--makefile") && i + 1 < v.args.size()) {
      ++i;
      makefile(v.args[i]->text, v.args[i]);
    } else if (t.starts_with("--file=") || t.starts_with("--makefile=")) {
      makefile(t.substr(t.find('=') + 1), nullptr);
    } else if (t.starts_with("-f") && t.size() > 2) {
      makefile(t.substr(2), nullptr);
    } else if (t.starts_with("SHELL=") || t.starts_with(".SHELLFLAGS=")) {
      ShellPayload(judge, "make_recipe", "make recipe given on the command line or written in it",
                   t.substr(t.find('=') + 1), depth);
    }
  }
}

// ---- database shells ------------------------------------------------------------------------

constexpr std::string_view kDbRule = "db_shell_escape";
constexpr std::string_view kDbText = "database shell command that runs a program";

void JudgeDbText(Judge& judge, std::string_view text, int depth) {
  size_t start = 0;
  for (int n = 0; start <= text.size() && n < 2000; ++n) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = Trim(text.substr(start, end - start));
    start = end + 1;
    // psql \! and mysql \!, psql \o |cmd, \g |cmd, \w |cmd; sqlite .shell/.system,
    // .output/.once |cmd, .load (a shared library); mysql system; COPY ... PROGRAM.
    for (size_t at = line.find('\\'); at != std::string_view::npos; at = line.find('\\', at + 1)) {
      std::string_view rest = line.substr(at + 1);
      if (rest.starts_with('!')) {
        ShellPayload(judge, kDbRule, kDbText, Trim(rest.substr(1)), depth);
        break;
      }
      if (TakeKeyword(rest, {"o", "out", "g", "w", "write", "gexec"}) && rest.starts_with('|')) {
        ShellPayload(judge, kDbRule, kDbText, Trim(rest.substr(1)), depth);
        break;
      }
    }
    std::string_view rest = line;
    if (rest.starts_with('.')) {
      rest.remove_prefix(1);
      if (TakeKeyword(rest, {"shell", "system"})) {
        ShellPayload(judge, kDbRule, kDbText, rest, depth);
      } else if (TakeKeyword(rest, {"output", "once", "import"})) {
        if (rest.starts_with("'|") || rest.starts_with("\"|")) rest.remove_prefix(1);
        if (rest.starts_with('|')) ShellPayload(judge, kDbRule, kDbText, rest.substr(1), depth);
      } else if (TakeKeyword(rest, {"load"})) {
        judge.Add(kDbRule, kDbText, GuardTier::kDangerous);
      }
    } else if (TakeKeyword(rest, {"system", "SYSTEM"})) {
      ShellPayload(judge, kDbRule, kDbText, rest, depth);
    }
    std::string lower(line);
    for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    const size_t program = lower.find(" program ");
    if (program != std::string::npos && (lower.find("copy") != std::string::npos)) {
      ShellPayload(judge, kDbRule, kDbText, FirstQuoted(line.substr(program)), depth);
    }
  }
}

void JudgeDbShell(Judge& judge, const CommandView& v, int depth) {
  for (size_t i = 0; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    if ((t == "-c" || t == "-e" || t == "--command" || t == "--execute" || t == "-cmd" ||
         t == "-Q" || t == "-q") &&
        i + 1 < v.args.size()) {
      JudgeDbText(judge, v.args[++i]->text, depth);
    } else if (t.starts_with("--command=") || t.starts_with("--execute=")) {
      JudgeDbText(judge, t.substr(t.find('=') + 1), depth);
    } else if (t.starts_with("--pager=") && t.size() > 8) {
      ShellPayload(judge, kDbRule, kDbText, t.substr(8), depth);
    } else if (!IsOption(t)) {
      JudgeDbText(judge, t, depth);  // sqlite3 DB 'SQL or .dot command'
    }
  }
  for (const std::string& text : StdinTexts(v)) JudgeDbText(judge, text, depth);
}

bool IsDbShell(std::string_view n) {
  return n == "psql" || n == "mysql" || n == "mariadb" || n == "sqlite3" || n == "sqlite" ||
         n == "duckdb" || n == "pgcli" || n == "mycli" || n == "litecli" || n == "usql";
}

}  // namespace

void JudgeCarrierRules(Judge& judge, const CommandView& v, int depth) {
  const std::string_view n = v.name;
  if (n == "trap") {
    // trap [-lp] [[ACTION] SIGNAL...]: ACTION runs when a signal (or EXIT, ERR, DEBUG,
    // RETURN) arrives; it is judged as the code it is.
    size_t i = 0;
    while (i < v.args.size() && IsOption(v.args[i]->text) && v.args[i]->text != "-") {
      if (v.args[i]->text == "-l" || v.args[i]->text == "-p") return;
      if (v.args[i]->text == "--") {
        ++i;
        break;
      }
      ++i;
    }
    if (i + 1 < v.args.size()) judge.JudgeScript(v.args[i]->text, depth + 1);
  } else if (n == "alias") {
    for (const ShellWord* w : v.args) {
      const size_t eq = w->text.find('=');
      if (eq == std::string::npos || IsOption(w->text)) continue;
      ShellPayload(judge, "alias_definition", "alias definition (replaces a command's meaning)",
                   std::string_view(w->text).substr(eq + 1), depth);
    }
  } else if (n == "tmux") {
    JudgeTmux(judge, v, depth);
  } else if (n == "screen") {
    JudgeScreen(judge, v, depth);
  } else if (n == "at" || n == "batch") {
    JudgeAt(judge, v, depth);
  } else if (n == "make" || n == "gmake" || n == "remake") {
    JudgeMake(judge, v, depth);
  } else if (n == "vi" || n == "vim" || n == "nvim" || n == "view" || n == "vimdiff" ||
             n == "gvim" || n == "ex" || n == "rvim" || n == "evim" || n == "nvi" || n == "elvis") {
    JudgeVim(judge, v, depth);
  } else if (n == "ed" || n == "red") {
    JudgeEd(judge, v, depth);
  } else if (n == "gdb" || n == "lldb" || n == "cgdb" || n == "gdb-multiarch") {
    JudgeDebugger(judge, v, depth);
  } else if (IsDbShell(n)) {
    JudgeDbShell(judge, v, depth);
  }
}

}  // namespace talaria::safety::guard
