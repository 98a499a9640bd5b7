// JSON value helpers for the schema validator: equality and hashing with JSON Schema's notion
// of sameness (1 == 1.0, member order irrelevant), exact-where-possible number comparison, and
// bounded value rendering for messages.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/schema_validator_internal.h"

namespace talaria::schema_internal {
namespace {

// Instance values quoted in messages are cut to this many bytes.
constexpr size_t kMaxQuotedValueBytes = 80;
// Arrays up to this size are checked for duplicates pairwise, larger ones by hashing.
constexpr size_t kPairwiseUniqueLimit = 16;

bool IsNegativeInteger(const Json& v) {
  return v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() < 0;
}

bool NumbersEqual(const Json& a, const Json& b) {
  if (a.is_number_float() || b.is_number_float()) return a.get<double>() == b.get<double>();
  // Both integral: compare exactly, signed against unsigned included.
  const bool a_negative = IsNegativeInteger(a);
  if (a_negative != IsNegativeInteger(b)) return false;
  if (a_negative) return a.get<int64_t>() == b.get<int64_t>();
  return a.get<uint64_t>() == b.get<uint64_t>();
}

bool ObjectsEqual(const Json& a, const Json& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [key, value] : a.get_ref<const Json::object_t&>()) {
    const auto it = b.find(key);
    if (it == b.end() || !JsonEqual(value, *it)) return false;
  }
  return true;
}

bool ArraysEqual(const Json& a, const Json& b) {
  const auto& xs = a.get_ref<const Json::array_t&>();
  const auto& ys = b.get_ref<const Json::array_t&>();
  if (xs.size() != ys.size()) return false;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!JsonEqual(xs[i], ys[i])) return false;
  }
  return true;
}

size_t Mix(size_t seed, size_t h) {
  return seed ^ (h + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

const char* KindName(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "number";
    case Json::value_t::string:
      return "string";
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    default:
      return "value";
  }
}

}  // namespace

bool JsonEqual(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) return NumbersEqual(a, b);
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case Json::value_t::object:
      return ObjectsEqual(a, b);
    case Json::value_t::array:
      return ArraysEqual(a, b);
    default:
      return a == b;
  }
}

size_t JsonHash(const Json& v) {
  switch (v.type()) {
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: {
      // Through double so 1 and 1.0 collide; +0.0 for -0.0 keeps them equal too.
      const double d = v.get<double>();
      return std::hash<double>{}(d == 0 ? 0.0 : d);
    }
    case Json::value_t::string:
      return std::hash<std::string>{}(v.get_ref<const std::string&>());
    case Json::value_t::boolean:
      return v.get<bool>() ? 0x51 : 0x52;
    case Json::value_t::null:
      return 0x53;
    case Json::value_t::array: {
      size_t h = 0x54;
      for (const auto& item : v) h = Mix(h, JsonHash(item));
      return h;
    }
    case Json::value_t::object: {
      // A sum does not depend on member order.
      size_t h = 0x55;
      for (const auto& [key, value] : v.get_ref<const Json::object_t&>()) {
        h += Mix(std::hash<std::string>{}(key), JsonHash(value));
      }
      return h;
    }
    default:
      return 0;
  }
}

bool IsIntegral(const Json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && std::trunc(d) == d;
}

std::string Truncate(std::string text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t cut = max_bytes;
  // Never split a UTF-8 sequence: back up over continuation bytes.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  text += "...";
  return text;
}

std::string DescribeValue(const Json& v) {
  if (v.is_null()) return "null";
  return std::string(KindName(v)) + " " + Truncate(DumpJson(v), kMaxQuotedValueBytes);
}

uint64_t CountCodePoints(std::string_view s) {
  uint64_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

int CompareNumber(const Json& v, const Number& limit) {
  if (limit.is_int && v.is_number_unsigned()) {
    if (limit.int_value < 0) return 1;
    const uint64_t x = v.get<uint64_t>(), l = static_cast<uint64_t>(limit.int_value);
    return x < l ? -1 : (x > l ? 1 : 0);
  }
  if (limit.is_int && v.is_number_integer()) {
    const int64_t x = v.get<int64_t>();
    return x < limit.int_value ? -1 : (x > limit.int_value ? 1 : 0);
  }
  const double x = v.get<double>();
  return x < limit.value ? -1 : (x > limit.value ? 1 : 0);
}

bool IsMultipleOf(const Json& v, const Number& divisor) {
  if (divisor.is_int && v.is_number_unsigned()) {
    return v.get<uint64_t>() % static_cast<uint64_t>(divisor.int_value) == 0;
  }
  if (divisor.is_int && v.is_number_integer()) return v.get<int64_t>() % divisor.int_value == 0;
  const double x = v.get<double>();
  const double quotient = x / divisor.value;
  if (!std::isfinite(quotient)) return false;
  // True multiples like 0.0075 / 0.0001 come out a few ulps off an integer.
  return std::fabs(x - std::round(quotient) * divisor.value) <= 8 * DBL_EPSILON * std::fabs(x);
}

std::optional<std::pair<size_t, size_t>> FindDuplicate(const Json::array_t& items) {
  if (items.size() <= kPairwiseUniqueLimit) {
    for (size_t i = 0; i < items.size(); ++i) {
      for (size_t j = i + 1; j < items.size(); ++j) {
        if (JsonEqual(items[i], items[j])) return std::pair{i, j};
      }
    }
    return std::nullopt;
  }
  std::vector<std::pair<size_t, size_t>> by_hash;  // (hash, index)
  by_hash.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) by_hash.emplace_back(JsonHash(items[i]), i);
  std::sort(by_hash.begin(), by_hash.end());
  for (size_t start = 0; start < by_hash.size();) {
    size_t end = start + 1;
    while (end < by_hash.size() && by_hash[end].first == by_hash[start].first) ++end;
    for (size_t a = start; a < end; ++a) {
      for (size_t b = a + 1; b < end; ++b) {
        if (JsonEqual(items[by_hash[a].second], items[by_hash[b].second])) {
          return std::pair{by_hash[a].second, by_hash[b].second};
        }
      }
    }
    start = end;
  }
  return std::nullopt;
}

}  // namespace talaria::schema_internal
