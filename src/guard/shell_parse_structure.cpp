// The grammar above the simple command: command lists (; & newline), && and || chains,
// pipelines (with ! and time), and the compound commands — subshells, { } groups, (( )),
// if, while/until, for/select, case, [[ ]], coproc and function definitions — including
// where each sequence stops.
#include "guard/shell_parser_internal.h"

#include <cctype>

#include <algorithm>
#include <array>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace talaria::safety::shell_internal {

namespace {

constexpr std::array<std::string_view, 8> kClosingWords = {"then", "elif", "else", "fi",
                                                           "do",   "done", "esac", "}"};

}  // namespace

Parser::StopResult Parser::CheckStop(const Stops& stops) {
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

bool Parser::ParseSequence(const Stops& stops) {
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

bool Parser::ParseAndOr() {
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

bool Parser::ParsePipeline() {
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

bool Parser::ExpectWord(std::string_view w) {
  SkipLinebreaks();
  if (PeekWordLiteral() != w) return Syntax("expected '" + std::string(w) + "'");
  ConsumeWord(w);
  return true;
}

bool Parser::ParseCommand() {
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
    while (n < src_.size() &&
           (std::isalnum(static_cast<unsigned char>(src_[n])) || src_[n] == '_')) {
      ++n;
    }
    size_t after = n;
    while (after < src_.size() && (src_[after] == ' ' || src_[after] == '\t')) ++after;
    if (n > pos_ && after > n && after < src_.size() &&
        (src_[after] == '{' || src_[after] == '(')) {
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

bool Parser::ParseIf(size_t begin) {
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

bool Parser::ParseFor(std::string_view keyword, size_t begin) {
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

bool Parser::ParseCase(size_t begin) {
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

bool Parser::ParseDoubleBracket(size_t begin) {
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

bool Parser::ParseFunctionBody(const std::string& name) {
  DepthGuard guard(*this);
  if (!guard.ok()) return false;
  SkipLinebreaks();
  std::string saved = std::move(function_);
  function_ = name;
  const bool ok = ParseCommand();
  function_ = std::move(saved);
  return ok;
}

}  // namespace talaria::safety::shell_internal
