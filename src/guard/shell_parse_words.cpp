// Shell words: quote removal ('...', "...", $'...' and backslashes), globs, tilde and
// brace expansion, $IFS splitting, parameter expansions and arithmetic, and the $( ),
// backtick and <( ) >( ) substitutions inside words, whose commands are parsed as children
// of the command that holds the word.
#include "guard/shell_parser_internal.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "talaria/base/strings.h"
#include "talaria/base/utf8.h"

namespace talaria::safety::shell_internal {

namespace {

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

}  // namespace

bool Parser::ScanExpansions(int cmd) {
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

bool Parser::Flush(WordBuilder& b, std::vector<ShellWord>& out) {
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

bool Parser::LexWord(int idx, std::vector<ShellWord>& out) {
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

bool Parser::LexDoubleQuoted(int idx, WordBuilder& b) {
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

bool Parser::LexAnsiC(WordBuilder& b) {
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
      case 'a':
        b.text += '\a';
        break;
      case 'b':
        b.text += '\b';
        break;
      case 'e':
      case 'E':
        b.text += '\x1b';
        break;
      case 'f':
        b.text += '\f';
        break;
      case 'n':
        b.text += '\n';
        break;
      case 'r':
        b.text += '\r';
        break;
      case 't':
        b.text += '\t';
        break;
      case 'v':
        b.text += '\v';
        break;
      case 'c':
        if (!AtEnd()) {
          b.text += static_cast<char>(Peek() & 0x1f);
          ++pos_;
        }
        break;
      case 'x':
      case 'u':
      case 'U': {
        const int max_digits = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
        uint32_t v = 0;
        int n = 0;
        while (n < max_digits && !AtEnd() && HexDigitValue(Peek()) >= 0) {
          v = v * 16 + static_cast<uint32_t>(HexDigitValue(Peek()));
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

bool Parser::LexDollar(int idx, WordBuilder& b, bool in_dq, std::vector<ShellWord>* out) {
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

bool Parser::LexBraceParameter(int idx, WordBuilder& b, bool in_dq, std::vector<ShellWord>* out) {
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

bool Parser::LexSubstitution(int idx, WordBuilder& b, CommandOrigin origin) {
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

bool Parser::LexBacktick(int idx, WordBuilder& b, bool in_dq) {
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

bool Parser::ScanArithmetic(size_t from, size_t* end) const {
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

bool Parser::ScanEmbedded(int idx, std::string_view text) {
  if (text.find_first_of("$`") == std::string_view::npos) return true;
  DepthGuard guard(*this);
  if (!guard.ok()) return false;
  Parser sub(text, sh_);
  sub.function_ = function_;
  sub.origin_ = CommandOrigin::kCommandSubst;
  return sub.ScanExpansions(idx);
}

}  // namespace talaria::safety::shell_internal
