#include "talaria/core/coercion.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/compiled_schema.h"
#include "talaria/core/registry.h"

namespace talaria {

enum class JsonType : unsigned char {
  kString,
  kInteger,
  kNumber,
  kBoolean,
  kNull,
  kArray,
  kObject
};

// What coercion does with a value under a node, decided once when the plan is compiled for the
// shapes most parameters have: a plain string (nothing to do), an integer or a boolean.
enum class Shape : unsigned char { kGeneral, kInert, kInteger, kBoolean };

// A property's name and node. Not a std::pair: clang cannot instantiate pair<string, Node>
// inside Node's own definition (its constructor traits need Node complete).
struct NamedNode;

struct CoercionPlan::Node {
  Shape shape = Shape::kGeneral;
  std::vector<JsonType> types;  // the declared "type", in declaration order
  bool allows_null = false;
  bool object_has_required = false;
  std::unique_ptr<Node> items;
  std::vector<NamedNode> properties;
  std::vector<Node> branches;  // anyOf / oneOf / allOf

  bool Declares(JsonType t) const {
    for (JsonType d : types) {
      if (d == t) return true;
    }
    return false;
  }
  // `hint` is where the search starts and, on a match, becomes the next position: a model
  // usually sends the arguments in the schema's order, so each lookup is then one comparison.
  const Node* Property(std::string_view name, size_t& hint) const;

 private:
  // Keys are a few bytes: an inline loop beats a call to memcmp.
  static bool SameKey(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }
};

struct NamedNode {
  std::string first;
  CoercionPlan::Node second;
};

inline const CoercionPlan::Node* CoercionPlan::Node::Property(std::string_view name,
                                                              size_t& hint) const {
  const size_t n = properties.size();
  for (size_t k = 0; k < n; ++k) {
    size_t i = hint + k;
    if (i >= n) i -= n;
    if (SameKey(properties[i].first, name)) {
      hint = i + 1;
      return &properties[i].second;
    }
  }
  return nullptr;
}

namespace {

using Node = CoercionPlan::Node;

std::optional<JsonType> TypeFromName(std::string_view name) {
  if (name == "string") return JsonType::kString;
  if (name == "integer") return JsonType::kInteger;
  if (name == "number") return JsonType::kNumber;
  if (name == "boolean") return JsonType::kBoolean;
  if (name == "null") return JsonType::kNull;
  if (name == "array") return JsonType::kArray;
  if (name == "object") return JsonType::kObject;
  return std::nullopt;
}

// The node's Shape: kInert when no value under it is ever changed (only "string" declared, or
// nothing, with no null, branches, items or properties), kInteger/kBoolean for that one
// scalar type alone.
Shape ShapeOf(const Node& node) {
  if (node.allows_null || !node.branches.empty() || node.items || !node.properties.empty()) {
    return Shape::kGeneral;
  }
  bool only_strings = true;
  for (JsonType t : node.types) only_strings = only_strings && t == JsonType::kString;
  if (only_strings) return Shape::kInert;
  if (node.types.size() == 1 && node.types[0] == JsonType::kInteger) return Shape::kInteger;
  if (node.types.size() == 1 && node.types[0] == JsonType::kBoolean) return Shape::kBoolean;
  return Shape::kGeneral;
}

void CompileNode(const Json& schema, Node& node, int depth) {
  // Deeper schemas are legal but never need coercion that deep; stopping bounds the work.
  if (!schema.is_object() || depth > 32) return;
  if (auto it = schema.find("type"); it != schema.end()) {
    auto add = [&](const Json& t) {
      if (!t.is_string()) return;
      if (auto jt = TypeFromName(t.get_ref<const std::string&>())) {
        node.types.push_back(*jt);
        if (*jt == JsonType::kNull) node.allows_null = true;
      }
    };
    if (it->is_array()) {
      for (const auto& t : *it) add(t);
    } else {
      add(*it);
    }
  }
  if (auto it = schema.find("nullable");
      it != schema.end() && it->is_boolean() && it->get<bool>()) {
    node.allows_null = true;
  }
  if (auto it = schema.find("required"); it != schema.end() && it->is_array() && !it->empty()) {
    node.object_has_required = true;
  }
  if (auto it = schema.find("items"); it != schema.end() && it->is_object()) {
    node.items = std::make_unique<Node>();
    CompileNode(*it, *node.items, depth + 1);
  }
  if (auto it = schema.find("properties"); it != schema.end() && it->is_object()) {
    node.properties.reserve(it->size());
    for (const auto& [key, sub] : it->items()) {
      node.properties.push_back(NamedNode{key, Node{}});
      CompileNode(sub, node.properties.back().second, depth + 1);
    }
  }
  for (const char* keyword : {"anyOf", "oneOf", "allOf"}) {
    auto it = schema.find(keyword);
    if (it == schema.end() || !it->is_array()) continue;
    for (const auto& branch : *it) {
      node.branches.emplace_back();
      CompileNode(branch, node.branches.back(), depth + 1);
      const Node& b = node.branches.back();
      if (b.types.size() == 1 && b.types[0] == JsonType::kNull) node.allows_null = true;
    }
  }
  node.shape = ShapeOf(node);
}

// Python's str.strip() set for ASCII. A loop, not find_first_not_of: arguments are short and
// usually untrimmed, and the library call (memchr per byte) cost more than the coercion itself.
constexpr bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string_view Trim(std::string_view s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && IsSpace(s[b])) ++b;
  while (e > b && IsSpace(s[e - 1])) --e;
  return s.substr(b, e - b);
}

bool EqualsIgnoreCase(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

// Digits, optionally signed, at most 15 of them: every such text is exactly representable as a
// double, so float(text) is integral and equals this integer ("-0" gives 0, as int(-0.0) does).
// The common case of a model's "42" skips the general float parse.
std::optional<int64_t> ParseShortDecimalInteger(std::string_view s) {
  constexpr size_t kMaxExactDigits = 15;  // 10^15 < 2^53
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty() || s.size() > kMaxExactDigits) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return negative ? -v : v;
}

// Python float() syntax: surrounding whitespace, a sign, digits with single underscores
// between them, a fraction, an exponent, or inf/infinity/nan in any case. Hex is refused.
std::optional<double> ParseFloatLikePython(std::string_view text) {
  std::string_view s = Trim(text);
  if (s.empty()) return std::nullopt;
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (EqualsIgnoreCase(s, "inf") || EqualsIgnoreCase(s, "infinity")) {
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  if (EqualsIgnoreCase(s, "nan")) return std::numeric_limits<double>::quiet_NaN();
  std::string digits;
  digits.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '_') {
      const bool between_digits = i > 0 && i + 1 < s.size() &&
                                  std::isdigit(static_cast<unsigned char>(s[i - 1])) &&
                                  std::isdigit(static_cast<unsigned char>(s[i + 1]));
      if (!between_digits) return std::nullopt;
      continue;
    }
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' ||
          c == '+' || c == '-')) {
      return std::nullopt;
    }
    digits += c;
  }
  double value = 0;
  const char* end = digits.data() + digits.size();
  auto [ptr, ec] = std::from_chars(digits.data(), end, value, std::chars_format::general);
  if (ptr != end) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    // Python turns overflow into inf only via "inf"; a huge literal is an OverflowError.
    return std::nullopt;
  }
  if (ec != std::errc()) return std::nullopt;
  return negative ? -value : value;
}

// Returns true when `value` (a string) was replaced by a coerced value of type `t`.
bool CoerceStringAs(Json& value, JsonType t, const Node& node) {
  const std::string& s = value.get_ref<const std::string&>();
  switch (t) {
    case JsonType::kInteger:
    case JsonType::kNumber: {
      if (auto i = ParseShortDecimalInteger(s)) {
        value = *i;
        return true;
      }
      auto f = ParseFloatLikePython(s);
      if (!f) return false;
      if (!std::isfinite(*f)) {
        value = *f;
        return true;
      }
      if (*f == std::floor(*f)) {
        // Integral: an int, as in the original; beyond int64 the nearest JSON form is a float.
        if (std::fabs(*f) < 9.2e18) {
          value = static_cast<int64_t>(*f);
        } else {
          value = *f;
        }
        return true;
      }
      if (t == JsonType::kInteger) return false;  // "42.5" for an integer stays a string
      value = *f;
      return true;
    }
    case JsonType::kBoolean: {
      std::string_view v = Trim(s);
      if (EqualsIgnoreCase(v, "true")) {
        value = true;
        return true;
      }
      if (EqualsIgnoreCase(v, "false")) {
        value = false;
        return true;
      }
      return false;
    }
    case JsonType::kNull:
      if (EqualsIgnoreCase(Trim(s), "null")) {
        value = nullptr;
        return true;
      }
      return false;
    case JsonType::kArray: {
      auto parsed = ParseJson(s);
      if (parsed && parsed->is_array()) {
        value = std::move(*parsed);
        return true;
      }
      // A string is itself acceptable when the schema also allows strings.
      if (node.Declares(JsonType::kString)) return false;
      Json wrapped = Json::array();
      wrapped.push_back(std::move(value));
      value = std::move(wrapped);
      return true;
    }
    case JsonType::kObject: {
      if (Trim(s).empty() && !node.object_has_required) {
        value = Json::object();
        return true;
      }
      auto parsed = ParseJson(s);
      if (parsed && parsed->is_object()) {
        value = std::move(*parsed);
        return true;
      }
      return false;
    }
    case JsonType::kString:
      return false;
  }
  return false;
}

void CoerceValue(Json& value, const Node& node, int depth);

// CoerceValue with the common shapes done inline; the same result for every value. A
// non-string under a scalar or inert node never changes (nothing to wrap, nothing inside).
void CoerceProperty(Json& value, const Node& node, int depth) {
  switch (node.shape) {
    case Shape::kInert:
      return;
    case Shape::kInteger:
      if (!value.is_string()) return;
      if (auto i = ParseShortDecimalInteger(value.get_ref<const std::string&>())) {
        value = *i;
        return;
      }
      break;  // floats, whitespace, inf: the general path
    case Shape::kBoolean: {
      if (!value.is_string()) return;
      const std::string_view v = Trim(value.get_ref<const std::string&>());
      if (EqualsIgnoreCase(v, "true")) {
        value = true;
      } else if (EqualsIgnoreCase(v, "false")) {
        value = false;
      }
      return;
    }
    case Shape::kGeneral:
      break;
  }
  CoerceValue(value, node, depth);
}

void CoerceChildren(Json& value, const Node& node, int depth) {
  if (value.is_object()) {
    if (!node.properties.empty()) {
      // The object's own pairs, not items(): its proxy builds two strings per element.
      size_t hint = 0;
      for (auto& [key, child] : value.get_ref<Json::object_t&>()) {
        const Node* prop = node.Property(key, hint);
        if (prop != nullptr) CoerceProperty(child, *prop, depth + 1);
      }
    }
    for (const Node& branch : node.branches) {
      if (!branch.properties.empty()) CoerceChildren(value, branch, depth);
    }
  } else if (value.is_array()) {
    const Node* items = node.items.get();
    if (items == nullptr) {
      for (const Node& branch : node.branches) {
        if (branch.items) {
          items = branch.items.get();
          break;
        }
      }
    }
    if (items != nullptr) {
      for (auto& element : value) CoerceValue(element, *items, depth + 1);
    }
  }
}

void CoerceValue(Json& value, const Node& node, int depth) {
  if (depth > 64) return;
  if (value.is_string()) {
    if (node.allows_null && EqualsIgnoreCase(Trim(value.get_ref<const std::string&>()), "null")) {
      value = nullptr;
      return;
    }
    bool changed = false;
    for (JsonType t : node.types) {
      if (CoerceStringAs(value, t, node)) {
        changed = true;
        break;
      }
    }
    if (!changed && node.types.empty()) {
      for (const Node& branch : node.branches) {
        Json candidate = value;
        CoerceValue(candidate, branch, depth + 1);
        if (candidate != value) {
          value = std::move(candidate);
          return;
        }
      }
    }
    if (changed) CoerceChildren(value, node, depth);
    return;
  }
  if (!value.is_array() && !value.is_object() && !value.is_null() && node.types.size() == 1 &&
      node.types[0] == JsonType::kArray) {
    // A bare scalar where only an array is allowed: the model meant a one-element list.
    Json wrapped = Json::array();
    wrapped.push_back(std::move(value));
    value = std::move(wrapped);
  }
  CoerceChildren(value, node, depth);
}

}  // namespace

CoercionPlan::CoercionPlan(std::unique_ptr<Node> root) : root_(std::move(root)) {}
CoercionPlan::CoercionPlan(CoercionPlan&&) noexcept = default;
CoercionPlan& CoercionPlan::operator=(CoercionPlan&&) noexcept = default;
CoercionPlan::~CoercionPlan() = default;

CoercionPlan CoercionPlan::Compile(const Json& parameters) {
  auto root = std::make_unique<Node>();
  CompileNode(parameters, *root, 0);
  return CoercionPlan(std::move(root));
}

void CoercionPlan::Coerce(Json& args) const {
  if (!args.is_object() || root_ == nullptr) return;
  CoerceChildren(args, *root_, 0);
}

Json CoerceToolArgs(const Registry& registry, std::string_view tool_name, Json args) {
  // Coerce calls into no registry, so the peeked entry outlives its use.
  if (const ToolEntry* entry = registry.PeekEntry(tool_name))
    entry->compiled().coercion().Coerce(args);
  return args;
}

}  // namespace talaria
