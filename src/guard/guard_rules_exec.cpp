// Code handed to something that runs it: shells (-c strings, heredocs, pipes, process
// substitutions), interpreters (never safe with inline or stdin code; the code itself is looked
// into by guard_interpreter_code.cpp), awk system(), eval, source, sed's e command and s///e
// (the text they run judged as a shell command) and in-place edits, program-running flags of
// harmless tools (sort --compress-program, rg --pre, man -P, tar --to-command, ...), data
// leaving through substitutions in network commands; and the whole-script rules (fork bombs,
// chmod +x then run).
#include <array>
#include <functional>
#include <initializer_list>

#include "guard/guard_internal.h"
#include "talaria/base/ascii.h"

namespace talaria::safety::guard {
namespace {

constexpr std::array<std::string_view, 10> kDownloaders = {
    "curl", "wget", "fetch", "aria2c", "http", "https", "nc", "ncat", "socat", "lynx"};

// Interpreter families: the short flags whose value is inline code, and those taking a value.
struct Interpreter {
  std::string_view prefix;
  std::string_view inline_flags;
  std::string_view value_flags;
  std::initializer_list<std::string_view> inline_long;
  bool in_place;  // -i edits the file operands
};

const Interpreter* FindInterpreter(std::string_view name) {
  static const std::array<Interpreter, 16> kInterpreters = {{
      {"python", "c", "mWXQ", {"--command"}, false},
      {"pypy", "c", "mWXQ", {}, false},
      {"perl", "eE", "IMmlx", {}, true},
      {"ruby", "e", "IrCEF", {}, true},
      {"node", "ep", "r", {"--eval", "--print"}, false},
      {"nodejs", "ep", "r", {"--eval", "--print"}, false},
      {"bun", "e", "r", {"--eval", "--print"}, false},
      {"deno", "", "", {}, false},
      {"php", "rBRE", "cdfzF", {}, false},
      {"lua", "e", "l", {}, false},
      {"luajit", "e", "l", {}, false},
      {"Rscript", "e", "", {}, false},
      {"julia", "eE", "", {"--eval", "--print"}, false},
      {"pwsh", "ce", "", {"-command", "-encodedcommand", "-enc", "-ec"}, false},
      {"powershell", "ce", "", {"-command", "-encodedcommand", "-enc", "-ec"}, false},
      {"osascript", "e", "", {}, false},
  }};
  for (const Interpreter& in : kInterpreters) {
    if (!name.starts_with(in.prefix)) continue;
    const std::string_view rest = name.substr(in.prefix.size());
    // python3, python3.11, perl5.36, lua5.4; not "pythonic-tool"
    if (rest.find_first_not_of("0123456789.") == std::string_view::npos) return &in;
  }
  if (name == "tclsh" || name == "wish" || name == "irb" || name == "jshell" || name == "groovy") {
    static const Interpreter kPlain{"", "", "", {}, false};
    return &kPlain;
  }
  return nullptr;
}

void TalariaHomeCode(Judge& judge) {
  judge.Add("write_talaria_home",
            "modify talaria's own state ($TALARIA_HOME: config, approvals, trust, audit)",
            GuardTier::kHardline);
}

void ProgramFlag(Judge& judge, std::string_view program, int depth) {
  judge.Add("program_flag", "tool option that runs another program", GuardTier::kDangerous);
  if (!program.empty()) judge.JudgeScript(program, depth + 1);
}

void DownloadThenRun(Judge& judge) {
  judge.Add("download_then_execute", "file downloaded and then run in the same command line",
            GuardTier::kDangerous);
}

bool IsStdinPath(std::string_view t) {
  return t == "-" || t == "/dev/stdin" || t == "/dev/fd/0" || t == "/proc/self/fd/0";
}

// A program read from stdin by a shell (`shell` true) or an interpreter of `family`.
void JudgeStdinProgram(Judge& judge, const CommandView& v, bool shell, int depth,
                       std::string_view family = {}) {
  if (!v.stdin_is_data || v.cmd == nullptr) return;
  for (const Redirection& r : v.cmd->redirections) {
    if (r.op != RedirectOp::kHeredoc && r.op != RedirectOp::kHereString) continue;
    if (shell) {
      judge.Add("shell_heredoc", "script fed to a shell via heredoc or here-string",
                GuardTier::kDangerous);
      judge.JudgeScript(r.op == RedirectOp::kHeredoc ? std::string_view(r.heredoc_body)
                                                     : std::string_view(r.target.text),
                        depth + 1);
    } else {
      judge.Add("interpreter_stdin", "interpreter reading its program from stdin",
                GuardTier::kDangerous);
      JudgeInterpreterCode(judge, family,
                           r.op == RedirectOp::kHeredoc ? std::string_view(r.heredoc_body)
                                                        : std::string_view(r.target.text),
                           depth);
    }
  }
  if (!v.cmd->stdin_piped && v.via != "xargs") return;
  if (v.via == "xargs") return;
  bool remote = false;
  if (v.script != nullptr) {
    for (const SimpleCommand& c : v.script->commands) {
      if (c.pipeline != v.cmd->pipeline || c.pipe_pos >= v.cmd->pipe_pos) continue;
      for (size_t i = 0; i < c.argv.size() && i < 8; ++i) {
        if (OneOf(Basename(c.argv[i].text), kDownloaders)) remote = true;
      }
      if (shell && c.pipe_pos + 1 == v.cmd->pipe_pos && !c.argv.empty()) {
        const std::string_view up = Basename(c.argv[0].text);
        if (up == "echo" || up == "printf") {
          std::string text;
          for (size_t i = 1; i < c.argv.size(); ++i) {
            if (up == "echo" && i == 1 && IsOption(c.argv[i].text)) continue;
            if (!text.empty()) text += ' ';
            text += c.argv[i].text;
            if (up == "printf") break;
          }
          judge.JudgeScript(text, depth + 1);
        }
        for (const Redirection& r : c.redirections) {
          if (r.op == RedirectOp::kHeredoc) judge.JudgeScript(r.heredoc_body, depth + 1);
          if (r.op == RedirectOp::kHereString) judge.JudgeScript(r.target.text, depth + 1);
        }
      }
    }
  }
  if (remote) {
    judge.Add("remote_code_execution", "download piped into a shell or interpreter",
              GuardTier::kDangerous);
  }
  if (shell) {
    judge.Add("pipe_to_shell", "pipe into a shell", GuardTier::kDangerous);
  } else {
    judge.Add("interpreter_stdin", "interpreter reading its program from stdin",
              GuardTier::kDangerous);
  }
}

void JudgeShell(Judge& judge, const CommandView& v, int depth) {
  bool has_c = false;
  bool stdin_flag = false;
  size_t i = 0;
  while (i < v.args.size()) {
    const std::string_view t = v.args[i]->text;
    if (t == "--" || t == "-") {
      ++i;
      stdin_flag = stdin_flag || t == "-";
      break;
    }
    if (t.starts_with("--")) {
      if (t == "--rcfile" || t == "--init-file") ++i;
      ++i;
      continue;
    }
    if (t.size() > 1 && (t[0] == '-' || t[0] == '+')) {
      bool takes_next = false;
      for (size_t k = 1; k < t.size(); ++k) {
        if (t[k] == 'c') has_c = true;
        if (t[k] == 's') stdin_flag = true;
        if (t[k] == 'o' || t[k] == 'O') takes_next = true;
      }
      i += takes_next ? 2 : 1;
      continue;
    }
    break;
  }
  if (has_c) {
    if (i < v.args.size()) judge.JudgeScript(v.args[i]->text, depth + 1);
    return;
  }
  if (i < v.args.size() && !stdin_flag) {
    const ShellWord* script = v.args[i];
    if (script->Has(kWordProcessSubst) || script->Has(kWordCommandSubst)) {
      judge.Add("shell_process_substitution", "shell or interpreter running a process substitution",
                GuardTier::kDangerous);
      return;
    }
    if (!IsStdinPath(script->text)) {
      // A script file; when an earlier command of the line wrote it, what it wrote runs.
      if (DownloadedEarlier(v, script->text)) DownloadThenRun(judge);
      if (auto text = WrittenEarlier(v, script->text); text && !text->empty()) {
        judge.JudgeScript(*text, depth + 1);
      }
      return;
    }
  }
  JudgeStdinProgram(judge, v, true, depth);
}

void JudgeInterpreter(Judge& judge, const CommandView& v, const Interpreter& in, int depth) {
  bool inline_code = false;
  bool in_place = false;
  const ShellWord* script = nullptr;
  std::vector<std::string_view> codes;  // the inline programs, to look inside
  size_t i = 0;
  if (v.name == "deno" && !v.args.empty()) {
    if (v.args[0]->text == "eval") {
      inline_code = true;
      if (v.args.size() >= 2) codes.push_back(v.args[1]->text);
    }
    i = v.args.size();
  }
  for (; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    if (t == "--") {
      if (i + 1 < v.args.size()) script = v.args[i + 1];
      break;
    }
    if (t == "-") break;
    if (!IsOption(t)) {
      script = v.args[i];
      break;
    }
    const std::string lower = AsciiLower(t);
    bool matched_long = false;
    for (std::string_view l : in.inline_long) {
      if (lower == l) {
        inline_code = true;
        matched_long = true;
        if (i + 1 < v.args.size()) codes.push_back(v.args[++i]->text);
      } else if (lower.starts_with(l) && lower.size() > l.size() && lower[l.size()] == '=') {
        inline_code = true;
        matched_long = true;
        codes.push_back(t.substr(l.size() + 1));
      }
    }
    if (matched_long || t.starts_with("--")) {
      if (in.prefix == "python" || in.prefix == "pypy") {
        // python has no long options taking separate values worth tracking
      }
      continue;
    }
    if (in.prefix == "python" || in.prefix == "pypy") {
      const size_t m = t.find('m');
      if (m != std::string_view::npos && t.find_first_of(in.inline_flags) > m) {
        // -m MODULE: python -m pip uninstall ... is judged as pip
        const size_t mod_index = m + 1 < t.size() ? i : i + 1;
        const std::string_view module =
            m + 1 < t.size() ? t.substr(m + 1)
                             : (i + 1 < v.args.size() ? std::string_view(v.args[i + 1]->text) : "");
        if (module == "pip" || module == "pip3") {
          CommandView sub = v;
          sub.name = "pip";
          sub.args.assign(v.args.begin() + static_cast<std::ptrdiff_t>(mod_index + 1),
                          v.args.end());
          judge.JudgeArgv(sub, depth + 1);
        }
        return;
      }
    }
    for (size_t k = 1; k < t.size(); ++k) {
      const char c = t[k];
      if (in.inline_flags.find(c) != std::string_view::npos) {
        inline_code = true;
        if (k + 1 == t.size()) {
          if (i + 1 < v.args.size()) codes.push_back(v.args[i + 1]->text);
          ++i;  // the code is the next word
        } else {
          codes.push_back(t.substr(k + 1));  // -c'code'
        }
        break;
      }
      if (in.in_place && c == 'i') {
        in_place = true;
        break;  // the rest is a backup suffix
      }
      if (in.value_flags.find(c) != std::string_view::npos) {
        if (k + 1 == t.size()) ++i;
        break;
      }
    }
  }
  const std::string_view family = in.prefix.empty() ? std::string_view(v.name) : in.prefix;
  if (inline_code) {
    judge.Add("interpreter_inline_code", "inline interpreter code (-c/-e)", GuardTier::kDangerous);
    for (std::string_view code : codes) {
      JudgeInterpreterCode(judge, family, code, depth);
      if (CodeModifiesTalariaHome(judge, code)) TalariaHomeCode(judge);
    }
  }
  if (in_place) {
    bool code_skipped = !inline_code;
    for (size_t k = 0; k < v.args.size(); ++k) {
      const std::string_view t = v.args[k]->text;
      if (IsOption(t)) {
        if (t.find_first_of(in.inline_flags) != std::string_view::npos &&
            t.find_last_of(in.inline_flags) + 1 == t.size()) {
          ++k;  // skip the code word
          code_skipped = true;
        }
        continue;
      }
      if (code_skipped) CheckWriteTarget(judge, *v.args[k]);
    }
  }
  if (inline_code) return;
  if (script != nullptr) {
    if (script->Has(kWordProcessSubst) || script->Has(kWordCommandSubst)) {
      judge.Add("shell_process_substitution", "shell or interpreter running a process substitution",
                GuardTier::kDangerous);
      return;
    }
    if (!IsStdinPath(script->text)) {
      if (DownloadedEarlier(v, script->text)) DownloadThenRun(judge);
      if (auto text = WrittenEarlier(v, script->text); text && !text->empty()) {
        JudgeInterpreterCode(judge, family, *text, depth);
      }
      return;
    }
  }
  JudgeStdinProgram(judge, v, false, depth, family);
}

void JudgeAwk(Judge& judge, const CommandView& v) {
  std::string_view program;
  bool from_file = false;
  for (size_t i = 0; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    if (t == "-f" || t == "--file" || t.starts_with("--file=")) from_file = true;
    if (t == "-e" || t == "--source") {
      if (i + 1 < v.args.size()) program = v.args[i + 1]->text;
      break;
    }
    if (t == "-F" || t == "-v" || t == "-f" || t == "-i" || t == "-l" || t == "--assign" ||
        t == "--field-separator" || t == "--include" || t == "--load" || t == "--file") {
      ++i;
      continue;
    }
    if (IsOption(t)) continue;
    if (!from_file) program = t;
    break;
  }
  bool runs = program.find("system") != std::string_view::npos;
  for (size_t i = 0; i < program.size() && !runs; ++i) {
    if (program[i] != '|') continue;
    const bool double_bar =
        (i + 1 < program.size() && program[i + 1] == '|') || (i > 0 && program[i - 1] == '|');
    if (!double_bar) runs = true;
  }
  if (CodeModifiesTalariaHome(judge, program)) TalariaHomeCode(judge);
  if (runs) {
    judge.Add("awk_command", "awk program that runs commands (system, pipes)",
              GuardTier::kDangerous);
  }
}

// The replacement of s/// as the shell would get it from the e flag: \<delim>, \\ and \n
// unescaped; & (the matched text) left as is.
std::string SedReplacementText(std::string_view r, char delim) {
  std::string out;
  out.reserve(r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    if (r[i] == '\\' && i + 1 < r.size()) {
      const char c = r[++i];
      out += c == 'n' ? '\n' : c == 't' ? '\t' : c == delim ? delim : c;
      continue;
    }
    out += r[i];
  }
  return out;
}

// sed script: the e command or s///e flag executes; w writes a file. The text `e COMMAND`
// runs, and for s///e the replacement (the pattern space it produces), go to `commands`.
bool SedExecutes(std::string_view s, std::vector<std::string>& writes,
                 std::vector<std::string>& commands) {
  size_t i = 0;
  const size_t n = s.size();
  bool executes = false;
  auto skip_delimited = [&](char delim) {
    while (i < n && s[i] != delim) {
      if (s[i] == '\\') ++i;
      ++i;
    }
    if (i < n) ++i;
  };
  auto rest_of_line = [&]() {
    while (i < n && (s[i] == ' ' || s[i] == '\t')) ++i;
    const size_t start = i;
    while (i < n && s[i] != '\n') ++i;
    return std::string(s.substr(start, i - start));
  };
  for (int steps = 0; i < n && steps < 10000; ++steps) {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == ';' || s[i] == '\n' || s[i] == '{' ||
                     s[i] == '}')) {
      ++i;
    }
    if (i >= n) break;
    for (int addr = 0; addr < 2 && i < n; ++addr) {
      if (s[i] >= '0' && s[i] <= '9') {
        while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '~')) ++i;
      } else if (s[i] == '$') {
        ++i;
      } else if (s[i] == '/') {
        ++i;
        skip_delimited('/');
        while (i < n && (s[i] == 'I' || s[i] == 'M')) ++i;
      } else if (s[i] == '\\' && i + 1 < n) {
        const char d = s[i + 1];
        i += 2;
        skip_delimited(d);
      } else {
        break;
      }
      if (i < n && s[i] == ',') {
        ++i;
        continue;
      }
      break;
    }
    while (i < n && (s[i] == ' ' || s[i] == '!')) ++i;
    if (i >= n) break;
    const char cmd = s[i++];
    switch (cmd) {
      case 'e': {
        executes = true;
        std::string command = rest_of_line();  // empty: runs the pattern space (unknown)
        if (!command.empty()) commands.push_back(std::move(command));
        break;
      }
      case 's': {
        if (i >= n) break;
        const char d = s[i++];
        skip_delimited(d);
        const size_t repl_start = i;
        skip_delimited(d);
        const size_t repl_end = i > repl_start && i <= n && s[i - 1] == d ? i - 1 : i;
        while (i < n && s[i] != ';' && s[i] != '\n' && s[i] != '}') {
          if (s[i] == 'e') {
            executes = true;
            commands.push_back(SedReplacementText(s.substr(repl_start, repl_end - repl_start), d));
          }
          if (s[i] == 'w') {
            ++i;
            writes.push_back(rest_of_line());
            break;
          }
          ++i;
        }
        break;
      }
      case 'y': {
        if (i >= n) break;
        const char d = s[i++];
        skip_delimited(d);
        skip_delimited(d);
        break;
      }
      case 'w':
      case 'W':
        writes.push_back(rest_of_line());
        break;
      case 'r':
      case 'R':
      case 'a':
      case 'i':
      case 'c':
      case '#':
      case ':':
      case 'b':
      case 't':
      case 'T':
        rest_of_line();
        break;
      default:
        break;
    }
  }
  return executes;
}

void JudgeSed(Judge& judge, const CommandView& v, int depth) {
  std::vector<std::string_view> scripts;
  std::vector<const ShellWord*> operands;
  bool in_place = false;
  bool script_from_option = false;
  for (size_t i = 0; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    if (t == "-e" || t == "--expression") {
      if (i + 1 < v.args.size()) scripts.push_back(v.args[++i]->text);
      script_from_option = true;
    } else if (t.starts_with("--expression=")) {
      scripts.push_back(t.substr(13));
      script_from_option = true;
    } else if (t == "-f" || t == "--file") {
      ++i;
      script_from_option = true;
    } else if (t.starts_with("--in-place") || t == "-i" ||
               (t.size() > 1 && t[0] == '-' && t[1] != '-' &&
                t.find('i') != std::string_view::npos && t.find('e') == std::string_view::npos)) {
      in_place = true;
    } else if (t.size() > 2 && t[0] == '-' && t[1] != '-' &&
               t.find('e') != std::string_view::npos) {
      const size_t e = t.find('e');
      if (t.substr(1, e - 1).find('i') != std::string_view::npos) in_place = true;
      if (e + 1 < t.size()) {
        scripts.push_back(t.substr(e + 1));
      } else if (i + 1 < v.args.size()) {
        scripts.push_back(v.args[++i]->text);
      }
      script_from_option = true;
    } else if (IsOption(t)) {
      if (t == "-l" || t == "--line-length") ++i;
    } else {
      operands.push_back(v.args[i]);
    }
  }
  if (!script_from_option && !operands.empty()) {
    scripts.push_back(operands.front()->text);
    operands.erase(operands.begin());
  }
  std::vector<std::string> writes;
  std::vector<std::string> commands;
  bool exec = false;
  for (std::string_view s : scripts) exec = SedExecutes(s, writes, commands) || exec;
  if (exec) {
    judge.Add("sed_execute", "sed script that executes commands", GuardTier::kDangerous);
  }
  for (const std::string& c : commands) judge.JudgeScript(c, depth + 1);
  for (const std::string& w : writes) {
    if (w == "/dev/stdout" || w == "/dev/stderr") continue;
    CheckWriteTarget(judge, ShellWord{w, kWordTilde});
  }
  if (in_place) {
    for (const ShellWord* w : operands) CheckWriteTarget(judge, *w);
  }
}

// Value of --name=VALUE or --name VALUE (or -x VALUE / -xVALUE for `shortopt`).
void ForEachOptionValue(const CommandView& v, std::string_view long_name,
                        std::string_view short_name,
                        const std::function<void(std::string_view)>& fn) {
  for (size_t i = 0; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    if (!long_name.empty() && t.starts_with(long_name)) {
      if (t.size() == long_name.size()) {
        if (i + 1 < v.args.size()) fn(v.args[i + 1]->text);
      } else if (t[long_name.size()] == '=') {
        fn(t.substr(long_name.size() + 1));
      }
    } else if (!short_name.empty() && t.starts_with(short_name)) {
      if (t.size() == short_name.size()) {
        if (i + 1 < v.args.size()) fn(v.args[i + 1]->text);
      } else {
        fn(t.substr(short_name.size()));
      }
    }
  }
}

void JudgeNetwork(Judge& judge, const CommandView& v) {
  bool leaks = false;
  for (const ShellWord* w : v.args) {
    if (w->Has(kWordCommandSubst) || w->Has(kWordProcessSubst)) leaks = true;
  }
  // Also stdin built from a substitution: nc host 80 <<< $(cat secret).
  if (v.cmd != nullptr) {
    for (const Redirection& r : v.cmd->redirections) {
      if (r.op == RedirectOp::kHereString && r.target.Has(kWordCommandSubst)) leaks = true;
      if (r.op == RedirectOp::kHeredoc && r.heredoc_expands &&
          (r.heredoc_body.find("$(") != std::string::npos ||
           r.heredoc_body.find('`') != std::string::npos)) {
        leaks = true;
      }
    }
  }
  if (leaks) {
    judge.Add("network_exfiltration",
              "command substitution in a network command's arguments (data exfiltration)",
              GuardTier::kDangerous);
  }
  if (v.name == "curl" || v.name == "wget") {
    auto write = [&](std::string_view p) {
      CheckWriteTarget(judge, ShellWord{std::string(p), kWordTilde});
    };
    if (v.name == "curl") {
      ForEachOptionValue(v, "--output", "-o", write);
    } else {
      ForEachOptionValue(v, "--output-document", "-O", write);
    }
    // Uploads of credential files: -d @file, -F x=@file, -T file.
    auto upload = [&](std::string_view value) {
      const size_t at = value.find('@');
      std::string_view path = at == std::string_view::npos ? value : value.substr(at + 1);
      const size_t semi = path.find(';');
      if (semi != std::string_view::npos) path = path.substr(0, semi);
      if (path.empty()) return;
      if (ClassifyWrite(judge.ResolveText(path, kWordTilde))) {
        judge.Add("upload_credentials", "upload of a credential or config file",
                  GuardTier::kDangerous);
      }
    };
    for (std::string_view opt : {"--data", "--data-binary", "--data-raw", "--data-urlencode",
                                 "--form", "--upload-file", "--post-file", "--body-file"}) {
      ForEachOptionValue(v, opt, "", upload);
    }
    for (std::string_view opt : {"-d", "-F", "-T"}) ForEachOptionValue(v, "", opt, upload);
  }
}

void JudgeProgramFlags(Judge& judge, const CommandView& v, int depth) {
  const std::string_view n = v.name;
  auto flag = [&](std::string_view program) { ProgramFlag(judge, program, depth); };
  if (n == "sort") {
    ForEachOptionValue(v, "--compress-program", "", flag);
  } else if (n == "rg") {
    ForEachOptionValue(v, "--pre", "", flag);
    ForEachOptionValue(v, "--hostname-bin", "", flag);
  } else if (n == "ag") {
    ForEachOptionValue(v, "--pager", "", flag);
  } else if (n == "man") {
    ForEachOptionValue(v, "--pager", "-P", flag);
    ForEachOptionValue(v, "--html", "", flag);
    for (const ShellWord* w : v.args) {
      if (w->text.starts_with("-H")) flag(w->text.substr(2));
    }
  } else if (n == "tar") {
    ForEachOptionValue(v, "--to-command", "", flag);
    ForEachOptionValue(v, "--use-compress-program", "-I", flag);
    ForEachOptionValue(v, "--info-script", "", flag);
    ForEachOptionValue(v, "--new-volume-script", "", flag);
    ForEachOptionValue(v, "--checkpoint-action", "", [&](std::string_view a) {
      if (a.starts_with("exec=")) flag(a.substr(5));
    });
  } else if (n == "zip") {
    ForEachOptionValue(v, "--unzip-command", "-TT", flag);
  } else if (n == "rsync") {
    ForEachOptionValue(v, "--rsh", "-e", [&](std::string_view p) {
      if (!p.starts_with("ssh")) flag(p);
    });
  } else if (n == "less" || n == "more") {
    for (const ShellWord* w : v.args) {
      if (w->text.starts_with("+!") || w->text.starts_with("-+!")) flag("");
    }
  }
}

}  // namespace

// The shell and network-tool lists live in the ProgramTraits table (guard_dispatch.cpp).
bool IsShell(std::string_view name) { return (ProgramTraits(name) & kTraitShell) != 0; }
bool IsInterpreter(std::string_view name) { return FindInterpreter(name) != nullptr; }
bool IsNetworkTool(std::string_view name) { return (ProgramTraits(name) & kTraitNetworkTool) != 0; }

void JudgeExecRules(Judge& judge, const CommandView& v, int depth) {
  const std::string_view n = v.name;
  if ((v.traits & kTraitShell) != 0) {
    JudgeShell(judge, v, depth);
  } else if (const Interpreter* in = FindInterpreter(n)) {
    JudgeInterpreter(judge, v, *in, depth);
  } else if (n == "awk" || n == "gawk" || n == "mawk" || n == "nawk") {
    JudgeAwk(judge, v);
  } else if (n == "eval") {
    std::string text;
    bool dynamic = false;
    for (const ShellWord* w : v.args) {
      if (!text.empty()) text += ' ';
      text += w->text;
      if (!w->IsLiteral()) dynamic = true;
    }
    if (dynamic) judge.Add("eval_dynamic", "eval of dynamic content", GuardTier::kDangerous);
    judge.JudgeScript(text, depth + 1);
  } else if (n == "source" || n == ".") {
    if (!v.args.empty()) {
      const ShellWord* f = v.args[0];
      if (DownloadedEarlier(v, f->text)) DownloadThenRun(judge);
      if (auto text = WrittenEarlier(v, f->text); text && !text->empty()) {
        judge.JudgeScript(*text, depth + 1);
      }
      if (f->Has(kWordProcessSubst) || f->Has(kWordCommandSubst) || IsStdinPath(f->text)) {
        judge.Add("source_dynamic", "source of a process substitution or stdin",
                  GuardTier::kDangerous);
      }
    }
  } else if (n == "sed" || n == "gsed") {
    JudgeSed(judge, v, depth);
  } else {
    JudgeProgramFlags(judge, v, depth);
  }
  if ((v.traits & kTraitNetworkTool) != 0) JudgeNetwork(judge, v);
}

namespace {

std::string_view StripDotSlash(std::string_view p) {
  while (p.starts_with("./")) p.remove_prefix(2);
  return p;
}

bool ModeAddsExec(std::string_view m) {
  if (!m.empty() && m.find_first_not_of("01234567") == std::string_view::npos) {
    return m.find_first_of("1357") != std::string_view::npos;
  }
  const size_t plus = m.find_first_of("+=");
  return plus != std::string_view::npos && m.find('x', plus) != std::string_view::npos;
}

}  // namespace

void JudgeScriptRules(Judge& judge, const ParsedScript& script, int /*depth*/) {
  std::vector<std::string_view> made_executable;
  for (const SimpleCommand& c : script.commands) {
    if (c.argv.empty()) continue;
    const std::string_view name = c.argv[0].text;
    // Fork bomb: a function that calls itself in a pipeline or in the background.
    if (!c.function.empty() && name == c.function && (c.in_pipeline || c.background)) {
      judge.Add("fork_bomb", "fork bomb", GuardTier::kHardline, c.segment);
    }
    if (Basename(name) == "chmod" && c.argv.size() >= 3) {
      size_t k = 1;
      while (k < c.argv.size() && IsOption(c.argv[k].text) && !ModeAddsExec(c.argv[k].text)) ++k;
      if (k < c.argv.size() && ModeAddsExec(c.argv[k].text)) {
        for (size_t m = k + 1; m < c.argv.size(); ++m) {
          made_executable.push_back(StripDotSlash(c.argv[m].text));
        }
      }
      continue;
    }
    if (made_executable.empty()) continue;
    std::string_view run = StripDotSlash(name);
    if ((IsShell(Basename(name)) || IsInterpreter(Basename(name))) && c.argv.size() >= 2) {
      run = StripDotSlash(c.argv[1].text);
    }
    for (std::string_view m : made_executable) {
      if (m == run) {
        judge.Add("chmod_then_execute", "make a file executable and run it", GuardTier::kDangerous,
                  c.segment);
      }
    }
  }
}

}  // namespace talaria::safety::guard
