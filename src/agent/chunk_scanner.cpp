#include "agent/chunk_scanner.h"

#include <cstring>

#include "talaria/base/utf8.h"

namespace talaria::agent {
namespace {

constexpr int kMaxSkipDepth = 64;

class Scanner {
 public:
  explicit Scanner(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  void SkipSpace() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool AtEnd() {
    SkipSpace();
    return p_ == end_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  char Peek() {
    SkipSpace();
    return p_ < end_ ? *p_ : '\0';
  }
  bool ConsumeNull() {
    SkipSpace();
    if (end_ - p_ >= 4 && std::memcmp(p_, "null", 4) == 0) {
      p_ += 4;
      return true;
    }
    return false;
  }

  // A string (at its opening quote), unescaped into `out`.
  bool String(std::string& out) {
    out.clear();
    if (!Consume('"')) return false;
    bool ascii = true;
    for (;;) {
      const char* run = p_;
      while (p_ < end_) {
        const auto c = static_cast<unsigned char>(*p_);
        if (c == '"' || c == '\\' || c < 0x20) break;
        ascii &= c < 0x80;
        ++p_;
      }
      out.append(run, static_cast<size_t>(p_ - run));
      if (p_ == end_) return false;
      const char c = *p_++;
      if (c == '"') break;
      if (c != '\\') return false;  // a raw control character
      if (p_ == end_) return false;
      switch (*p_++) {
        case '"':
          out.push_back('"');
          break;
        case '\\':
          out.push_back('\\');
          break;
        case '/':
          out.push_back('/');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u': {
          char32_t cp = 0;
          if (!Hex4(cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            char32_t low = 0;
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
            p_ += 2;
            if (!Hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return false;  // a lone low surrogate
          }
          AppendUtf8(out, cp);
          ascii = false;
          break;
        }
        default:
          return false;
      }
    }
    return ascii || IsValidUtf8(out);
  }

  // An integer (no fraction or exponent).
  bool Int(int64_t& out) {
    SkipSpace();
    bool negative = false;
    if (p_ < end_ && *p_ == '-') {
      negative = true;
      ++p_;
    }
    if (p_ == end_ || *p_ < '0' || *p_ > '9') return false;
    int64_t value = 0;
    int digits = 0;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
      if (++digits > 18) return false;
      value = value * 10 + (*p_++ - '0');
    }
    if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
    out = negative ? -value : value;
    return true;
  }

  // Any value, unread. Strings are checked only for their end, not their contents.
  bool Skip(int depth = 0) {
    if (depth > kMaxSkipDepth) return false;
    const char c = Peek();
    if (c == '"') {
      ++p_;
      for (;;) {
        const void* q = std::memchr(p_, '"', static_cast<size_t>(end_ - p_));
        if (q == nullptr) return false;
        const char* quote = static_cast<const char*>(q);
        // The quote ends the string unless an odd number of backslashes precedes it.
        const char* b = quote;
        while (b > p_ && b[-1] == '\\') --b;
        p_ = quote + 1;
        if (((quote - b) & 1) == 0) return true;
      }
    }
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++p_;
      if (Consume(close)) return true;
      for (;;) {
        if (c == '{') {
          if (Peek() != '"' || !Skip(depth + 1) || !Consume(':')) return false;
        }
        if (!Skip(depth + 1)) return false;
        if (Consume(',')) continue;
        return Consume(close);
      }
    }
    // A number or a literal: up to the next delimiter.
    const char* start = p_;
    while (p_ < end_ && *p_ != ',' && *p_ != '}' && *p_ != ']' && *p_ != ' ' && *p_ != '\n' &&
           *p_ != '\r' && *p_ != '\t') {
      ++p_;
    }
    return p_ > start;
  }

  // A string or null into `out` (null leaves it empty).
  bool StringOrNull(std::string& out) {
    if (ConsumeNull()) {
      out.clear();
      return true;
    }
    return Peek() == '"' && String(out);
  }

 private:
  bool Hex4(char32_t& out) {
    if (end_ - p_ < 4) return false;
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = *p_++;
      int v = -1;
      if (c >= '0' && c <= '9') v = c - '0';
      if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
      if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
      if (v < 0) return false;
      out = (out << 4) | static_cast<char32_t>(v);
    }
    return true;
  }

  const char* p_;
  const char* end_;
};

// Calls `field(key)` for each member of the object at the scanner; `field` reads or skips the
// value and returns false to give up.
template <typename Field>
bool Object(Scanner& s, std::string& key, Field&& field) {
  if (!s.Consume('{')) return false;
  if (s.Consume('}')) return true;
  for (;;) {
    if (s.Peek() != '"' || !s.String(key) || !s.Consume(':')) return false;
    if (!field(key)) return false;
    if (s.Consume(',')) continue;
    return s.Consume('}');
  }
}

template <typename Element>
bool Array(Scanner& s, Element&& element) {
  if (!s.Consume('[')) return false;
  if (s.Consume(']')) return true;
  for (;;) {
    if (!element()) return false;
    if (s.Consume(',')) continue;
    return s.Consume(']');
  }
}

bool IndexOrNull(Scanner& s, bool& has, int64_t& index) {
  if (s.ConsumeNull()) {
    has = false;
    return true;
  }
  has = s.Int(index);
  return has;
}

bool ScanToolCall(Scanner& s, std::string& key, ScannedCall& call) {
  return Object(s, key, [&](const std::string& k) {
    if (k == "index") return IndexOrNull(s, call.has_index, call.index);
    if (k == "id") return s.StringOrNull(call.id);
    if (k == "function") {
      if (s.ConsumeNull()) return true;
      std::string inner;
      return Object(s, inner, [&](const std::string& f) {
        if (f == "name") return s.StringOrNull(call.name);
        if (f == "arguments") return s.StringOrNull(call.arguments);
        return s.Skip();
      });
    }
    return s.Skip();
  });
}

bool Delta(Scanner& s, std::string& key, ScannedChoice& choice) {
  return Object(s, key, [&](const std::string& k) {
    if (k == "content") return s.StringOrNull(choice.content);
    if (k == "reasoning_content") return s.StringOrNull(choice.reasoning_content);
    if (k == "reasoning") return s.StringOrNull(choice.reasoning);
    if (k == "refusal") return s.StringOrNull(choice.refusal);
    if (k == "tool_calls") {
      if (s.ConsumeNull()) return true;
      choice.calls.clear();
      std::string call_key;
      return Array(s, [&] {
        choice.calls.emplace_back();
        return ScanToolCall(s, call_key, choice.calls.back());
      });
    }
    return s.Skip();
  });
}

bool Choice(Scanner& s, std::string& key, ScannedChoice& choice) {
  return Object(s, key, [&](const std::string& k) {
    if (k == "index") return IndexOrNull(s, choice.has_index, choice.index);
    if (k == "finish_reason") return s.StringOrNull(choice.finish_reason);
    if (k == "delta") {
      if (s.ConsumeNull()) return true;
      std::string delta_key;
      return Delta(s, delta_key, choice);
    }
    return s.Skip();
  });
}

}  // namespace

bool ScanChunk(std::string_view data, ScannedChunk& out) {
  out.model.clear();
  out.choices.clear();
  Scanner s(data);
  std::string key;
  const bool ok = Object(s, key, [&](const std::string& k) {
    if (k == "choices") {
      out.choices.clear();
      if (s.ConsumeNull()) return true;
      std::string choice_key;
      return Array(s, [&] {
        out.choices.emplace_back();
        return Choice(s, choice_key, out.choices.back());
      });
    }
    if (k == "model") return s.StringOrNull(out.model);
    // An error, or usage, is for the full parser.
    if (k == "error" || k == "usage") return s.ConsumeNull();
    return s.Skip();
  });
  return ok && s.AtEnd();
}

}  // namespace talaria::agent
