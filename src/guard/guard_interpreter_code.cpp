// Inline interpreter code (python -c, perl -e, ruby -e, node -e, php -r, lua
// -e): a small tokenizer finds string literals and the calls they are passed
// to. Strings handed to the shell (os.system, subprocess.*, os.popen, perl/ruby
// system/exec/backticks/qx, child_process.exec, execSync, spawn, PHP
// shell_exec, lua os.execute) are judged as shell commands; argument lists ([
// "rm", "-rf", "/" ]) as argv; code handed to eval/exec is scanned again;
// deletes of literal paths (shutil.rmtree, os.remove, File::Path rmtree,
// FileUtils.rm_rf, fs.rmSync) are judged like rm. The caller has already marked
// inline code dangerous, so anything this scanner does not understand stays at
// least "approve" (fail closed); it only ever adds reasons.
#include <re2/re2.h>

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "guard/guard_internal.h"
#include "talaria/base/shell_words.h"

namespace talaria::safety::guard {
namespace {

enum class Lang : uint8_t { kPython, kPerl, kRuby, kJs, kPhp, kLua, kOther };

Lang LangOf(std::string_view family) {
  if (family == "python" || family == "pypy") return Lang::kPython;
  if (family == "perl") return Lang::kPerl;
  if (family == "ruby") return Lang::kRuby;
  if (family == "node" || family == "nodejs" || family == "bun" || family == "deno")
    return Lang::kJs;
  if (family == "php") return Lang::kPhp;
  if (family == "lua" || family == "luajit") return Lang::kLua;
  return Lang::kOther;
}

enum class Kind : uint8_t { kIdent, kString, kCommand, kPunct, kOther };

struct Token {
  Kind kind;
  std::string text;  // identifier, decoded string, command text or the
                     // punctuation character
};

// Stands for a value computed at run time inside a string built by
// concatenation. A plain word, so "rm -rf " + d judges as a recursive delete of
// an unknown relative path.
constexpr std::string_view kCodeValue = "__code_value__";
constexpr size_t kMaxTokens = 20000;

bool IsIdentStart(char c) {
  return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }

char ClosingOf(char open) {
  switch (open) {
    case '(':
      return ')';
    case '[':
      return ']';
    case '{':
      return '}';
    case '<':
      return '>';
    default:
      return open;
  }
}

class Tokenizer {
 public:
  Tokenizer(std::string_view code, Lang lang) : s_(code), lang_(lang) {}

  std::vector<Token> Run() {
    std::vector<Token> out;
    while (i_ < s_.size() && out.size() < kMaxTokens) {
      const char c = s_[i_];
      if (c == '\n' && lang_ == Lang::kRuby) {
        out.push_back({Kind::kPunct, ";"});  // ends a statement (and a parenless call)
        ++i_;
      } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++i_;
      } else if (IsLineComment()) {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '*' &&
                 (lang_ == Lang::kJs || lang_ == Lang::kPhp)) {
        const size_t end = s_.find("*/", i_ + 2);
        i_ = end == std::string_view::npos ? s_.size() : end + 2;
      } else if (c == '\'' || c == '"') {
        std::string text = ReadQuoted(c, /*raw=*/false);
        if (unterminated_) break;
        out.push_back({Kind::kString, std::move(text)});
      } else if (c == '`') {
        const bool runs = lang_ == Lang::kPerl || lang_ == Lang::kRuby || lang_ == Lang::kPhp;
        const bool is_template = lang_ == Lang::kJs;
        std::string text = ReadQuoted('`', false);
        if (unterminated_) break;
        if (runs) {
          out.push_back({Kind::kCommand, std::move(text)});
        } else if (is_template) {
          out.push_back({Kind::kString, std::move(text)});
        }
      } else if (c == '%' && lang_ == Lang::kRuby && i_ + 2 < s_.size() &&
                 std::string_view("xwWqQ").find(s_[i_ + 1]) != std::string_view::npos &&
                 !IsIdentChar(s_[i_ + 2]) && s_[i_ + 2] != ' ') {
        const char form = s_[i_ + 1];
        i_ += 2;
        EmitQuoteLike(form == 'x' ? "qx" : (form == 'w' || form == 'W') ? "qw" : "q", out);
      } else if (IsIdentStart(c)) {
        const size_t start = i_;
        while (i_ < s_.size() && IsIdentChar(s_[i_])) ++i_;
        const std::string_view word = s_.substr(start, i_ - start);
        if (i_ < s_.size() && (s_[i_] == '\'' || s_[i_] == '"') && lang_ == Lang::kPython &&
            word.size() <= 2 && word.find_first_not_of("rRbBuUfF") == std::string_view::npos) {
          const bool raw = word.find_first_of("rR") != std::string_view::npos;
          std::string text = ReadQuoted(s_[i_], raw);
          if (unterminated_) break;
          out.push_back({Kind::kString, std::move(text)});
        } else if (lang_ == Lang::kPerl &&
                   (word == "q" || word == "qq" || word == "qw" || word == "qx") &&
                   QuoteLikeFollows()) {
          EmitQuoteLike(word, out);
        } else {
          out.push_back({Kind::kIdent, std::string(word)});
        }
      } else if (c >= '0' && c <= '9') {
        while (i_ < s_.size() && IsIdentChar(s_[i_])) ++i_;
        out.push_back({Kind::kOther, {}});
      } else {
        out.push_back({Kind::kPunct, std::string(1, c)});
        ++i_;
      }
    }
    return out;
  }

 private:
  bool IsLineComment() const {
    const char c = s_[i_];
    const bool slash2 = c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '/';
    switch (lang_) {
      case Lang::kPython:
      case Lang::kRuby:
        return c == '#';
      case Lang::kPerl:
        return c == '#' && (i_ == 0 || s_[i_ - 1] != '$');
      case Lang::kJs:
        return slash2;
      case Lang::kPhp:
        return slash2 || c == '#';
      case Lang::kLua:
        return c == '-' && i_ + 1 < s_.size() && s_[i_ + 1] == '-';
      case Lang::kOther:
        return false;
    }
    return false;
  }

  // Perl q/qq/qw/qx followed by a delimiter (optionally after blanks): q{...},
  // qx(...), q!..!.
  bool QuoteLikeFollows() const {
    size_t k = i_;
    while (k < s_.size() && (s_[k] == ' ' || s_[k] == '\t')) ++k;
    if (k >= s_.size()) return false;
    const char d = s_[k];
    return !IsIdentChar(d) && d != ',' && d != ';' && d != '=' && d != ')' && d != ' ';
  }

  // At the delimiter of a quote-like operator: emits a string, a command or,
  // for qw/%w, a bracketed list of words.
  void EmitQuoteLike(std::string_view form, std::vector<Token>& out) {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
    if (i_ >= s_.size()) return;
    const char open = s_[i_++];
    const char close = ClosingOf(open);
    std::string body;
    int nest = 0;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\\' && i_ + 1 < s_.size()) {
        body += s_[i_ + 1] == close || s_[i_ + 1] == '\\' ? std::string(1, s_[i_ + 1])
                                                          : std::string(s_.substr(i_, 2));
        i_ += 2;
        continue;
      }
      ++i_;
      if (c == open && open != close) ++nest;
      if (c == close) {
        if (nest == 0) break;
        --nest;
      }
      body += c;
    }
    if (form == "qx") {
      out.push_back({Kind::kCommand, std::move(body)});
    } else if (form == "qw") {
      out.push_back({Kind::kPunct, "["});
      size_t start = 0;
      while (start < body.size()) {
        const size_t b = body.find_first_not_of(" \t\n", start);
        if (b == std::string::npos) break;
        const size_t e = std::min(body.find_first_of(" \t\n", b), body.size());
        if (out.back().text != "[") out.push_back({Kind::kPunct, ","});
        out.push_back({Kind::kString, body.substr(b, e - b)});
        start = e;
      }
      out.push_back({Kind::kPunct, "]"});
    } else {
      out.push_back({Kind::kString, std::move(body)});
    }
  }

  // At an opening quote: the decoded literal (Python triple quotes too).
  // Interpolations
  // (#{x}, ${x}, {x}, $x) are kept as written.
  std::string ReadQuoted(char q, bool raw) {
    size_t len = 1;
    if (lang_ == Lang::kPython && i_ + 2 < s_.size() && s_[i_ + 1] == q && s_[i_ + 2] == q) {
      len = 3;
    }
    i_ += len;
    // Single quotes in perl, ruby and php (and lua long strings aside) only
    // escape \\ and \'.
    const bool literal_single =
        q == '\'' && (lang_ == Lang::kPerl || lang_ == Lang::kRuby || lang_ == Lang::kPhp);
    std::string out;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == q && (len == 1 || s_.substr(i_, 3) == std::string(3, q))) {
        i_ += len;
        return out;
      }
      if (c == '\\' && i_ + 1 < s_.size()) {
        const char e = s_[i_ + 1];
        i_ += 2;
        if (raw || (literal_single && e != '\\' && e != '\'')) {
          out += '\\';
          out += e;
          continue;
        }
        switch (e) {
          case 'n':
            out += '\n';
            break;
          case 't':
            out += '\t';
            break;
          case '0':
            out += ' ';
            break;  // NUL would end the C string anyway
          case 'x':
            if (i_ + 1 < s_.size()) {
              auto hex = [](char h) {
                return h >= '0' && h <= '9'   ? h - '0'
                       : h >= 'a' && h <= 'f' ? h - 'a' + 10
                       : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                              : -1;
              };
              const int hi = hex(s_[i_]);
              const int lo = hex(s_[i_ + 1]);
              if (hi >= 0 && lo >= 0) {
                const char v = static_cast<char>(hi * 16 + lo);
                out += v < 0x20 ? ' ' : v;
                i_ += 2;
                break;
              }
            }
            out += 'x';
            break;
          case '\n':
            break;  // line continuation
          default:
            out += e;
            break;
        }
        continue;
      }
      out += c;
      ++i_;
    }
    unterminated_ = true;  // a syntax error: the program never runs
    return out;
  }

  std::string_view s_;
  Lang lang_;
  size_t i_ = 0;
  bool unterminated_ = false;
};

// One argument of a call: a string (literals and run-time values concatenated),
// a list of strings, or something else (a keyword argument, a hash, a number, a
// variable on its own).
struct Arg {
  enum class Type : uint8_t { kString, kList, kOther } type = Type::kOther;
  std::vector<std::string> items;  // one for kString
};

bool IsOpen(const Token& t) {
  return t.kind == Kind::kPunct && (t.text == "(" || t.text == "[" || t.text == "{");
}
bool IsClose(const Token& t) {
  return t.kind == Kind::kPunct && (t.text == ")" || t.text == "]" || t.text == "}");
}
bool IsPunct(const Token& t, std::string_view p) { return t.kind == Kind::kPunct && t.text == p; }

// A string expression in [begin, end): literals joined by + . , adjacency or
// interpolation; identifiers and calls become kCodeValue. kOther when no
// literal is involved, or it is a keyword argument (shell=True), a hash (=> /
// :), or a method called on a literal (" ".join).
Arg StringArg(const std::vector<Token>& t, size_t begin, size_t end) {
  Arg a;
  std::string value;
  bool literal = false;
  for (size_t i = begin; i < end; ++i) {
    const Token& k = t[i];
    if (k.kind == Kind::kString) {
      if (i + 1 < end && IsPunct(t[i + 1], ".") && i + 2 < end && t[i + 2].kind == Kind::kIdent &&
          i + 3 < end && IsPunct(t[i + 3], "(")) {
        return a;  // "sep".join(...), "x".format(...)
      }
      value += k.text;
      literal = true;
    } else if (k.kind == Kind::kIdent || k.kind == Kind::kCommand) {
      if (i + 1 < end && (IsPunct(t[i + 1], "=") || IsPunct(t[i + 1], ":"))) return a;
      value += kCodeValue;
      // Skip a call's or index's brackets.
      while (i + 1 < end && (IsPunct(t[i + 1], "(") || IsPunct(t[i + 1], "["))) {
        int nest = 0;
        for (++i; i < end; ++i) {
          if (IsOpen(t[i])) ++nest;
          if (IsClose(t[i]) && --nest == 0) break;
        }
      }
    } else if (IsPunct(t[i], "=") || IsPunct(t[i], "{")) {
      return a;  // =>, a hash or block
    }
  }
  if (!literal) return a;
  a.type = Arg::Type::kString;
  a.items.push_back(std::move(value));
  return a;
}

// Arguments in [begin, end), split at top-level commas.
std::vector<Arg> SplitArgs(const std::vector<Token>& t, size_t begin, size_t end) {
  std::vector<Arg> args;
  size_t start = begin;
  int nest = 0;
  for (size_t i = begin; i <= end; ++i) {
    if (i < end && IsOpen(t[i])) ++nest;
    if (i < end && IsClose(t[i])) --nest;
    if (i < end && !(nest == 0 && IsPunct(t[i], ","))) continue;
    if (start < i) {
      if (IsPunct(t[start], "[") && IsPunct(t[i - 1], "]")) {
        Arg list;
        list.type = Arg::Type::kList;
        for (Arg& e : SplitArgs(t, start + 1, i - 1)) {
          if (e.type == Arg::Type::kString) {
            list.items.push_back(std::move(e.items[0]));
          } else {
            list.items.emplace_back(kCodeValue);
          }
        }
        args.push_back(std::move(list));
      } else {
        args.push_back(StringArg(t, start, i));
      }
    }
    start = i + 1;
  }
  return args;
}

enum class Call : uint8_t {
  kNone,
  kShell,
  kExecPath,
  kSpawnMode,
  kCode,
  kDeleteTree,
  kDelete,
  kOpen
};

Call Classify(std::string_view name, bool qualified, Lang lang) {
  static constexpr std::array<std::string_view, 26> kShellCalls = {
      "system",          "popen",        "popen2",     "popen3",   "popen4",       "getoutput",
      "getstatusoutput", "check_output", "check_call", "call",     "run",          "Popen",
      "spawn",           "spawnSync",    "execSync",   "execFile", "execFileSync", "shell_exec",
      "passthru",        "proc_open",    "execute",    "capture2", "capture2e",    "capture3",
      "pipeline",        "posix_spawnp"};
  static constexpr std::array<std::string_view, 9> kTreeDeletes = {
      "rmtree",       "remove_tree",         "rm_rf",  "rm_r",  "remove_dir",
      "remove_entry", "remove_entry_secure", "rmSync", "rimraf"};
  static constexpr std::array<std::string_view, 5> kDeletes = {"remove", "unlink", "unlinkSync",
                                                               "rmdir", "delete"};
  for (std::string_view n : kShellCalls) {
    if (name == n) return Call::kShell;
  }
  if (name == "exec") {
    // Python's bare exec() runs Python; everywhere else (os.exec*, perl, ruby,
    // php, child_process.exec) it runs a program.
    return lang == Lang::kPython && !qualified ? Call::kCode : Call::kShell;
  }
  if (name == "eval" || name == "instance_eval" || name == "class_eval" ||
      (name == "compile" && lang == Lang::kPython) || (name == "Function" && lang == Lang::kJs)) {
    return Call::kCode;
  }
  if (name.size() > 4 && name.starts_with("exec") &&
      name.substr(4).find_first_not_of("lvpe") == std::string_view::npos) {
    return lang == Lang::kPython ? Call::kExecPath : Call::kShell;  // os.execvp(path, argv)
  }
  if (name == "posix_spawn") return Call::kExecPath;
  if (name.size() > 5 && name.starts_with("spawn") &&
      name.substr(5).find_first_not_of("lvpe") == std::string_view::npos) {
    return Call::kSpawnMode;  // os.spawnlp(mode, path, argv...)
  }
  for (std::string_view n : kTreeDeletes) {
    if (name == n) return Call::kDeleteTree;
  }
  if (name == "rm" && (lang == Lang::kJs || lang == Lang::kRuby)) return Call::kDeleteTree;
  if (name == "rmdirSync") return Call::kDeleteTree;
  for (std::string_view n : kDeletes) {
    if (name == n) return Call::kDelete;
  }
  if (name == "open" && (lang == Lang::kPerl || lang == Lang::kRuby)) return Call::kOpen;
  return Call::kNone;
}

class CodeJudge {
 public:
  CodeJudge(Judge& judge, std::string_view family, int depth)
      : judge_(judge), family_(family), lang_(LangOf(family)), depth_(depth) {}

  void Run(std::string_view code) {
    const std::vector<Token> t = Tokenizer(code, lang_).Run();
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i].kind == Kind::kCommand) {
        Shell(t[i].text);
        continue;
      }
      if (t[i].kind != Kind::kIdent) continue;
      const bool qualified =
          i > 0 && (IsPunct(t[i - 1], ".") || IsPunct(t[i - 1], ":") || IsPunct(t[i - 1], ">"));
      const Call call = Classify(t[i].text, qualified, lang_);
      if (call == Call::kNone) continue;
      // Arguments: in parentheses, or (perl, ruby) up to the end of the
      // statement.
      size_t begin = i + 1;
      size_t end = begin;
      if (begin < t.size() && IsPunct(t[begin], "(")) {
        int nest = 0;
        for (end = begin; end < t.size(); ++end) {
          if (IsOpen(t[end])) ++nest;
          if (IsClose(t[end]) && --nest == 0) break;
        }
        ++begin;
      } else if (lang_ == Lang::kPerl || lang_ == Lang::kRuby) {
        int nest = 0;
        for (end = begin; end < t.size(); ++end) {
          if (IsOpen(t[end])) ++nest;
          if (IsClose(t[end]) && --nest < 0) break;
          if (nest == 0 &&
              (IsPunct(t[end], ";") ||
               (t[end].kind == Kind::kIdent && (t[end].text == "or" || t[end].text == "and" ||
                                                t[end].text == "if" || t[end].text == "unless")))) {
            break;
          }
        }
      } else {
        continue;
      }
      end = std::min(end, t.size());
      if (begin >= end) continue;
      Apply(call, SplitArgs(t, begin, end));
    }
  }

 private:
  void Shell(std::string_view command) {
    if (!command.empty()) judge_.JudgeScript(command, depth_ + 1);
  }

  void Argv(const std::vector<std::string>& argv) { Shell(ShellJoin(argv)); }

  void Apply(Call call, std::vector<Arg> args) {
    switch (call) {
      case Call::kNone:
        return;
      case Call::kCode:
        if (!args.empty() && args[0].type == Arg::Type::kString) {
          if (depth_ + 1 > kMaxPayloadDepth) return;
          JudgeInterpreterCode(judge_, family_, args[0].items[0], depth_ + 1);
        }
        return;
      case Call::kDeleteTree:
      case Call::kDelete:
        for (const Arg& a : args) {
          if (a.type == Arg::Type::kOther) continue;
          for (const std::string& path : a.items) {
            if (path.empty() || path.find(kCodeValue) != std::string::npos) continue;
            Shell(std::string(call == Call::kDeleteTree ? "rm -r -- " : "rm -- ") +
                  ShellQuote(path));
          }
        }
        return;
      case Call::kOpen: {
        // perl open(FH, "cmd |") / open(FH, "-|", "cmd", ...), ruby open("|cmd").
        std::vector<Arg> rest;
        for (Arg& a : args) {
          if (a.type != Arg::Type::kOther) rest.push_back(std::move(a));
        }
        if (rest.empty() || rest[0].type != Arg::Type::kString) return;
        std::string_view mode = rest[0].items[0];
        if (mode == "-|" || mode == "|-") {
          rest.erase(rest.begin());
          RunArgs(std::move(rest));
          return;
        }
        while (!mode.empty() && mode.front() == ' ') mode.remove_prefix(1);
        while (!mode.empty() && mode.back() == ' ') mode.remove_suffix(1);
        if (mode.starts_with('|')) {
          Shell(mode.substr(1));
        } else if (mode.ends_with('|')) {
          Shell(mode.substr(0, mode.size() - 1));
        }
        return;
      }
      case Call::kExecPath:
        if (args.size() >= 2) args.erase(args.begin());  // os.execv(path, [argv0, ...])
        RunArgs(std::move(args));
        return;
      case Call::kSpawnMode:
        if (args.size() >= 3) args.erase(args.begin(), args.begin() + 2);  // mode, path
        RunArgs(std::move(args));
        return;
      case Call::kShell:
        RunArgs(std::move(args));
        return;
    }
  }

  // The leading run of string/list arguments (an environment hash before it is
  // skipped): one string is a shell command line, anything else an argv.
  void RunArgs(std::vector<Arg> args) {
    size_t i = 0;
    while (i < args.size() && args[i].type == Arg::Type::kOther) ++i;
    std::vector<std::string> argv;
    size_t strings = 0;
    bool list = false;
    for (; i < args.size() && args[i].type != Arg::Type::kOther; ++i) {
      if (args[i].type == Arg::Type::kList) list = true;
      ++strings;
      for (std::string& s : args[i].items) argv.push_back(std::move(s));
    }
    if (strings == 1 && !list) {
      Shell(argv[0]);
    } else {
      Argv(argv);
    }
  }

  Judge& judge_;
  std::string_view family_;
  Lang lang_;
  int depth_;
};

// A reverse shell in any of the languages: code that opens a network socket and hands it a
// shell — descriptors rewired onto it (dup2, fdopen, open(STDIN, ">&S"), a pty, streams piped
// into a spawned shell), a shell named outright (/bin/sh, "bash", sh -i, cmd.exe), or commands
// received from it run (recv + popen/system/subprocess). A socket alone (a client of a local
// dev server) is not one.
bool IsReverseShellCode(std::string_view code) {
  static const RE2 kSocket(
      "(?i)(\\bsocket\\s*[.(:]|io::socket|\\bfsockopen\\b|stream_socket_client|socket_create\\b|"
      "tcpsocket|udpsocket|\\bsocket\\s*\\.\\s*(new|tcp|open)\\b|\\bnet\\s*\\.\\s*(connect|"
      "createconnection|socket)\\b|require\\s*\\(?\\s*['\"](net|socket)['\"]|/dev/(tcp|udp)/|"
      "create_connection|java\\.net\\.socket|sockets\\.tcpclient|net::telnet)");
  static const RE2 kRewire(
      "(?i)(\\bdup2?\\s*\\(|\\bdup2\\b|pty\\s*\\.\\s*(spawn|fork)|openpty|fdopen|fileno|"
      "\\.to_i\\b|open\\s*\\(?\\s*std(in|out|err)\\b|\\bstd(in|out|err)\\s*->|[<>]&\\s*[%$\\w]|"
      "\\.pipe\\s*\\(|\\b(stdin|stdout|stderr)\\s*=\\s*\\w)");
  static const RE2 kShell(
      "(?i)(/bin/(ba|z|da|k|c|tc|a|fi|mk)?sh\\b|\\b(ba|z|da|k)?sh\\s+-i\\b|"
      "['\"](ba|z|da|k)?sh['\"]|"
      "cmd(\\.exe)?['\"]|powershell)");
  static const RE2 kRunsReceived(
      "(?i)(recv|receive|\\bread\\b|\\bgets\\b|readline|<\\$?\\w*>).*(popen|system|exec|"
      "subprocess|shell_exec|passthru|proc_open|child_process|check_output|getoutput|"
      "os\\.execute)|(popen|system|exec|subprocess|shell_exec|passthru|proc_open|child_process|"
      "check_output|getoutput|os\\.execute).*(recv|receive|\\bread\\b|\\bgets\\b|readline|"
      "<\\$?\\w*>)");
  if (!RE2::PartialMatch(code, kSocket)) return false;
  return RE2::PartialMatch(code, kRewire) || RE2::PartialMatch(code, kShell) ||
         RE2::PartialMatch(code, kRunsReceived);
}

}  // namespace

void JudgeInterpreterCode(Judge& judge, std::string_view language, std::string_view code,
                          int depth) {
  if (code.empty() || depth > kMaxPayloadDepth) return;
  if (IsReverseShellCode(code)) {
    judge.Add("reverse_shell", "interpreter code handing a shell to a network socket",
              GuardTier::kDangerous);
  }
  CodeJudge(judge, language, depth).Run(code);
}

}  // namespace talaria::safety::guard
