#include "agent/argument_repair.h"

#include <algorithm>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/text_util.h"
#include "talaria/base/strings.h"

namespace talaria::agent {
namespace {

constexpr size_t kPreviewChars = 200;

// Removes `<|...|>` tokens (bounded length, no nesting) anywhere in the text.
std::string StripSpecialTokens(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 2, "<|") == 0) {
      const size_t end = text.find("|>", i + 2);
      if (end != std::string_view::npos && end - i <= 64) {
        i = end + 2;
        continue;
      }
    }
    out.push_back(text[i++]);
  }
  return out;
}

// ```json\n{...}\n``` -> {...}
std::string_view StripFence(std::string_view text) {
  text = Trim(text);
  if (text.substr(0, 3) != "```") return text;
  const size_t newline = text.find('\n');
  if (newline == std::string_view::npos) return text;
  std::string_view body = text.substr(newline + 1);
  body = Trim(body);
  if (body.size() >= 3 && body.substr(body.size() - 3) == "```") body.remove_suffix(3);
  return Trim(body);
}

void AppendControlEscape(std::string& out, unsigned char c) {
  switch (c) {
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    case '\b':
      out += "\\b";
      return;
    case '\f':
      out += "\\f";
      return;
    default: {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
}

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// One pass over the text outside and inside strings: single-quoted strings become double-quoted,
// raw control characters inside strings are escaped, Python literals become JSON ones, trailing
// commas go, stray closers go, and missing closers are appended. nullopt when the text ends
// inside a string (a cut-off value) or the brackets cross.
std::optional<std::string> NormalizeJsonText(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  std::vector<char> open;  // expected closers
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      const char quote = c;
      out.push_back('"');
      ++i;
      bool closed = false;
      while (i < text.size()) {
        const char s = text[i];
        if (s == '\\' && i + 1 < text.size()) {
          const char next = text[i + 1];
          if (quote == '\'' && next == '\'') {
            out.push_back('\'');
          } else {
            out.push_back('\\');
            out.push_back(next);
          }
          i += 2;
          continue;
        }
        if (s == quote) {
          ++i;
          closed = true;
          break;
        }
        if (s == '"') {  // inside a single-quoted string
          out += "\\\"";
        } else if (static_cast<unsigned char>(s) < 0x20) {
          AppendControlEscape(out, static_cast<unsigned char>(s));
        } else {
          out.push_back(s);
        }
        ++i;
      }
      if (!closed) return std::nullopt;
      out.push_back('"');
      continue;
    }
    if (c == '{' || c == '[') {
      open.push_back(c == '{' ? '}' : ']');
      out.push_back(c);
      ++i;
      continue;
    }
    if (c == '}' || c == ']') {
      if (open.empty()) {  // a stray closer after the value ended
        ++i;
        continue;
      }
      if (open.back() != c) return std::nullopt;
      open.pop_back();
      out.push_back(c);
      ++i;
      continue;
    }
    if (c == ',') {
      size_t j = i + 1;
      while (j < text.size() &&
             (text[j] == ' ' || text[j] == '\n' || text[j] == '\r' || text[j] == '\t')) {
        ++j;
      }
      if (j == text.size() || text[j] == '}' || text[j] == ']') {  // a trailing comma
        i = j;
        continue;
      }
      out.push_back(c);
      ++i;
      continue;
    }
    if (IsWordChar(c) && (i == 0 || !IsWordChar(text[i - 1]))) {
      size_t j = i;
      while (j < text.size() && IsWordChar(text[j])) ++j;
      const std::string_view word = text.substr(i, j - i);
      if (word == "True") {
        out += "true";
      } else if (word == "False") {
        out += "false";
      } else if (word == "None") {
        out += "null";
      } else {
        out.append(word);
      }
      i = j;
      continue;
    }
    out.push_back(c);
    ++i;
  }
  while (!open.empty()) {
    out.push_back(open.back());
    open.pop_back();
  }
  return out;
}

// An object, or an object serialized inside a string (one level), else nullopt.
std::optional<Json> AsObject(Json value) {
  if (value.is_object()) return value;
  if (value.is_string()) {
    auto inner = ParseJson(value.get_ref<const std::string&>());
    if (inner && inner->is_object()) return std::move(*inner);
  }
  return std::nullopt;
}

std::string Preview(std::string_view raw) {
  if (raw.size() <= kPreviewChars) return std::string(raw);
  return std::string(Utf8Prefix(raw, kPreviewChars)) + "...";
}

tl::unexpected<Status> Refuse(std::string_view raw, std::string_view why) {
  std::string message = "The arguments are not a valid JSON object (" + std::string(why) +
                        "), so the call was not run. Arguments received: " + Preview(raw) +
                        " — send the call again with its arguments as one JSON object.";
  return Err(InvalidArgumentError(std::move(message)));
}

void SortKeys(const Json& in, nlohmann::json& out) {
  if (in.is_object()) {
    out = nlohmann::json::object();
    for (const auto& [key, value] : in.items()) SortKeys(value, out[key]);
  } else if (in.is_array()) {
    out = nlohmann::json::array();
    for (const auto& value : in) {
      nlohmann::json item;
      SortKeys(value, item);
      out.push_back(std::move(item));
    }
  } else {
    out = nlohmann::json::parse(in.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
}

}  // namespace

Result<RepairedArguments> RepairArguments(std::string_view raw) {
  if (IsBlank(raw)) return RepairedArguments{Json::object(), false};
  if (auto strict = ParseJson(raw)) {
    const bool was_object = strict->is_object();
    if (auto object = AsObject(std::move(*strict))) {
      return RepairedArguments{std::move(*object), !was_object};
    }
    return Refuse(raw, "the value is not an object");
  }
  const std::string stripped = StripSpecialTokens(raw);
  const std::string_view body = StripFence(stripped);
  if (body.empty()) return RepairedArguments{Json::object(), true};
  std::optional<std::string> normalized = NormalizeJsonText(body);
  if (!normalized) {
    return Refuse(raw, body.find_first_of("\"'") != std::string_view::npos
                           ? "it ends inside a string or its brackets do not match; it looks "
                             "cut off"
                           : "its brackets do not match");
  }
  auto parsed = ParseJson(*normalized);
  if (!parsed) return Refuse(raw, parsed.error().message());
  if (auto object = AsObject(std::move(*parsed)))
    return RepairedArguments{std::move(*object), true};
  return Refuse(raw, "the value is not an object");
}

std::string CanonicalArguments(const Json& args) {
  nlohmann::json sorted;
  SortKeys(args, sorted);
  return sorted.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace talaria::agent
