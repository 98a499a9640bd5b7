#include "talaria/base/json.h"

#include <nlohmann/json.hpp>

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

std::string DumpJson(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

namespace {

void AppendPythonStyle(const Json& v, std::string& out) {
  if (v.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, item] : v.items()) {
      if (!first) out += ", ";
      first = false;
      out += JsonQuote(key);
      out += ": ";
      AppendPythonStyle(item, out);
    }
    out += '}';
  } else if (v.is_array()) {
    out += '[';
    bool first = true;
    for (const auto& item : v) {
      if (!first) out += ", ";
      first = false;
      AppendPythonStyle(item, out);
    }
    out += ']';
  } else {
    out += DumpJson(v);
  }
}

}  // namespace

std::string DumpJsonPythonStyle(const Json& value) {
  std::string out;
  AppendPythonStyle(value, out);
  return out;
}

void AppendJsonQuoted(std::string& out, std::string_view s) {
  if (!IsValidUtf8(s)) {  // rare: let nlohmann apply its replacement rules
    out += Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
    return;
  }
  out.reserve(out.size() + s.size() + 2);
  out += '"';
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

std::string JsonQuote(std::string_view s) {
  std::string out;
  AppendJsonQuoted(out, s);
  return out;
}

}  // namespace talaria
