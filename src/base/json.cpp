#include "talaria/base/json.h"

#include <nlohmann/json.hpp>

#include "base/swar.h"
#include "talaria/base/utf8.h"

namespace talaria {

size_t JsonNestingOverflowOffset(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string_view::npos;
}

namespace {

// The scanner behind IsValidJsonText: each method consumes one token at pos_ or fails.
class JsonScanner {
 public:
  explicit JsonScanner(std::string_view s) : s_(s) {}

  bool Whole(int limit) {
    std::string containers;  // '{' or '[' per open level
    SkipSpace();
    for (;;) {
      if (!Value(containers, limit)) return false;
      // After a value: close containers, or a comma and the next member.
      for (;;) {
        SkipSpace();
        if (containers.empty()) return pos_ == s_.size();
        if (pos_ >= s_.size()) return false;
        const char close = containers.back() == '{' ? '}' : ']';
        if (s_[pos_] == close) {
          ++pos_;
          containers.pop_back();
          continue;
        }
        if (s_[pos_] != ',') return false;
        ++pos_;
        SkipSpace();
        if (containers.back() == '{' && !Key()) return false;
        break;
      }
    }
  }

 private:
  // A value; an opening bracket only opens (its first member is read too, or it closes at once).
  bool Value(std::string& containers, int limit) {
    for (;;) {
      if (pos_ >= s_.size()) return false;
      const char c = s_[pos_];
      if (c != '{' && c != '[') return Scalar();
      if (static_cast<int>(containers.size()) >= limit) return false;
      ++pos_;
      SkipSpace();
      const char close = c == '{' ? '}' : ']';
      if (pos_ < s_.size() && s_[pos_] == close) {
        ++pos_;
        return true;  // an empty container is a complete value
      }
      containers.push_back(c);
      if (c == '{' && !Key()) return false;
    }
  }

  // A member name, the colon and the space before the value.
  bool Key() {
    if (!String()) return false;
    SkipSpace();
    if (pos_ >= s_.size() || s_[pos_] != ':') return false;
    ++pos_;
    SkipSpace();
    return true;
  }

  bool Scalar() {
    const char c = s_[pos_];
    if (c == '"') return String();
    if (c == '-' || (c >= '0' && c <= '9')) return Number();
    for (std::string_view word :
         {std::string_view("true"), std::string_view("false"), std::string_view("null")}) {
      if (s_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return true;
      }
    }
    return false;
  }

  bool String() {
    if (pos_ >= s_.size() || s_[pos_] != '"') return false;
    ++pos_;
    while (pos_ < s_.size()) {
      pos_ += swar::PlainJsonRun(s_.data() + pos_, s_.size() - pos_);
      if (pos_ >= s_.size()) break;
      const auto c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        if (!Escape()) return false;
      } else if (c >= 0x80) {
        if (!Utf8Sequence()) return false;
      } else {
        ++pos_;
      }
    }
    return false;
  }

  bool Escape() {
    if (++pos_ >= s_.size()) return false;
    const char e = s_[pos_++];
    if (e != 'u') return std::string_view("\"\\/bfnrt").find(e) != std::string_view::npos;
    unsigned unit = 0;
    if (!Hex4(unit)) return false;
    if (unit >= 0xDC00 && unit <= 0xDFFF) return false;  // a low surrogate with no high one
    if (unit < 0xD800 || unit > 0xDBFF) return true;
    if (s_.substr(pos_, 2) != "\\u") return false;
    pos_ += 2;
    return Hex4(unit) && unit >= 0xDC00 && unit <= 0xDFFF;
  }

  bool Hex4(unsigned& unit) {
    if (pos_ + 4 > s_.size()) return false;
    unit = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = s_[pos_++];
      unit <<= 4;
      if (h >= '0' && h <= '9') {
        unit |= static_cast<unsigned>(h - '0');
      } else if ((h | 0x20) >= 'a' && (h | 0x20) <= 'f') {
        unit |= static_cast<unsigned>((h | 0x20) - 'a' + 10);
      } else {
        return false;
      }
    }
    return true;
  }

  // One multi-byte UTF-8 sequence (no overlongs, no surrogates, at most U+10FFFF).
  bool Utf8Sequence() {
    const size_t len = Utf8SequenceLength(s_.substr(pos_));
    if (len < 2) return false;
    pos_ += len;
    return true;
  }

  bool Number() {
    if (s_[pos_] == '-') ++pos_;
    if (pos_ >= s_.size()) return false;
    if (s_[pos_] == '0') {
      ++pos_;
    } else if (!Digits()) {
      return false;
    }
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (!Digits()) return false;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!Digits()) return false;
    }
    return true;
  }

  bool Digits() {
    const size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    return pos_ > start;
  }

  void SkipSpace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

std::string JsonStringField(const Json& object, std::string_view key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool IsValidJsonText(std::string_view text, int limit) { return JsonScanner(text).Whole(limit); }

Result<Json> ParseJson(std::string_view text) {
  // Checked before nlohmann parses: its recursive parser would otherwise overflow the stack on
  // "[[[[..." long before any error is raised.
  if (JsonNestingOverflowOffset(text) != std::string_view::npos) {
    return Err(InvalidArgumentError("JSON nesting deeper than " + std::to_string(kMaxJsonDepth)));
  }
  // nlohmann throws some errors (number overflow) even with allow_exceptions=false.
  try {
    Json value = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (!value.is_discarded()) return value;
    // Re-run with exceptions only on the failure path to get a readable position.
    Json ignored = Json::parse(text.begin(), text.end());
    (void)ignored;
  } catch (const Json::exception& e) {
    return Err(InvalidArgumentError(e.what()));
  }
  return Err(InvalidArgumentError("invalid JSON"));
}

namespace {

struct Separators {
  std::string_view item;
  std::string_view key;
};

// nlohmann's serializer decodes every byte of every string; strings go through
// AppendJsonQuoted instead (byte for byte the same output), and only floats and the rare other
// scalars through nlohmann.
void AppendJson(const Json& v, const Separators& sep, std::string& out) {
  switch (v.type()) {
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, item] : v.items()) {
        if (!first) out += sep.item;
        first = false;
        AppendJsonQuoted(out, key);
        out += sep.key;
        AppendJson(item, sep, out);
      }
      out += '}';
      return;
    }
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& item : v) {
        if (!first) out += sep.item;
        first = false;
        AppendJson(item, sep, out);
      }
      out += ']';
      return;
    }
    case Json::value_t::string:
      AppendJsonQuoted(out, v.get_ref<const std::string&>());
      return;
    case Json::value_t::boolean:
      out += v.get<bool>() ? "true" : "false";
      return;
    case Json::value_t::null:
      out += "null";
      return;
    case Json::value_t::number_integer:
      out += std::to_string(v.get<int64_t>());
      return;
    case Json::value_t::number_unsigned:
      out += std::to_string(v.get<uint64_t>());
      return;
    default:
      out += v.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

}  // namespace

std::string DumpJson(const Json& value) {
  std::string out;
  AppendJson(value, {",", ":"}, out);
  return out;
}

std::string DumpJsonPythonStyle(const Json& value) {
  std::string out;
  AppendJson(value, {", ", ": "}, out);
  return out;
}

void AppendJsonQuoted(std::string& out, std::string_view s) {
  const size_t start = out.size();
  // Room for a few escapes too (newlines in a file, quotes in a JSON text): one allocation
  // rather than a doubling and a copy near the end.
  out.reserve(out.size() + s.size() + s.size() / 16 + 2);
  out += '"';
  size_t i = 0;
  for (;;) {
    // Runs of plain bytes are copied whole; only the bytes between them are looked at one by one.
    const size_t plain = swar::PlainJsonRun(s.data() + i, s.size() - i);
    out.append(s.data() + i, plain);
    i += plain;
    if (i == s.size()) break;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t len = Utf8SequenceLength(s.substr(i));
      if (len == 0) {  // rare: let nlohmann apply its replacement rules to the whole string
        out.resize(start);
        out += Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
        return;
      }
      out.append(s.data() + i, len);
      i += len;
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
    }
  }
  out += '"';
}

std::string JsonQuote(std::string_view s) {
  std::string out;
  AppendJsonQuoted(out, s);
  return out;
}

}  // namespace talaria
