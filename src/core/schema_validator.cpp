// SchemaValidator: the public wrapper and the evaluator that walks compiled nodes.
//
// The success path allocates nothing: the instance path lives on the stack as a chain of
// PathSteps and is rendered only when a problem is reported; messages are built lazily.
#include "talaria/core/schema_validator.h"

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <exception>
#include <optional>
#include <ranges>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/schema_validator_internal.h"

namespace talaria {
namespace schema_internal {
namespace {

// Nested evaluations per Validate call; recursive schemas recurse as deep as the instance.
constexpr int kMaxDepth = 512;
// Problems listed per Validate call, so one bad array cannot flood a model's context.
constexpr size_t kMaxIssues = 20;
// anyOf/oneOf failures explain this many alternatives, within this many bytes.
constexpr size_t kMaxBranchDetails = 3;
constexpr size_t kMaxDetailBytes = 300;
constexpr size_t kMaxQuotedBytes = 80;

// One step of the instance path, owned by the stack frame that descends into it.
struct PathStep {
  const PathStep* parent;
  const std::string* key;  // null for an array element
  size_t index;
};

bool IsPlainKey(const std::string& key) {
  if (key.empty() || key.size() > kMaxQuotedBytes) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '$';
  });
}

// "todos[0].status"; keys that would read ambiguously are quoted: `a["b.c"]`.
std::string RenderPath(const PathStep* step) {
  if (step == nullptr) return "(root)";
  std::vector<const PathStep*> steps;
  for (; step != nullptr; step = step->parent) steps.push_back(step);
  std::string out;
  for (const PathStep* s : std::views::reverse(steps)) {
    if (s->key == nullptr) {
      out += "[" + std::to_string(s->index) + "]";
    } else if (IsPlainKey(*s->key)) {
      if (!out.empty()) out += '.';
      out += *s->key;
    } else {
      out += "[" + Truncate(JsonQuote(*s->key), kMaxQuotedBytes) + "]";
    }
  }
  return out;
}

std::string Quote(const std::string& s) { return Truncate(JsonQuote(s), kMaxQuotedBytes); }

uint8_t TypeBits(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return kNullBit;
    case Json::value_t::boolean:
      return kBooleanBit;
    case Json::value_t::object:
      return kObjectBit;
    case Json::value_t::array:
      return kArrayBit;
    case Json::value_t::string:
      return kStringBit;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return kNumberBit | kIntegerBit;
    case Json::value_t::number_float:
      // Draft 6+ semantics: 1.0 is an integer.
      return IsIntegral(v) ? kNumberBit | kIntegerBit : kNumberBit;
    default:
      return 0;
  }
}

// Below this many properties a scan beats binary search: most candidates differ in length.
constexpr size_t kLinearPropertyScan = 16;

const PropertySchema* FindProperty(const Node& node, const std::string& key) {
  const std::vector<PropertySchema>& properties = node.properties;
  if (properties.size() <= kLinearPropertyScan) {
    for (const PropertySchema& p : properties) {
      if (p.name.size() < key.size()) continue;
      if (p.name.size() > key.size()) break;  // sorted by length first
      if (p.name == key) return &p;
    }
    return nullptr;
  }
  const auto it = std::lower_bound(
      properties.begin(), properties.end(), key,
      [](const PropertySchema& p, const std::string& k) { return PropertyNameLess(p.name, k); });
  return it != properties.end() && it->name == key ? &*it : nullptr;
}

struct Issue {
  std::string path;
  std::string message;
};

// Walks compiled nodes over one instance. With an issue list it keeps going after a problem
// (up to a cap) to report them all; without one it stops at the first.
class Evaluator {
 public:
  Evaluator(const SchemaGraph& schema, std::vector<Issue>* issues, size_t max_issues, int depth)
      : schema_(schema), issues_(issues), max_issues_(max_issues), depth_(depth) {}

  bool Check(NodeId id, const Json& v, const PathStep* path) {
    if (depth_ >= kMaxDepth) {
      bool ok = true;
      Fail(ok, path, [] { return std::string("nested too deeply to validate"); });
      return false;
    }
    ++depth_;
    const bool ok = CheckNode(schema_.nodes[id], v, path);
    --depth_;
    return ok;
  }

  bool truncated() const { return truncated_; }

 private:
  // Leaves such as {"type": "integer"} dominate tool schemas; passing ones are settled inline,
  // without a call or depth bookkeeping. Failures take the full path to be reported.
  bool CheckChild(NodeId id, const Json& v, const PathStep* path) {
    const Node& n = schema_.nodes[id];
    if (n.type_only && (n.types & TypeBits(v)) != 0) return true;
    return Check(id, v, path);
  }

  bool Collecting() const { return issues_ != nullptr && !truncated_; }

  // Records a problem (the message is built only when someone will read it). Returns whether
  // evaluation should go on looking for more.
  template <typename MakeMessage>
  bool Fail(bool& ok, const PathStep* path, MakeMessage&& make_message) {
    ok = false;
    if (!Collecting()) return false;
    if (issues_->size() >= max_issues_) {
      truncated_ = true;
      return false;
    }
    issues_->push_back({RenderPath(path), make_message()});
    return true;
  }

  // Folds a sub-result into `ok`; returns whether evaluation should go on.
  bool Keep(bool& ok, bool valid) const {
    ok = ok && valid;
    return valid || Collecting();
  }

  // Whether `v` matches, without reporting anything (for anyOf, not, if, contains ...).
  bool Matches(NodeId id, const Json& v, const PathStep* path) const {
    return Evaluator(schema_, nullptr, 0, depth_).Check(id, v, path);
  }

  bool CheckNode(const Node& n, const Json& v, const PathStep* path) {
    bool ok = true;
    if (n.reject_all) {
      Fail(ok, path, [] { return std::string("no value is allowed here"); });
      return false;
    }
    if (n.ref != kNoNode) return Check(n.ref, v, path);
    if ((n.types & TypeBits(v)) == 0) {
      // Only a non-JSON value (binary, discarded) can fail a node without "type".
      Fail(ok, path, [&] {
        const std::string& expected = n.types_text.empty() ? "a JSON value" : n.types_text;
        return "expected " + expected + ", got " + DescribeValue(v);
      });
      return false;  // the other keywords would only repeat the mismatch
    }
    switch (v.type()) {
      case Json::value_t::number_integer:
      case Json::value_t::number_unsigned:
      case Json::value_t::number_float:
        if (n.has_number_checks && !Keep(ok, CheckNumber(n, v, path))) return false;
        break;
      case Json::value_t::string:
        if (n.has_string_checks && !Keep(ok, CheckString(n, v, path))) return false;
        break;
      case Json::value_t::array:
        if (n.has_array_checks && !Keep(ok, CheckArray(n, v, path))) return false;
        break;
      case Json::value_t::object:
        if (n.has_object_checks && !Keep(ok, CheckObject(n, v, path))) return false;
        break;
      default:
        break;
    }
    if (n.has_generic_checks && !Keep(ok, CheckGeneric(n, v, path))) return false;
    return ok;
  }

  bool CheckNumber(const Node& n, const Json& v, const PathStep* path) {
    bool ok = true;
    auto bound = [&](std::string_view relation, const Number& limit) {
      return Fail(ok, path, [&] {
        return "must be " + std::string(relation) + " " + limit.text + ", got " + DumpJson(v);
      });
    };
    const NumberBounds& b = *n.numbers;  // has_number_checks: present
    if (b.minimum && CompareNumber(v, *b.minimum) < 0 && !bound(">=", *b.minimum)) return false;
    if (b.exclusive_minimum && CompareNumber(v, *b.exclusive_minimum) <= 0 &&
        !bound(">", *b.exclusive_minimum)) {
      return false;
    }
    if (b.maximum && CompareNumber(v, *b.maximum) > 0 && !bound("<=", *b.maximum)) return false;
    if (b.exclusive_maximum && CompareNumber(v, *b.exclusive_maximum) >= 0 &&
        !bound("<", *b.exclusive_maximum)) {
      return false;
    }
    if (b.multiple_of && !IsMultipleOf(v, *b.multiple_of) &&
        !bound("a multiple of", *b.multiple_of)) {
      return false;
    }
    return ok;
  }

  bool CheckString(const Node& n, const Json& v, const PathStep* path) {
    bool ok = true;
    const std::string& s = v.get_ref<const std::string&>();
    if (n.min_length > 0 || n.max_length != kUnbounded) {
      const uint64_t length = CountCodePoints(s);
      auto bound = [&](std::string_view relation, uint64_t limit) {
        return Fail(ok, path, [&] {
          return "must be " + std::string(relation) + " " + std::to_string(limit) +
                 " characters long, got " + std::to_string(length);
        });
      };
      if (length < n.min_length && !bound("at least", n.min_length)) return false;
      if (length > n.max_length && !bound("at most", n.max_length)) return false;
    }
    if (n.pattern != nullptr && !RE2::PartialMatch(s, *n.pattern) && !Fail(ok, path, [&] {
          return "must match pattern " + Quote(n.pattern->pattern()) + ", got " + Quote(s);
        })) {
      return false;
    }
    return ok;
  }

  bool CheckItemCount(const Node& n, uint64_t size, const PathStep* path, bool& ok) {
    auto bound = [&](std::string_view relation, uint64_t limit) {
      return Fail(ok, path, [&] {
        return "must have " + std::string(relation) + " " + std::to_string(limit) + " items, got " +
               std::to_string(size);
      });
    };
    if (size < n.min_items && !bound("at least", n.min_items)) return false;
    if (size > n.max_items && !bound("at most", n.max_items)) return false;
    return true;
  }

  bool CheckArray(const Node& n, const Json& v, const PathStep* path) {
    bool ok = true;
    const auto& items = v.get_ref<const Json::array_t&>();
    if (!CheckItemCount(n, items.size(), path, ok)) return false;
    if (n.has_tuple_items) {
      const size_t tuple_size = n.tuple_items.size();
      for (size_t i = 0; i < items.size() && i < tuple_size; ++i) {
        const PathStep step{path, nullptr, i};
        if (!Keep(ok, CheckChild(n.tuple_items[i], items[i], &step))) return false;
      }
      if (items.size() > tuple_size && n.additional_items == kFalseNode) {
        if (!Fail(ok, path, [&] {
              return "must have at most " + std::to_string(tuple_size) + " items, got " +
                     std::to_string(items.size());
            })) {
          return false;
        }
      } else if (n.additional_items != kNoNode) {
        for (size_t i = tuple_size; i < items.size(); ++i) {
          const PathStep step{path, nullptr, i};
          if (!Keep(ok, CheckChild(n.additional_items, items[i], &step))) return false;
        }
      }
    } else if (n.items != kNoNode && n.items != kTrueNode) {
      for (size_t i = 0; i < items.size(); ++i) {
        const PathStep step{path, nullptr, i};
        if (!Keep(ok, CheckChild(n.items, items[i], &step))) return false;
      }
    }
    if (n.contains != kNoNode && !ContainsMatch(n.contains, items, path) && !Fail(ok, path, [] {
          return std::string("must contain at least one item matching the \"contains\" schema");
        })) {
      return false;
    }
    if (n.unique_items) {
      if (const auto dup = FindDuplicate(items)) {
        if (!Fail(ok, path, [&] {
              return "must not contain duplicates, but items [" + std::to_string(dup->first) +
                     "] and [" + std::to_string(dup->second) + "] are equal";
            })) {
          return false;
        }
      }
    }
    return ok;
  }

  bool ContainsMatch(NodeId id, const Json::array_t& items, const PathStep* path) const {
    for (size_t i = 0; i < items.size(); ++i) {
      const PathStep step{path, nullptr, i};
      if (Matches(id, items[i], &step)) return true;
    }
    return false;
  }

  bool CheckObject(const Node& n, const Json& v, const PathStep* path) {
    bool ok = true;
    const auto& members = v.get_ref<const Json::object_t&>();
    const uint64_t size = members.size();
    auto count_bound = [&](std::string_view relation, uint64_t limit) {
      return Fail(ok, path, [&] {
        return "must have " + std::string(relation) + " " + std::to_string(limit) +
               " properties, got " + std::to_string(size);
      });
    };
    if (size < n.min_properties && !count_bound("at least", n.min_properties)) return false;
    if (size > n.max_properties && !count_bound("at most", n.max_properties)) return false;

    uint64_t required_seen = 0;
    for (const auto& [key, value] : members) {
      if (!CheckMember(n, key, value, path, required_seen, ok)) return false;
    }
    if ((required_seen & n.required_mask) != n.required_mask) {
      for (const PropertySchema& p : n.properties) {
        if (p.required_bit < 0 || ((required_seen >> p.required_bit) & 1) != 0) continue;
        if (!Fail(ok, path, [&] { return "missing required property " + Quote(p.name); })) {
          return false;
        }
      }
    }
    for (const std::string& name : n.required_extra) {
      if (v.find(name) == v.end() &&
          !Fail(ok, path, [&] { return "missing required property " + Quote(name); })) {
        return false;
      }
    }
    if (!n.dependencies.empty() && !Keep(ok, CheckDependencies(n, v, path))) return false;
    if (n.property_names != kNoNode && !Keep(ok, CheckPropertyNames(n, members, path))) {
      return false;
    }
    return ok;
  }

  // properties, patternProperties and additionalProperties for one member.
  bool CheckMember(const Node& n, const std::string& key, const Json& value, const PathStep* path,
                   uint64_t& required_seen, bool& ok) {
    const PathStep step{path, &key, 0};
    bool declared = false;
    if (const PropertySchema* p = FindProperty(n, key)) {
      declared = true;
      if (p->required_bit >= 0) required_seen |= uint64_t{1} << p->required_bit;
      if (p->node != kTrueNode && !Keep(ok, CheckChild(p->node, value, &step))) return false;
    }
    for (const PatternSchema& pattern : n.pattern_properties) {
      if (!RE2::PartialMatch(key, *pattern.regex)) continue;
      declared = true;
      if (!Keep(ok, CheckChild(pattern.node, value, &step))) return false;
    }
    if (declared || n.additional_properties == kNoNode) return true;
    if (n.additional_properties == kFalseNode) {
      return Fail(ok, path, [&] { return "unexpected property " + Quote(key); });
    }
    return Keep(ok, CheckChild(n.additional_properties, value, &step));
  }

  bool CheckDependencies(const Node& n, const Json& v, const PathStep* path) {
    bool ok = true;
    for (const Dependency& d : n.dependencies) {
      if (v.find(d.name) == v.end()) continue;
      for (const std::string& name : d.required) {
        if (v.find(name) == v.end() && !Fail(ok, path, [&] {
              return "property " + Quote(d.name) + " requires property " + Quote(name);
            })) {
          return false;
        }
      }
      if (d.node != kNoNode && !Keep(ok, Check(d.node, v, path))) return false;
    }
    return ok;
  }

  bool CheckPropertyNames(const Node& n, const Json::object_t& members, const PathStep* path) {
    bool ok = true;
    for (const auto& member : members) {
      const Json name(member.first);  // names are validated as string instances
      if (Matches(n.property_names, name, path)) continue;
      if (!Fail(ok, path, [&] {
            return "invalid property name " + Quote(member.first) +
                   FirstProblems({n.property_names}, name, path);
          })) {
        return false;
      }
    }
    return ok;
  }

  bool CheckGeneric(const Node& n, const Json& v, const PathStep* path) {
    bool ok = true;
    if (const ValueChecks* values = n.values.get()) {
      if (values->has_enum &&
          std::none_of(values->enum_values.begin(), values->enum_values.end(),
                       [&](const Json& e) { return JsonEqual(e, v); }) &&
          !Fail(ok, path, [&] { return "must be one of " + values->enum_text; })) {
        return false;
      }
      if (values->const_value && !JsonEqual(*values->const_value, v) &&
          !Fail(ok, path, [&] { return "must be equal to " + values->const_text; })) {
        return false;
      }
    }
    for (const NodeId id : n.all_of) {
      if (!Keep(ok, Check(id, v, path))) return false;
    }
    if (!n.any_of.empty() &&
        std::none_of(n.any_of.begin(), n.any_of.end(),
                     [&](NodeId id) { return Matches(id, v, path); }) &&
        !Fail(ok, path, [&] {
          return "must match at least one schema in anyOf" + FirstProblems(n.any_of, v, path);
        })) {
      return false;
    }
    if (!n.one_of.empty() && !CheckOneOf(n, v, path, ok)) return false;
    if (n.not_node != kNoNode && Matches(n.not_node, v, path) &&
        !Fail(ok, path, [] { return std::string("must not match the \"not\" schema"); })) {
      return false;
    }
    if (n.if_node != kNoNode) {
      const NodeId branch = Matches(n.if_node, v, path) ? n.then_node : n.else_node;
      if (branch != kNoNode && !Keep(ok, Check(branch, v, path))) return false;
    }
    return ok;
  }

  bool CheckOneOf(const Node& n, const Json& v, const PathStep* path, bool& ok) {
    std::vector<size_t> matched;  // allocated only once a second branch matches
    size_t first = n.one_of.size();
    for (size_t i = 0; i < n.one_of.size(); ++i) {
      if (!Matches(n.one_of[i], v, path)) continue;
      if (first == n.one_of.size()) {
        first = i;
      } else {
        matched = {first, i};
        break;
      }
    }
    if (first == n.one_of.size()) {
      return Fail(ok, path, [&] {
        return "must match exactly one schema in oneOf, but matches none" +
               FirstProblems(n.one_of, v, path);
      });
    }
    if (matched.empty()) return true;
    return Fail(ok, path, [&] {
      return "must match exactly one schema in oneOf, but matches [" + std::to_string(matched[0]) +
             "] and [" + std::to_string(matched[1]) + "]";
    });
  }

  // ": [0] expected string, got integer 5; [1] ..." -- the first problem of each branch.
  std::string FirstProblems(const std::vector<NodeId>& branches, const Json& v,
                            const PathStep* path) const {
    const std::string here = RenderPath(path);
    std::string out;
    for (size_t i = 0; i < branches.size() && i < kMaxBranchDetails; ++i) {
      std::vector<Issue> issues;
      Evaluator(schema_, &issues, 1, depth_).Check(branches[i], v, path);
      if (issues.empty()) continue;
      out += out.empty() ? ": " : "; ";
      if (branches.size() > 1) out += "[" + std::to_string(i) + "] ";
      if (issues[0].path != here) out += issues[0].path + ": ";
      out += issues[0].message;
    }
    if (branches.size() > kMaxBranchDetails) out += "; ...";
    return Truncate(std::move(out), kMaxDetailBytes);
  }

  const SchemaGraph& schema_;
  std::vector<Issue>* issues_;  // null: stop at the first problem
  size_t max_issues_;
  int depth_;
  bool truncated_ = false;
};

}  // namespace

bool Evaluate(const SchemaGraph& schema, const Json& instance, std::vector<std::string>* errors) {
  if (errors == nullptr) {
    return Evaluator(schema, nullptr, 0, 0).Check(schema.root, instance, nullptr);
  }
  std::vector<Issue> issues;
  Evaluator evaluator(schema, &issues, kMaxIssues, 0);
  const bool ok = evaluator.Check(schema.root, instance, nullptr);
  for (Issue& issue : issues) errors->push_back(std::move(issue.path) + ": " + issue.message);
  if (evaluator.truncated()) {
    errors->push_back("(root): too many problems; only the first " + std::to_string(kMaxIssues) +
                      " are listed");
  }
  return ok;
}

}  // namespace schema_internal

struct SchemaValidator::Impl {
  schema_internal::SchemaGraph schema;
};

SchemaValidator::SchemaValidator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SchemaValidator::SchemaValidator(SchemaValidator&&) noexcept = default;
SchemaValidator& SchemaValidator::operator=(SchemaValidator&&) noexcept = default;
SchemaValidator::~SchemaValidator() = default;

Result<SchemaValidator> SchemaValidator::Compile(const Json& schema) {
  auto compiled = schema_internal::CompileSchemaGraph(schema);
  if (!compiled) return Err(std::move(compiled).error());
  auto impl = std::make_unique<Impl>();
  impl->schema = std::move(*compiled);
  return SchemaValidator(std::move(impl));
}

bool SchemaValidator::Validate(const Json& instance, std::vector<std::string>* errors) const {
  TALARIA_CHECK(impl_ != nullptr);  // used after being moved from
  // Only allocation failure can throw here; it must not cross the module boundary.
  try {
    return schema_internal::Evaluate(impl_->schema, instance, errors);
  } catch (const std::exception& e) {
    if (errors != nullptr) errors->push_back(std::string("(root): validation failed: ") + e.what());
    return false;
  }
}

}  // namespace talaria
