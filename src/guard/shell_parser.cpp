#include "talaria/guard/shell_parser.h"

#include <cctype>

#include <algorithm>
#include <array>
#include <utility>

#include "talaria/base/utf8.h"

namespace talaria::safety {

bool Redirection::IsFdTarget() const {
  if (op != RedirectOp::kDupOut && op != RedirectOp::kDupIn) return false;
  std::string_view t = target.text;
  if (t == "-") return true;
  if (!t.empty() && t.back() == '-') t.remove_suffix(1);
  if (t.empty()) return false;
  return std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
}

namespace {

bool IsMeta(char c) {
  switch (c) {
    case ' ': case '\t': case '\n': case ';': case '&': case '|': case '(': case ')': case '<':
    case '>':
      return true;
    default:
      return false;
  }
}

bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

constexpr std::array<std::string_view, 8> kClosingWords = {"then", "elif", "else", "fi",
                                                           "do",   "done", "esac", "}"};

// Which tokens end a command sequence for the caller.
struct Stops {
  bool eof = false;
  bool paren = false;     // ')'
  bool case_end = false;  // ';;' ';&' ';;&'
  std::array<std::string_view, 3> words{};
  bool HasWord(std::string_view w) const {
    return !w.empty() && std::find(words.begin(), words.end(), w) != words.end();
  }
};

// State shared by a parser and the sub-parsers it starts for backticks and heredoc bodies.
struct Shared {
  ParsedScript* out = nullptr;
  const ParseLimits* limits = nullptr;
  int depth = 0;
  int pipelines = 0;
  size_t words = 0;
  Status error;
};

// The word being built: text after quote removal plus where unquoted brace characters are.
struct WordBuilder {
  std::string text;
  uint8_t flags = 0;
  bool started = false;
  std::vector<uint32_t> brace_marks;
};

struct PendingHeredoc {
  int cmd;
  size_t redir;
  std::string delim;
  bool strip_tabs;
  bool expands;
};

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Brace expansion over the unquoted brace characters at `marks` (positions in `text`).
// Returns false when the result would exceed `cap` words.
bool ExpandBraces(const std::string& text, const std::vector<uint32_t>& marks,
                  std::vector<std::string>& out, size_t cap, int depth) {
  if (depth > 64) return false;
  for (size_t mi = 0; mi < marks.size(); ++mi) {
    if (text[marks[mi]] != '{') continue;
    int nest = 0;
    size_t close = 0;
    bool found = false;
    std::vector<size_t> commas;
    for (size_t mj = mi + 1; mj < marks.size(); ++mj) {
      const char c = text[marks[mj]];
      if (c == '{') {
        ++nest;
      } else if (c == '}') {
        if (nest == 0) {
          close = mj;
          found = true;
          break;
        }
        --nest;
      } else if (c == ',' && nest == 0) {
        commas.push_back(mj);
      }
    }
    if (!found || commas.empty()) continue;
    const uint32_t open_pos = marks[mi];
    const uint32_t close_pos = marks[close];
    std::vector<size_t> bounds;  // mark indices of the separators: open, commas..., close
    bounds.push_back(mi);
    bounds.insert(bounds.end(), commas.begin(), commas.end());
    bounds.push_back(close);
    const std::string prefix = text.substr(0, open_pos);
    const std::string suffix = text.substr(close_pos + 1);
    for (size_t k = 0; k + 1 < bounds.size(); ++k) {
      const uint32_t a = marks[bounds[k]] + 1;
      const uint32_t b = marks[bounds[k + 1]];
      std::string alt = prefix + text.substr(a, b - a) + suffix;
      std::vector<uint32_t> alt_marks;
      for (size_t m = 0; m < mi; ++m) alt_marks.push_back(marks[m]);
      for (size_t m = bounds[k] + 1; m < bounds[k + 1]; ++m) {
        alt_marks.push_back(marks[m] - a + open_pos);
      }
      const uint32_t shift_base = open_pos + (b - a);
      for (size_t m = close + 1; m < marks.size(); ++m) {
        alt_marks.push_back(marks[m] - (close_pos + 1) + shift_base);
      }
      if (!ExpandBraces(alt, alt_marks, out, cap, depth + 1)) return false;
      if (out.size() > cap) return false;
    }
    return true;
  }
  out.push_back(text);
  return out.size() <= cap;
}

class Parser {
 public:
  Parser(std::string_view src, Shared& shared) : src_(src), sh_(shared) {}

  bool ParseAll() {
    Stops stops;
    stops.eof = true;
    if (!ParseSequence(stops)) return false;
    return true;
  }

  // Finds $( ), backticks and ${ } in text that undergoes expansion (heredoc bodies,
  // arithmetic) and parses the substitutions as children of `cmd`.
  bool ScanExpansions(int cmd) {
    WordBuilder scratch;
    while (!AtEnd()) {
      const char c = Peek();
      if (c == '\\') {
        pos_ += 2;
      } else if (c == '$') {
        if (!LexDollar(cmd, scratch, true, nullptr)) return false;
      } else if (c == '`') {
        if (!LexBacktick(cmd, scratch, true)) return false;
      } else {
        ++pos_;
      }
    }
    return true;
  }

  int parent_ = -1;
  CommandOrigin origin_ = CommandOrigin::kTop;
  std::string function_;

 private:
  // ---- primitives -----------------------------------------------------------------------

  bool AtEnd() const { return pos_ >= src_.size(); }
  char Peek(size_t k = 0) const { return pos_ + k < src_.size() ? src_[pos_ + k] : '\0'; }
  bool PeekIs(size_t k, char c) const { return pos_ + k < src_.size() && src_[pos_ + k] == c; }

  bool Fail(StatusCode code, std::string message) {
    if (sh_.error.ok()) {
      sh_.error = Status(code, std::move(message) + " (at byte " + std::to_string(pos_) + ")");
    }
    return false;
  }
  bool Syntax(std::string message) { return Fail(StatusCode::kInvalidArgument, std::move(message)); }

  class DepthGuard {
   public:
    explicit DepthGuard(Parser& p) : p_(p) { ++p_.sh_.depth; }
    ~DepthGuard() { --p_.sh_.depth; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    bool ok() {
      if (p_.sh_.depth <= p_.sh_.limits->max_depth) return true;
      return p_.Fail(StatusCode::kResourceExhausted, "command nesting is too deep");
    }

   private:
    Parser& p_;
  };

  // Spaces, tabs, line continuations and comments (not the newline ending a comment).
  void SkipBlanks() {
    while (!AtEnd()) {
      const char c = Peek();
      if (c == ' ' || c == '\t') {
        ++pos_;
      } else if (c == '\\' && PeekIs(1, '\n')) {
        pos_ += 2;
      } else if (c == '#') {
        while (!AtEnd() && Peek() != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  void ConsumeNewline() {
    ++pos_;
    if (!heredocs_.empty()) ReadHeredocs();
  }

  void SkipLinebreaks() {
    while (true) {
      SkipBlanks();
      if (PeekIs(0, '\n')) {
        ConsumeNewline();
      } else {
        break;
      }
    }
  }

  // The next token when it is a plain unquoted word that could be a reserved word.
  std::string_view PeekWordLiteral() const {
    size_t i = pos_;
    while (i < src_.size()) {
      const char c = src_[i];
      if ((c >= 'a' && c <= 'z') || c == '{' || c == '}' || c == '!' || c == '[' || c == ']') {
        ++i;
      } else {
        break;
      }
    }
    if (i == pos_) return {};
    if (i < src_.size() && !IsMeta(src_[i])) return {};
    return src_.substr(pos_, i - pos_);
  }

  // ---- commands -------------------------------------------------------------------------

  enum class StopResult { kNone, kStopped, kError };

  StopResult CheckStop(const Stops& stops) {
    if (AtEnd()) {
      if (stops.eof) {
        stop_ = "";
        return StopResult::kStopped;
      }
      Syntax("unexpected end of input (unclosed construct)");
      return StopResult::kError;
    }
    const char c = Peek();
    if (c == ')') {
      if (stops.paren) {
        stop_ = ")";
        return StopResult::kStopped;
      }
      Syntax("unbalanced ')'");
      return StopResult::kError;
    }
    if (c == ';' && (PeekIs(1, ';') || PeekIs(1, '&'))) {
      if (stops.case_end) {
        stop_ = ";;";
        return StopResult::kStopped;
      }
      Syntax("unexpected ';;'");
      return StopResult::kError;
    }
    const std::string_view w = PeekWordLiteral();
    if (stops.HasWord(w)) {
      stop_ = w;
      return StopResult::kStopped;
    }
    if (std::find(kClosingWords.begin(), kClosingWords.end(), w) != kClosingWords.end()) {
      Syntax("unexpected '" + std::string(w) + "'");
      return StopResult::kError;
    }
    return StopResult::kNone;
  }

  bool ParseSequence(const Stops& stops) {
    DepthGuard guard(*this);
    if (!guard.ok()) return false;
    while (true) {
      SkipLinebreaks();
      StopResult r = CheckStop(stops);
      if (r == StopResult::kError) return false;
      if (r == StopResult::kStopped) return true;
      const size_t first = sh_.out->commands.size();
      if (!ParseAndOr()) return false;
      SkipBlanks();
      if (AtEnd()) continue;
      const char c = Peek();
      if (c == ';' && !PeekIs(1, ';') && !PeekIs(1, '&')) {
        ++pos_;
        continue;
      }
      if (c == '&') {
        ++pos_;
        for (size_t i = first; i < sh_.out->commands.size(); ++i) {
          sh_.out->commands[i].background = true;
        }
        continue;
      }
      if (c == '\n') continue;
      r = CheckStop(stops);
      if (r == StopResult::kError) return false;
      if (r == StopResult::kStopped) return true;
      return Syntax(std::string("syntax error near '") + c + "'");
    }
  }

  bool ParseAndOr() {
    if (!ParsePipeline()) return false;
    while (true) {
      SkipBlanks();
      if ((PeekIs(0, '&') && PeekIs(1, '&')) || (PeekIs(0, '|') && PeekIs(1, '|'))) {
        pos_ += 2;
        SkipLinebreaks();
        if (!ParsePipeline()) return false;
      } else {
        return true;
      }
    }
  }

  bool ParsePipeline() {
    SkipBlanks();
    while (true) {
      const std::string_view w = PeekWordLiteral();
      if (w == "!") {
        pos_ += 1;
        SkipBlanks();
      } else if (w == "time") {
        pos_ += 4;
        SkipBlanks();
        if (PeekIs(0, '-') && PeekIs(1, 'p') && (pos_ + 2 >= src_.size() || IsMeta(Peek(2)))) {
          pos_ += 2;
          SkipBlanks();
        }
        if (AtEnd() || Peek() == ';' || Peek() == '\n' || Peek() == '&' || Peek() == '|' ||
            Peek() == ')') {
          return true;  // bare `time`
        }
      } else {
        break;
      }
    }
    const int id = ++sh_.pipelines;
    const size_t first = sh_.out->commands.size();
    const int saved_pipeline = cur_pipeline_;
    const int saved_pos = cur_pos_;
    int n = 0;
    while (true) {
      cur_pipeline_ = id;
      cur_pos_ = n;
      if (!ParseCommand()) return false;
      ++n;
      SkipBlanks();
      if (PeekIs(0, '|') && !PeekIs(1, '|')) {
        pos_ += PeekIs(1, '&') ? 2 : 1;
        SkipLinebreaks();
        continue;
      }
      break;
    }
    cur_pipeline_ = saved_pipeline;
    cur_pos_ = saved_pos;
    if (n > 1) {
      for (size_t i = first; i < sh_.out->commands.size(); ++i) {
        if (sh_.out->commands[i].pipeline == id) sh_.out->commands[i].in_pipeline = true;
      }
    }
    return true;
  }

  int NewCommand() {
    SimpleCommand c;
    c.parent = parent_;
    c.origin = origin_;
    c.pipeline = cur_pipeline_;
    c.pipe_pos = cur_pos_;
    c.stdin_piped = cur_pos_ > 0 || inherit_piped_;
    c.function = function_;
    sh_.out->commands.push_back(std::move(c));
    return static_cast<int>(sh_.out->commands.size() - 1);
  }

  SimpleCommand& Cmd(int idx) { return sh_.out->commands[static_cast<size_t>(idx)]; }

  void ConsumeWord(std::string_view w) { pos_ += w.size(); }

  // Runs `body` as the inside of a compound command: its first commands read the compound's
  // stdin, so a compound at pipe position > 0 passes "stdin is piped" down.
  template <typename Body>
  bool InCompound(Body&& body) {
    const bool saved = inherit_piped_;
    inherit_piped_ = inherit_piped_ || cur_pos_ > 0;
    const bool ok = body();
    inherit_piped_ = saved;
    return ok;
  }

  bool ExpectWord(std::string_view w) {
    SkipLinebreaks();
    if (PeekWordLiteral() != w) return Syntax("expected '" + std::string(w) + "'");
    ConsumeWord(w);
    return true;
  }

  bool ParseCommand() {
    SkipBlanks();
    if (AtEnd()) return Syntax("expected a command");
    const char c = Peek();
    if (c == ';' || c == '&' || c == '|' || c == ')' || c == '\n') {
      return Syntax(std::string("syntax error near '") + c + "'");
    }
    if (c == '(') {
      if (PeekIs(1, '(')) {
        size_t end = 0;
        if (ScanArithmetic(pos_ + 2, &end)) {
          const int idx = NewCommand();
          const size_t begin = pos_;
          const std::string_view body = src_.substr(pos_ + 2, end - (pos_ + 2));
          Cmd(idx).argv.push_back(ShellWord{"((", 0});
          Cmd(idx).argv.push_back(ShellWord{std::string(body), kWordExpansion});
          if (!ScanEmbedded(idx, body)) return false;
          pos_ = end + 2;
          return ParseTrailingRedirections(idx, begin);
        }
      }
      ++pos_;
      const size_t begin = pos_ - 1;
      const bool ok = InCompound([&] {
        Stops stops;
        stops.paren = true;
        return ParseSequence(stops);
      });
      if (!ok) return false;
      if (!PeekIs(0, ')')) return Syntax("unbalanced '('");
      ++pos_;
      return ParseTrailingRedirections(-1, begin);
    }
    const std::string_view w = PeekWordLiteral();
    const size_t begin = pos_;
    if (w == "{") {
      ConsumeWord(w);
      const bool ok = InCompound([&] {
        Stops stops;
        stops.words = {"}"};
        return ParseSequence(stops);
      });
      if (!ok) return false;
      ConsumeWord("}");
      return ParseTrailingRedirections(-1, begin);
    }
    if (w == "coproc") {
      // coproc [NAME] COMMAND: COMMAND runs asynchronously; NAME only when a compound follows.
      ConsumeWord(w);
      SkipBlanks();
      size_t n = pos_;
      while (n < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[n])) || src_[n] == '_')) {
        ++n;
      }
      size_t after = n;
      while (after < src_.size() && (src_[after] == ' ' || src_[after] == '\t')) ++after;
      if (n > pos_ && after > n && after < src_.size() && (src_[after] == '{' || src_[after] == '(')) {
        pos_ = after;
      }
      return ParseCommand();
    }
    if (w == "if") return ParseIf(begin);
    if (w == "while" || w == "until") {
      ConsumeWord(w);
      const bool ok = InCompound([&] {
        Stops cond;
        cond.words = {"do"};
        if (!ParseSequence(cond)) return false;
        ConsumeWord("do");
        Stops body;
        body.words = {"done"};
        if (!ParseSequence(body)) return false;
        ConsumeWord("done");
        return true;
      });
      if (!ok) return false;
      return ParseTrailingRedirections(-1, begin);
    }
    if (w == "for" || w == "select") return ParseFor(w, begin);
    if (w == "case") return ParseCase(begin);
    if (w == "function") {
      ConsumeWord(w);
      SkipBlanks();
      std::vector<ShellWord> name;
      if (!LexWord(-1, name) || name.size() != 1) return Syntax("bad function name");
      SkipBlanks();
      if (PeekIs(0, '(')) {
        ++pos_;
        SkipBlanks();
        if (!PeekIs(0, ')')) return Syntax("expected ')' in function definition");
        ++pos_;
      }
      return ParseFunctionBody(name[0].text);
    }
    if (w == "[[") return ParseDoubleBracket(begin);
    return ParseSimple();
  }

  bool ParseIf(size_t begin) {
    ConsumeWord("if");
    const bool ok = InCompound([&] {
      while (true) {
        Stops cond;
        cond.words = {"then"};
        if (!ParseSequence(cond)) return false;
        ConsumeWord("then");
        Stops body;
        body.words = {"elif", "else", "fi"};
        if (!ParseSequence(body)) return false;
        const std::string_view stop = stop_;
        ConsumeWord(stop);
        if (stop == "elif") continue;
        if (stop == "else") {
          Stops tail;
          tail.words = {"fi"};
          if (!ParseSequence(tail)) return false;
          ConsumeWord("fi");
        }
        return true;
      }
    });
    if (!ok) return false;
    return ParseTrailingRedirections(-1, begin);
  }

  bool ParseFor(std::string_view keyword, size_t begin) {
    ConsumeWord(keyword);
    SkipBlanks();
    const int idx = NewCommand();
    Cmd(idx).argv.push_back(ShellWord{std::string(keyword), 0});
    if (PeekIs(0, '(') && PeekIs(1, '(')) {
      size_t end = 0;
      if (!ScanArithmetic(pos_ + 2, &end)) return Syntax("bad arithmetic for");
      const std::string_view body = src_.substr(pos_ + 2, end - (pos_ + 2));
      Cmd(idx).argv.push_back(ShellWord{std::string(body), kWordExpansion});
      if (!ScanEmbedded(idx, body)) return false;
      pos_ = end + 2;
    } else {
      std::vector<ShellWord> words;
      if (AtEnd() || IsMeta(Peek()) || !LexWord(idx, words)) return Syntax("bad for variable");
      SkipLinebreaks();
      if (PeekWordLiteral() == "in") {
        ConsumeWord("in");
        words.push_back(ShellWord{"in", 0});
        while (true) {
          SkipBlanks();
          if (AtEnd() || Peek() == ';' || Peek() == '\n') break;
          if (IsMeta(Peek())) return Syntax("bad word list in for");
          if (!LexWord(idx, words)) return false;
        }
      }
      auto& argv = Cmd(idx).argv;
      argv.insert(argv.end(), std::make_move_iterator(words.begin()),
                  std::make_move_iterator(words.end()));
    }
    Cmd(idx).segment = std::string(src_.substr(begin, pos_ - begin));
    SkipBlanks();
    if (PeekIs(0, ';')) ++pos_;
    SkipLinebreaks();
    const std::string_view w = PeekWordLiteral();
    std::string_view closer;
    if (w == "do") {
      closer = "done";
    } else if (w == "{") {
      closer = "}";
    } else {
      return Syntax("expected 'do'");
    }
    ConsumeWord(w);
    const bool ok = InCompound([&] {
      Stops body;
      body.words = {closer};
      return ParseSequence(body);
    });
    if (!ok) return false;
    ConsumeWord(closer);
    return ParseTrailingRedirections(-1, begin);
  }

  bool ParseCase(size_t begin) {
    ConsumeWord("case");
    SkipBlanks();
    const int idx = NewCommand();
    std::vector<ShellWord> words;
    words.push_back(ShellWord{"case", 0});
    if (AtEnd() || IsMeta(Peek()) || !LexWord(idx, words)) return Syntax("bad case word");
    Cmd(idx).segment = std::string(src_.substr(begin, pos_ - begin));
    if (!ExpectWord("in")) return false;
    const bool ok = InCompound([&] {
      while (true) {
        SkipLinebreaks();
        if (PeekWordLiteral() == "esac") {
          ConsumeWord("esac");
          return true;
        }
        if (AtEnd()) return Syntax("unterminated case");
        if (PeekIs(0, '(')) ++pos_;
        while (true) {
          SkipBlanks();
          if (PeekIs(0, ')')) {
            ++pos_;
            break;
          }
          if (PeekIs(0, '|')) {
            ++pos_;
            continue;
          }
          if (AtEnd() || IsMeta(Peek())) return Syntax("bad case pattern");
          if (!LexWord(idx, words)) return false;
        }
        Stops body;
        body.case_end = true;
        body.words = {"esac"};
        if (!ParseSequence(body)) return false;
        if (stop_ == "esac") {
          ConsumeWord("esac");
          return true;
        }
        pos_ += 2;  // ;; or ;&
        if (PeekIs(0, '&')) ++pos_;
      }
    });
    if (!ok) return false;
    auto& argv = Cmd(idx).argv;
    argv.insert(argv.end(), std::make_move_iterator(words.begin()),
                std::make_move_iterator(words.end()));
    return ParseTrailingRedirections(-1, begin);
  }

  bool ParseDoubleBracket(size_t begin) {
    ConsumeWord("[[");
    const int idx = NewCommand();
    std::vector<ShellWord> words;
    words.push_back(ShellWord{"[[", 0});
    while (true) {
      SkipBlanks();
      if (AtEnd()) return Syntax("unterminated '[['");
      if (PeekWordLiteral() == "]]") {
        ConsumeWord("]]");
        words.push_back(ShellWord{"]]", 0});
        break;
      }
      const char c = Peek();
      if (c == '\n') {
        ConsumeNewline();
        continue;
      }
      if (IsMeta(c)) {
        words.push_back(ShellWord{std::string(1, c), 0});
        ++pos_;
        continue;
      }
      if (!LexWord(idx, words)) return false;
    }
    auto& argv = Cmd(idx).argv;
    argv.insert(argv.end(), std::make_move_iterator(words.begin()),
                std::make_move_iterator(words.end()));
    return ParseTrailingRedirections(idx, begin);
  }

  bool ParseFunctionBody(const std::string& name) {
    DepthGuard guard(*this);
    if (!guard.ok()) return false;
    SkipLinebreaks();
    std::string saved = std::move(function_);
    function_ = name;
    const bool ok = ParseCommand();
    function_ = std::move(saved);
    return ok;
  }

  // Redirections after a compound command (or after `[[ ]]`, `(( ))`): recorded on `idx`, or
  // on a new argv-less entry when idx is -1.
  bool ParseTrailingRedirections(int idx, size_t begin) {
    while (true) {
      SkipBlanks();
      if (!IsRedirectionStart()) break;
      if (idx < 0) idx = NewCommand();
      if (!ParseRedirection(idx)) return false;
    }
    if (idx >= 0 && Cmd(idx).segment.empty()) {
      Cmd(idx).segment = std::string(src_.substr(begin, pos_ - begin));
    }
    return true;
  }

  bool IsRedirectionStart() const {
    size_t i = pos_;
    while (i < src_.size() && IsDigit(src_[i]) && i - pos_ < 4) ++i;
    if (i >= src_.size()) return false;
    const char c = src_[i];
    if (c == '&') return i == pos_ && i + 1 < src_.size() && src_[i + 1] == '>';
    if (c != '<' && c != '>') return false;
    if (i == pos_ && i + 1 < src_.size() && src_[i + 1] == '(') return false;  // <( >(
    return true;
  }

  bool ParseRedirection(int idx) {
    Redirection r;
    if (IsDigit(Peek())) {
      int fd = 0;
      while (IsDigit(Peek())) {
        fd = fd * 10 + (Peek() - '0');
        ++pos_;
      }
      r.fd = fd;
    }
    const std::string_view rest = src_.substr(pos_);
    bool strip_tabs = false;
    if (rest.starts_with("&>>")) {
      r.op = RedirectOp::kAppendOutErr;
      pos_ += 3;
    } else if (rest.starts_with("&>")) {
      r.op = RedirectOp::kOutErr;
      pos_ += 2;
    } else if (rest.starts_with("<<<")) {
      r.op = RedirectOp::kHereString;
      pos_ += 3;
    } else if (rest.starts_with("<<-")) {
      r.op = RedirectOp::kHeredoc;
      strip_tabs = true;
      pos_ += 3;
    } else if (rest.starts_with("<<")) {
      r.op = RedirectOp::kHeredoc;
      pos_ += 2;
    } else if (rest.starts_with("<>")) {
      r.op = RedirectOp::kInOut;
      pos_ += 2;
    } else if (rest.starts_with("<&")) {
      r.op = RedirectOp::kDupIn;
      pos_ += 2;
    } else if (rest.starts_with("<")) {
      r.op = RedirectOp::kIn;
      pos_ += 1;
    } else if (rest.starts_with(">>")) {
      r.op = RedirectOp::kAppend;
      pos_ += 2;
    } else if (rest.starts_with(">|")) {
      r.op = RedirectOp::kClobber;
      pos_ += 2;
    } else if (rest.starts_with(">&")) {
      r.op = RedirectOp::kDupOut;
      pos_ += 2;
    } else {
      r.op = RedirectOp::kOut;
      pos_ += 1;
    }
    SkipBlanks();
    const bool proc_subst = (PeekIs(0, '<') || PeekIs(0, '>')) && PeekIs(1, '(');
    if (AtEnd() || (IsMeta(Peek()) && !proc_subst)) return Syntax("missing redirection target");
    std::vector<ShellWord> target;
    if (!LexWord(idx, target)) return false;
    if (!target.empty()) r.target = std::move(target.front());
    Cmd(idx).redirections.push_back(std::move(r));
    if (Cmd(idx).redirections.back().op == RedirectOp::kHeredoc) {
      const ShellWord& t = Cmd(idx).redirections.back().target;
      heredocs_.push_back(PendingHeredoc{idx, Cmd(idx).redirections.size() - 1, t.text,
                                         strip_tabs, !t.Has(kWordQuoted)});
    }
    return true;
  }

  bool ParseSimple() {
    const int idx = NewCommand();
    const size_t begin = pos_;
    size_t end = pos_;
    bool has_command_word = false;
    while (true) {
      SkipBlanks();
      if (AtEnd()) break;
      const char c = Peek();
      if (IsRedirectionStart()) {
        if (!ParseRedirection(idx)) return false;
        end = pos_;
        continue;
      }
      const bool proc_subst = (c == '<' || c == '>') && PeekIs(1, '(');
      if (c == '(') {
        SimpleCommand& cmd = Cmd(idx);
        if (cmd.argv.size() == 1 && cmd.assignments.empty() && cmd.redirections.empty() &&
            cmd.argv[0].IsLiteral()) {
          ++pos_;
          SkipBlanks();
          if (!PeekIs(0, ')')) return Syntax("expected ')' in function definition");
          ++pos_;
          std::string name = std::move(cmd.argv[0].text);
          cmd.argv.clear();
          cmd.segment = std::string(src_.substr(begin, pos_ - begin));
          return ParseFunctionBody(name);
        }
        return Syntax("unexpected '('");
      }
      if (IsMeta(c) && !proc_subst) break;
      std::vector<ShellWord> words;
      const bool assignment = !has_command_word && LooksLikeAssignment();
      if (!LexWord(idx, words)) return false;
      if (assignment) {
        ShellWord w = words.empty() ? ShellWord{} : std::move(words.front());
        if (!w.text.empty() && w.text.back() == '=' && PeekIs(0, '(')) {
          if (!LexArrayValue(idx, w)) return false;
        }
        Cmd(idx).assignments.push_back(std::move(w));
      } else {
        auto& argv = Cmd(idx).argv;
        argv.insert(argv.end(), std::make_move_iterator(words.begin()),
                    std::make_move_iterator(words.end()));
        has_command_word = !Cmd(idx).argv.empty();
      }
      end = pos_;
    }
    Cmd(idx).segment = std::string(src_.substr(begin, end - begin));
    return true;
  }

  // NAME= or NAME+= (or NAME[...]=) at the cursor, the name unquoted.
  bool LooksLikeAssignment() const {
    size_t i = pos_;
    if (i >= src_.size() || !IsNameStart(src_[i])) return false;
    while (i < src_.size() && IsNameChar(src_[i])) ++i;
    if (i < src_.size() && src_[i] == '[') {
      while (i < src_.size() && src_[i] != ']' && !IsMeta(src_[i])) ++i;
      if (i >= src_.size() || src_[i] != ']') return false;
      ++i;
    }
    if (i < src_.size() && src_[i] == '+') ++i;
    return i < src_.size() && src_[i] == '=';
  }

  // NAME=( a b c ): the elements are words (with substitutions) appended to the value.
  bool LexArrayValue(int idx, ShellWord& w) {
    ++pos_;
    w.text += '(';
    bool first = true;
    while (true) {
      SkipLinebreaks();
      if (AtEnd()) return Syntax("unterminated array assignment");
      if (PeekIs(0, ')')) {
        ++pos_;
        break;
      }
      if (IsMeta(Peek())) return Syntax("bad array element");
      std::vector<ShellWord> elems;
      if (!LexWord(idx, elems)) return false;
      for (auto& e : elems) {
        if (!first) w.text += ' ';
        first = false;
        w.text += e.text;
        w.flags |= e.flags;
      }
    }
    w.text += ')';
    return true;
  }

  // ---- words ----------------------------------------------------------------------------

  bool Flush(WordBuilder& b, std::vector<ShellWord>& out) {
    if (!b.started) return true;
    if (b.brace_marks.empty()) {
      out.push_back(ShellWord{std::move(b.text), b.flags});
    } else {
      std::vector<std::string> expanded;
      if (!ExpandBraces(b.text, b.brace_marks, expanded, sh_.limits->max_words, 0)) {
        return Fail(StatusCode::kResourceExhausted, "brace expansion produces too many words");
      }
      for (auto& e : expanded) out.push_back(ShellWord{std::move(e), b.flags});
    }
    b = WordBuilder{};
    if (++sh_.words > sh_.limits->max_words) {
      return Fail(StatusCode::kResourceExhausted, "too many words");
    }
    return true;
  }

  // One shell word at the cursor (may yield several words or none: brace expansion, $IFS).
  bool LexWord(int idx, std::vector<ShellWord>& out) {
    WordBuilder b;
    if ((PeekIs(0, '<') || PeekIs(0, '>')) && PeekIs(1, '(')) {
      if (!LexSubstitution(idx, b, CommandOrigin::kProcessSubst)) return false;
    }
    while (!AtEnd()) {
      const char c = Peek();
      if (IsMeta(c)) break;
      switch (c) {
        case '\\':
          b.started = true;
          if (pos_ + 1 >= src_.size()) {
            b.text += '\\';
            ++pos_;
          } else if (PeekIs(1, '\n')) {
            pos_ += 2;
          } else {
            b.text += Peek(1);
            b.flags |= kWordQuoted;
            pos_ += 2;
          }
          break;
        case '\'': {
          const size_t e = src_.find('\'', pos_ + 1);
          if (e == std::string_view::npos) return Syntax("unterminated single quote");
          b.text.append(src_.substr(pos_ + 1, e - pos_ - 1));
          b.flags |= kWordQuoted;
          b.started = true;
          pos_ = e + 1;
          break;
        }
        case '"':
          ++pos_;
          if (!LexDoubleQuoted(idx, b)) return false;
          break;
        case '`':
          if (!LexBacktick(idx, b, false)) return false;
          break;
        case '$':
          if (!LexDollar(idx, b, false, &out)) return false;
          break;
        case '*':
        case '?':
          b.flags |= kWordGlob;
          b.text += c;
          b.started = true;
          ++pos_;
          break;
        case '[':
          if ((b.flags & kWordGlob) == 0) {
            for (size_t i = pos_ + 1; i < src_.size() && !IsMeta(src_[i]); ++i) {
              if (src_[i] == ']') {
                b.flags |= kWordGlob;
                break;
              }
            }
          }
          b.text += c;
          b.started = true;
          ++pos_;
          break;
        case '{':
        case ',':
        case '}':
          b.brace_marks.push_back(static_cast<uint32_t>(b.text.size()));
          b.text += c;
          b.started = true;
          ++pos_;
          break;
        case '~':
          if (!b.started) b.flags |= kWordTilde;
          b.text += c;
          b.started = true;
          ++pos_;
          break;
        default:
          b.text += c;
          b.started = true;
          ++pos_;
          break;
      }
    }
    return Flush(b, out);
  }

  bool LexDoubleQuoted(int idx, WordBuilder& b) {
    b.flags |= kWordQuoted;
    b.started = true;
    while (true) {
      if (AtEnd()) return Syntax("unterminated double quote");
      const char c = Peek();
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c == '\\') {
        if (pos_ + 1 >= src_.size()) return Syntax("unterminated double quote");
        const char n = Peek(1);
        if (n == '\n') {
          pos_ += 2;
        } else if (n == '$' || n == '`' || n == '"' || n == '\\') {
          b.text += n;
          pos_ += 2;
        } else {
          b.text += '\\';
          ++pos_;
        }
      } else if (c == '`') {
        if (!LexBacktick(idx, b, true)) return false;
      } else if (c == '$') {
        if (!LexDollar(idx, b, true, nullptr)) return false;
      } else {
        b.text += c;
        ++pos_;
      }
    }
  }

  // $'...': ANSI-C quoting, decoded.
  bool LexAnsiC(WordBuilder& b) {
    pos_ += 2;
    b.flags |= kWordQuoted;
    b.started = true;
    while (true) {
      if (AtEnd()) return Syntax("unterminated $'...' quote");
      const char c = Peek();
      if (c == '\'') {
        ++pos_;
        return true;
      }
      if (c != '\\') {
        b.text += c;
        ++pos_;
        continue;
      }
      if (pos_ + 1 >= src_.size()) return Syntax("unterminated $'...' quote");
      const char e = Peek(1);
      pos_ += 2;
      switch (e) {
        case 'a': b.text += '\a'; break;
        case 'b': b.text += '\b'; break;
        case 'e': case 'E': b.text += '\x1b'; break;
        case 'f': b.text += '\f'; break;
        case 'n': b.text += '\n'; break;
        case 'r': b.text += '\r'; break;
        case 't': b.text += '\t'; break;
        case 'v': b.text += '\v'; break;
        case 'c':
          if (!AtEnd()) {
            b.text += static_cast<char>(Peek() & 0x1f);
            ++pos_;
          }
          break;
        case 'x': case 'u': case 'U': {
          const int max_digits = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
          uint32_t v = 0;
          int n = 0;
          while (n < max_digits && !AtEnd() && HexValue(Peek()) >= 0) {
            v = v * 16 + static_cast<uint32_t>(HexValue(Peek()));
            ++pos_;
            ++n;
          }
          if (n == 0) {
            b.text += '\\';
            b.text += e;
          } else if (e == 'x') {
            b.text += static_cast<char>(v);
          } else {
            AppendUtf8(b.text, v);
          }
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            uint32_t v = static_cast<uint32_t>(e - '0');
            int n = 1;
            while (n < 3 && !AtEnd() && Peek() >= '0' && Peek() <= '7') {
              v = v * 8 + static_cast<uint32_t>(Peek() - '0');
              ++pos_;
              ++n;
            }
            b.text += static_cast<char>(v & 0xff);
          } else if (e == '\\' || e == '\'' || e == '"' || e == '?') {
            b.text += e;
          } else {
            b.text += '\\';
            b.text += e;
          }
          break;
      }
    }
  }

  // `out` is null inside double quotes (no field splitting there).
  bool LexDollar(int idx, WordBuilder& b, bool in_dq, std::vector<ShellWord>* out) {
    const char n = Peek(1);
    if (n == '\'' && !in_dq) return LexAnsiC(b);
    if (n == '"' && !in_dq) {
      pos_ += 2;
      return LexDoubleQuoted(idx, b);
    }
    if (n == '(') {
      if (PeekIs(2, '(')) {
        size_t end = 0;
        if (ScanArithmetic(pos_ + 3, &end)) {
          const std::string_view body = src_.substr(pos_ + 3, end - (pos_ + 3));
          b.text.append(src_.substr(pos_, end + 2 - pos_));
          b.flags |= kWordExpansion;
          b.started = true;
          pos_ = end + 2;
          return ScanEmbedded(idx, body);
        }
      }
      return LexSubstitution(idx, b, CommandOrigin::kCommandSubst);
    }
    if (n == '{') return LexBraceParameter(idx, b, in_dq, out);
    if (IsNameStart(n)) {
      size_t e = pos_ + 1;
      while (e < src_.size() && IsNameChar(src_[e])) ++e;
      const std::string_view name = src_.substr(pos_ + 1, e - pos_ - 1);
      if (name == "IFS" && out != nullptr) {
        pos_ = e;
        return Flush(b, *out);  // unquoted $IFS splits the word (default IFS)
      }
      b.text.append(src_.substr(pos_, e - pos_));
      b.flags |= kWordExpansion;
      b.started = true;
      pos_ = e;
      return true;
    }
    if (IsDigit(n) || n == '@' || n == '*' || n == '#' || n == '?' || n == '-' || n == '$' ||
        n == '!') {
      b.text.append(src_.substr(pos_, 2));
      b.flags |= kWordExpansion;
      b.started = true;
      pos_ += 2;
      return true;
    }
    b.text += '$';
    b.started = true;
    ++pos_;
    return true;
  }

  bool LexBraceParameter(int idx, WordBuilder& b, bool in_dq, std::vector<ShellWord>* out) {
    DepthGuard guard(*this);
    if (!guard.ok()) return false;
    const size_t start = pos_;
    pos_ += 2;
    const std::string_view after = src_.substr(pos_);
    const bool is_ifs = after.starts_with("IFS") && after.size() > 3 && !IsNameChar(after[3]);
    WordBuilder scratch;
    while (true) {
      if (AtEnd()) return Syntax("unterminated ${");
      const char c = Peek();
      if (c == '}') {
        ++pos_;
        break;
      }
      if (c == '\\') {
        pos_ += 2;
      } else if (c == '\'' && !in_dq) {
        const size_t e = src_.find('\'', pos_ + 1);
        if (e == std::string_view::npos) return Syntax("unterminated single quote");
        pos_ = e + 1;
      } else if (c == '"') {
        ++pos_;
        if (!LexDoubleQuoted(idx, scratch)) return false;
      } else if (c == '$') {
        if (!LexDollar(idx, scratch, true, nullptr)) return false;
      } else if (c == '`') {
        if (!LexBacktick(idx, scratch, true)) return false;
      } else {
        ++pos_;
      }
    }
    if (pos_ > src_.size()) pos_ = src_.size();
    if (is_ifs && out != nullptr) return Flush(b, *out);
    b.text.append(src_.substr(start, pos_ - start));
    b.flags |= kWordExpansion | (scratch.flags & (kWordCommandSubst | kWordProcessSubst));
    b.started = true;
    return true;
  }

  // $( ... ), <( ... ) or >( ... ) at the cursor.
  bool LexSubstitution(int idx, WordBuilder& b, CommandOrigin origin) {
    const size_t start = pos_;
    pos_ += 2;
    const int saved_parent = parent_;
    const CommandOrigin saved_origin = origin_;
    const bool saved_inherit = inherit_piped_;
    const int saved_pipeline = cur_pipeline_;
    const int saved_pos = cur_pos_;
    parent_ = idx;
    origin_ = origin;
    inherit_piped_ = false;
    cur_pos_ = 0;
    Stops stops;
    stops.paren = true;
    const bool ok = ParseSequence(stops);
    parent_ = saved_parent;
    origin_ = saved_origin;
    inherit_piped_ = saved_inherit;
    cur_pipeline_ = saved_pipeline;
    cur_pos_ = saved_pos;
    if (!ok) return false;
    if (!PeekIs(0, ')')) return Syntax("unbalanced '('");
    ++pos_;
    b.text.append(src_.substr(start, pos_ - start));
    b.flags |= origin == CommandOrigin::kProcessSubst ? kWordProcessSubst : kWordCommandSubst;
    b.started = true;
    return true;
  }

  bool LexBacktick(int idx, WordBuilder& b, bool in_dq) {
    const size_t start = pos_;
    ++pos_;
    std::string body;
    while (true) {
      if (AtEnd()) return Syntax("unterminated backquote");
      const char c = Peek();
      if (c == '`') {
        ++pos_;
        break;
      }
      if (c == '\\' && pos_ + 1 < src_.size()) {
        const char n = Peek(1);
        if (n == '`' || n == '\\' || n == '$' || (in_dq && n == '"')) {
          body += n;
          pos_ += 2;
          continue;
        }
      }
      body += c;
      ++pos_;
    }
    DepthGuard guard(*this);
    if (!guard.ok()) return false;
    Parser sub(body, sh_);
    sub.parent_ = idx;
    sub.origin_ = CommandOrigin::kCommandSubst;
    sub.function_ = function_;
    if (!sub.ParseAll()) return false;
    b.text.append(src_.substr(start, pos_ - start));
    b.flags |= kWordCommandSubst;
    b.started = true;
    return true;
  }

  // From just inside `$((` or `((`: the offset of the closing "))", when the parentheses
  // balance that way (otherwise it is a command substitution holding a subshell).
  bool ScanArithmetic(size_t from, size_t* end) const {
    int depth = 0;
    for (size_t i = from; i < src_.size(); ++i) {
      const char c = src_[i];
      if (c == '(') {
        ++depth;
      } else if (c == ')') {
        if (depth == 0) {
          if (i + 1 < src_.size() && src_[i + 1] == ')') {
            *end = i;
            return true;
          }
          return false;
        }
        --depth;
      }
    }
    return false;
  }

  bool ScanEmbedded(int idx, std::string_view text) {
    if (text.find_first_of("$`") == std::string_view::npos) return true;
    DepthGuard guard(*this);
    if (!guard.ok()) return false;
    Parser sub(text, sh_);
    sub.function_ = function_;
    sub.origin_ = CommandOrigin::kCommandSubst;
    return sub.ScanExpansions(idx);
  }

  void ReadHeredocs() {
    std::vector<PendingHeredoc> pending = std::move(heredocs_);
    heredocs_.clear();
    for (const PendingHeredoc& h : pending) {
      std::string body;
      while (pos_ < src_.size()) {
        size_t eol = src_.find('\n', pos_);
        const size_t line_end = eol == std::string_view::npos ? src_.size() : eol;
        std::string_view line = src_.substr(pos_, line_end - pos_);
        pos_ = eol == std::string_view::npos ? src_.size() : eol + 1;
        if (h.strip_tabs) {
          while (!line.empty() && line.front() == '\t') line.remove_prefix(1);
        }
        if (line == h.delim) break;
        body.append(line);
        body += '\n';
      }
      if (h.expands && sh_.error.ok()) {
        // Errors in a heredoc body's substitutions surface through sh_.error.
        (void)ScanEmbedded(h.cmd, body);
      }
      Redirection& r = Cmd(h.cmd).redirections[h.redir];
      r.heredoc_body = std::move(body);
      r.heredoc_expands = h.expands;
    }
  }

  std::string_view src_;
  size_t pos_ = 0;
  Shared& sh_;
  int cur_pipeline_ = 0;
  int cur_pos_ = 0;
  bool inherit_piped_ = false;
  std::string_view stop_;
  std::vector<PendingHeredoc> heredocs_;
};

// Cheap checks over the raw text before parsing: total size, the longest run without
// whitespace or an operator character, and the number of separators.
Status CheckLimits(std::string_view input, const ParseLimits& limits) {
  if (input.size() > limits.max_input) {
    return ResourceExhaustedError("command is longer than " + std::to_string(limits.max_input) +
                                  " characters");
  }
  size_t run = 0;
  size_t separators = 0;
  for (const char c : input) {
    switch (c) {
      case ';': case '&': case '|': case '\n':
        ++separators;
        run = 0;
        break;
      case ' ': case '\t': case '(': case ')': case '<': case '>':
        run = 0;
        break;
      default:
        if (++run > limits.max_run) {
          return ResourceExhaustedError("command has more than " +
                                        std::to_string(limits.max_run) +
                                        " characters without a separator");
        }
    }
  }
  if (separators >= limits.max_separators) {
    return ResourceExhaustedError("command has " + std::to_string(separators) +
                                  " separators (limit " +
                                  std::to_string(limits.max_separators) + ")");
  }
  return Status::Ok();
}

}  // namespace

Result<ParsedScript> ParseShell(std::string_view input, const ParseLimits& limits) {
  if (Status s = CheckLimits(input, limits); !s.ok()) return Err(std::move(s));
  ParsedScript script;
  Shared shared;
  shared.out = &script;
  shared.limits = &limits;
  Parser parser(input, shared);
  const bool ok = parser.ParseAll();
  if (!shared.error.ok()) return Err(std::move(shared.error));
  if (!ok) return Err(InternalError("shell parser failed without a reason"));
  return script;
}

}  // namespace talaria::safety
