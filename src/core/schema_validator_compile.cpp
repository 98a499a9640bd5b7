// Compiles a JSON Schema document (drafts 4, 6, 7) into the flat node graph of
// schema_validator_internal.h.
//
// Two passes here: index every $id/id so references can resolve by URI; then compile keywords
// into nodes, where a $ref becomes a node index (targets are compiled from a worklist, so cycles
// need no recursion). The graph checks of schema_validator_graph.cpp finish the job.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/schema_validator_internal.h"

namespace talaria::schema_internal {
namespace {

// Hostile schemas must not exhaust the stack; ParseJson's own limit keeps real ones far below.
constexpr int kMaxSchemaDepth = 256;
// Required names that are also in "properties" are tracked in a 64-bit mask while scanning.
constexpr int kRequiredBits = 64;
constexpr size_t kMaxEnumTextBytes = 200;
constexpr size_t kMaxConstTextBytes = 80;

// Draft 4 spells the identifier keyword "id", later drafts "$id". Undeclared schemas accept
// either, preferring "$id".
enum class IdKeyword { kDollarId, kId, kEither };

IdKeyword DetectIdKeyword(const Json& root) {
  if (!root.is_object()) return IdKeyword::kEither;
  const auto it = root.find("$schema");
  if (it == root.end() || !it->is_string()) return IdKeyword::kEither;
  const std::string& uri = it->get_ref<const std::string&>();
  if (uri.find("draft-04") != std::string::npos || uri.find("draft-03") != std::string::npos) {
    return IdKeyword::kId;
  }
  return IdKeyword::kDollarId;
}

// Keywords whose values are instance data, never schemas, so ids inside them mean nothing.
bool IsDataKeyword(std::string_view key) {
  return key == "enum" || key == "const" || key == "default" || key == "examples";
}

// Keywords whose value maps names to schemas.
bool IsSchemaMapKeyword(std::string_view key) {
  return key == "properties" || key == "patternProperties" || key == "definitions" ||
         key == "$defs" || key == "dependencies";
}

uint8_t TypeBitFor(std::string_view name) {
  if (name == "null") return kNullBit;
  if (name == "boolean") return kBooleanBit;
  if (name == "object") return kObjectBit;
  if (name == "array") return kArrayBit;
  if (name == "number") return kNumberBit;
  if (name == "integer") return kIntegerBit;
  if (name == "string") return kStringBit;
  return 0;
}

// Where a schema sits: its location for messages, the base URI its references resolve against,
// and its nesting depth.
struct Where {
  std::string path;
  std::string base;
  int depth = 0;

  Where Child(std::string_view token) const {
    return {path + "/" + EscapePointerToken(token), base, depth + 1};
  }
};

Status Invalid(const Where& where, std::string_view keyword, std::string_view problem) {
  std::string message = "invalid schema at " + where.path + ": ";
  if (!keyword.empty()) message += "\"" + std::string(keyword) + "\" ";
  message += problem;
  return InvalidArgumentError(std::move(message));
}

class Compiler {
 public:
  explicit Compiler(const Json& root) : root_(root), id_keyword_(DetectIdKeyword(root)) {}

  Result<SchemaGraph> Run() {
    resources_.emplace("", &root_);
    IndexIds(root_, "", 0);
    // One node per schema object IndexIds visited, at most. Nodes are large: growing the vector
    // one doubling at a time cost more than compiling.
    nodes_.reserve(2 + base_of_.size());
    nodes_.resize(2);
    paths_ = {"true", "false"};
    nodes_[kFalseNode].reject_all = true;

    SchemaGraph out;
    out.root = TALARIA_TRY(Compile(root_, Where{"#", "", 0}));
    TALARIA_RETURN_IF_ERROR(CompilePendingRefs());
    out.root = TALARIA_TRY(CollapseRefs(nodes_, paths_, out.root));
    TALARIA_RETURN_IF_ERROR(RejectInPlaceCycles(nodes_, paths_));
    for (Node& node : nodes_) SetFamilyFlags(node);
    out.nodes = std::move(nodes_);
    out.regexes = std::move(regexes_);
    return out;
  }

 private:
  struct PendingRef {
    NodeId id;
    const Json* target;
    Where where;
  };

  // --- Pass 1: identifiers ---

  const std::string* IdOf(const Json& schema) const {
    // Next to "$ref" every other keyword is ignored, "$id" included.
    if (const auto ref = schema.find("$ref"); ref != schema.end() && ref->is_string()) {
      return nullptr;
    }
    for (const char* key : {"$id", "id"}) {
      if ((id_keyword_ == IdKeyword::kDollarId && key[0] != '$') ||
          (id_keyword_ == IdKeyword::kId && key[0] == '$')) {
        continue;
      }
      const auto it = schema.find(key);
      if (it != schema.end() && it->is_string()) return &it->get_ref<const std::string&>();
    }
    return nullptr;
  }

  void IndexIds(const Json& schema, std::string base, int depth) {
    if (!schema.is_object() || depth > kMaxSchemaDepth) return;
    if (const std::string* id = IdOf(schema)) {
      const std::string uri = ResolveUri(base, *id);
      const auto [doc, fragment] = SplitFragment(uri);
      if (fragment.empty()) {
        resources_.emplace(std::string(doc), &schema);
      } else if (fragment[0] != '/') {
        anchors_.emplace(uri, &schema);  // a location-independent "#name"
      }
      base = std::string(doc);
    }
    base_of_.emplace(&schema, base);
    for (const auto& [key, value] : schema.get_ref<const Json::object_t&>()) {
      if (IsDataKeyword(key)) continue;
      if (IsSchemaMapKeyword(key) && value.is_object()) {
        for (const auto& [name, sub] : value.get_ref<const Json::object_t&>()) {
          IndexIds(sub, base, depth + 1);
        }
      } else if (value.is_array()) {
        for (const Json& sub : value) IndexIds(sub, base, depth + 1);
      } else {
        // Unknown keywords too: a "$ref" may point into them.
        IndexIds(value, base, depth + 1);
      }
    }
  }

  // --- Pass 2: keywords ---

  NodeId NewNode(const Json* schema, std::string path) {
    const auto id = static_cast<NodeId>(nodes_.size());
    nodes_.emplace_back();
    paths_.push_back(std::move(path));
    node_of_.emplace(schema, id);
    return id;
  }

  Result<NodeId> Compile(const Json& schema, const Where& where) {
    if (schema.is_boolean()) return schema.get<bool>() ? kTrueNode : kFalseNode;
    if (!schema.is_object()) {
      return Err(Invalid(where, "", "a schema must be an object or a boolean"));
    }
    if (where.depth > kMaxSchemaDepth) return Err(Invalid(where, "", "schema nested too deeply"));
    if (const auto it = node_of_.find(&schema); it != node_of_.end()) return it->second;
    const NodeId id = NewNode(&schema, where.path);
    TALARIA_RETURN_IF_ERROR(CompileInto(id, schema, where));
    return id;
  }

  Status CompileInto(NodeId id, const Json& schema, Where where) {
    if (const auto it = base_of_.find(&schema); it != base_of_.end()) where.base = it->second;
    Node node;
    if (const auto ref = schema.find("$ref"); ref != schema.end()) {
      if (!ref->is_string()) return Invalid(where, "$ref", "must be a string");
      node.ref = TALARIA_TRY(CompileRef(ref->get_ref<const std::string&>(), where));
    } else {
      TALARIA_RETURN_IF_ERROR(CompileType(schema, where, node));
      TALARIA_RETURN_IF_ERROR(CompileGeneric(schema, where, node));
      TALARIA_RETURN_IF_ERROR(CompileNumeric(schema, where, node));
      TALARIA_RETURN_IF_ERROR(CompileString(schema, where, node));
      TALARIA_RETURN_IF_ERROR(CompileArray(schema, where, node));
      TALARIA_RETURN_IF_ERROR(CompileObject(schema, where, node));
    }
    // Definitions are compiled even when unreferenced, so a broken one is still reported.
    for (const char* keyword : {"definitions", "$defs"}) {
      TALARIA_RETURN_IF_ERROR(CompileSchemaMap(schema, keyword, where, nullptr));
    }
    nodes_[id] = std::move(node);
    return {};
  }

  Result<NodeId> CompileRef(const std::string& ref, const Where& where) {
    const std::string uri = ResolveUri(where.base, ref);
    const Json* target = TALARIA_TRY(ResolveRef(uri, where));
    if (target->is_boolean()) return target->get<bool>() ? kTrueNode : kFalseNode;
    if (const auto it = node_of_.find(target); it != node_of_.end()) return it->second;
    const NodeId id = NewNode(target, uri);
    pending_.push_back({id, target, Where{uri, std::string(SplitFragment(uri).first), 0}});
    return id;
  }

  Result<const Json*> ResolveRef(const std::string& uri, const Where& where) const {
    const auto [doc, fragment] = SplitFragment(uri);
    const Json* target = nullptr;
    if (!fragment.empty() && fragment[0] != '/') {
      if (const auto it = anchors_.find(uri); it != anchors_.end()) target = it->second;
    } else if (const auto it = resources_.find(std::string(doc)); it != resources_.end()) {
      target = FollowPointer(*it->second, PercentDecode(fragment));
    }
    if (target == nullptr) {
      return Err(Invalid(where, "$ref", "\"" + Truncate(uri, 120) + "\" does not resolve"));
    }
    return target;
  }

  Status CompilePendingRefs() {
    // Index-based: compiling a target may queue more targets (and reallocate pending_).
    for (size_t i = 0; i < pending_.size(); ++i) {  // NOLINT(modernize-loop-convert)
      const PendingRef p = pending_[i];
      if (!p.target->is_object()) {
        return Invalid(p.where, "", "a schema must be an object or a boolean");
      }
      TALARIA_RETURN_IF_ERROR(CompileInto(p.id, *p.target, p.where));
    }
    return {};
  }

  Result<NodeId> Sub(const Json& schema, std::string_view keyword, const Where& where) {
    return Compile(schema, where.Child(keyword));
  }

  // An array of schemas, which draft 4-7 require to be non-empty.
  Result<std::vector<NodeId>> SubArray(const Json& value, std::string_view keyword,
                                       const Where& where) {
    if (!value.is_array() || value.empty()) {
      return Err(Invalid(where, keyword, "must be a non-empty array of schemas"));
    }
    std::vector<NodeId> ids;
    const Where at = where.Child(keyword);
    for (size_t i = 0; i < value.size(); ++i) {
      ids.push_back(TALARIA_TRY(Compile(value[i], at.Child(std::to_string(i)))));
    }
    return ids;
  }

  // {"name": schema, ...}; `out` receives the pairs, or nothing when null.
  Status CompileSchemaMap(const Json& schema, const char* keyword, const Where& where,
                          std::vector<std::pair<std::string, NodeId>>* out) {
    const auto it = schema.find(keyword);
    if (it == schema.end()) return {};
    if (!it->is_object()) return Invalid(where, keyword, "must be an object");
    const Where at = where.Child(keyword);
    for (const auto& [name, sub] : it->get_ref<const Json::object_t&>()) {
      const NodeId id = TALARIA_TRY(Compile(sub, at.Child(name)));
      if (out != nullptr) out->emplace_back(name, id);
    }
    return {};
  }

  Result<Number> ReadNumber(const Json& value, std::string_view keyword, const Where& where) {
    if (!value.is_number()) return Err(Invalid(where, keyword, "must be a number"));
    Number n;
    n.value = value.get<double>();
    n.text = DumpJson(value);
    if (value.is_number_unsigned()) {
      n.is_int = value.get<uint64_t>() <= uint64_t{std::numeric_limits<int64_t>::max()};
      n.int_value = n.is_int ? value.get<int64_t>() : 0;
    } else if (value.is_number_integer()) {
      n.is_int = true;
      n.int_value = value.get<int64_t>();
    } else if (IsIntegral(value) && std::abs(n.value) < 9.0e18) {
      n.is_int = true;
      n.int_value = static_cast<int64_t>(n.value);
    }
    return n;
  }

  Result<uint64_t> ReadCount(const Json& value, std::string_view keyword, const Where& where) {
    if (!IsIntegral(value) || value.get<double>() < 0) {
      return Err(Invalid(where, keyword, "must be a non-negative integer"));
    }
    if (value.is_number_integer()) return value.get<uint64_t>();
    const double d = value.get<double>();
    return d >= 1.8e19 ? kUnbounded : static_cast<uint64_t>(d);
  }

  Result<const RE2*> CompileRegex(const Json& value, std::string_view keyword, const Where& where) {
    if (!value.is_string()) return Err(Invalid(where, keyword, "must be a string"));
    RE2::Options options;
    options.set_log_errors(false);
    auto regex = std::make_unique<RE2>(value.get_ref<const std::string&>(), options);
    if (!regex->ok()) {
      return Err(Invalid(where, keyword,
                         "pattern " + Truncate(JsonQuote(value.get_ref<const std::string&>()), 80) +
                             " is not supported: " + regex->error()));
    }
    regexes_.push_back(std::move(regex));
    return regexes_.back().get();
  }

  Status CompileType(const Json& schema, const Where& where, Node& node) {
    const auto it = schema.find("type");
    if (it == schema.end()) return {};
    node.types = 0;
    auto add = [&](const Json& name) -> Status {
      const uint8_t bit = name.is_string() ? TypeBitFor(name.get_ref<const std::string&>()) : 0;
      if (bit == 0) {
        return Invalid(where, "type", "has unknown type " + Truncate(DumpJson(name), 40));
      }
      node.types |= bit;
      if (!node.types_text.empty()) node.types_text += " or ";
      node.types_text += name.get_ref<const std::string&>();
      return {};
    };
    if (!it->is_array()) return add(*it);
    if (it->empty()) return Invalid(where, "type", "must not be an empty array");
    for (const Json& name : *it) TALARIA_RETURN_IF_ERROR(add(name));
    return {};
  }

  static ValueChecks& ValuesOf(Node& node) {
    if (!node.values) node.values = std::make_unique<ValueChecks>();
    return *node.values;
  }

  Status CompileGeneric(const Json& schema, const Where& where, Node& node) {
    for (const auto& [key, value] : schema.get_ref<const Json::object_t&>()) {
      if (key == "enum") {
        if (!value.is_array()) return Invalid(where, key, "must be an array");
        ValueChecks& values = ValuesOf(node);
        values.has_enum = true;
        values.enum_values = value.get_ref<const Json::array_t&>();
        values.enum_text = Truncate(DumpJsonPythonStyle(value), kMaxEnumTextBytes);
      } else if (key == "const") {
        ValueChecks& values = ValuesOf(node);
        values.const_value = value;
        values.const_text = Truncate(DumpJsonPythonStyle(value), kMaxConstTextBytes);
      } else if (key == "allOf") {
        node.all_of = TALARIA_TRY(SubArray(value, key, where));
      } else if (key == "anyOf") {
        node.any_of = TALARIA_TRY(SubArray(value, key, where));
      } else if (key == "oneOf") {
        node.one_of = TALARIA_TRY(SubArray(value, key, where));
      } else if (key == "not") {
        node.not_node = TALARIA_TRY(Sub(value, key, where));
      } else if (key == "if") {
        node.if_node = TALARIA_TRY(Sub(value, key, where));
      } else if (key == "then") {
        node.then_node = TALARIA_TRY(Sub(value, key, where));
      } else if (key == "else") {
        node.else_node = TALARIA_TRY(Sub(value, key, where));
      }
    }
    return {};
  }

  Status CompileNumeric(const Json& schema, const Where& where, Node& node) {
    NumberBounds b;
    bool draft4_exclusive_min = false, draft4_exclusive_max = false;
    for (const auto& [key, value] : schema.get_ref<const Json::object_t&>()) {
      if (key == "minimum") {
        b.minimum = TALARIA_TRY(ReadNumber(value, key, where));
      } else if (key == "maximum") {
        b.maximum = TALARIA_TRY(ReadNumber(value, key, where));
      } else if (key == "exclusiveMinimum" || key == "exclusiveMaximum") {
        const bool is_min = key == "exclusiveMinimum";
        if (value.is_boolean()) {  // draft 4: a modifier of minimum/maximum
          (is_min ? draft4_exclusive_min : draft4_exclusive_max) = value.get<bool>();
        } else {
          (is_min ? b.exclusive_minimum : b.exclusive_maximum) =
              TALARIA_TRY(ReadNumber(value, key, where));
        }
      } else if (key == "multipleOf") {
        b.multiple_of = TALARIA_TRY(ReadNumber(value, key, where));
        if (b.multiple_of->value <= 0) {
          return Invalid(where, key, "must be greater than 0");
        }
      }
    }
    if (draft4_exclusive_min && b.minimum) {
      b.exclusive_minimum = std::exchange(b.minimum, std::nullopt);
    }
    if (draft4_exclusive_max && b.maximum) {
      b.exclusive_maximum = std::exchange(b.maximum, std::nullopt);
    }
    if (b.minimum || b.maximum || b.exclusive_minimum || b.exclusive_maximum || b.multiple_of) {
      node.numbers = std::make_unique<NumberBounds>(std::move(b));
    }
    return {};
  }

  Status CompileString(const Json& schema, const Where& where, Node& node) {
    for (const auto& [key, value] : schema.get_ref<const Json::object_t&>()) {
      if (key == "minLength") {
        node.min_length = TALARIA_TRY(ReadCount(value, key, where));
      } else if (key == "maxLength") {
        node.max_length = TALARIA_TRY(ReadCount(value, key, where));
      } else if (key == "pattern") {
        node.pattern = TALARIA_TRY(CompileRegex(value, key, where));
      }
    }
    return {};
  }

  Status CompileArray(const Json& schema, const Where& where, Node& node) {
    NodeId additional_items = kNoNode;
    for (const auto& [key, value] : schema.get_ref<const Json::object_t&>()) {
      if (key == "items") {
        if (value.is_array()) {
          node.has_tuple_items = true;
          const Where at = where.Child(key);
          for (size_t i = 0; i < value.size(); ++i) {
            node.tuple_items.push_back(TALARIA_TRY(Compile(value[i], at.Child(std::to_string(i)))));
          }
        } else {
          node.items = TALARIA_TRY(Sub(value, key, where));
        }
      } else if (key == "additionalItems") {
        additional_items = TALARIA_TRY(Sub(value, key, where));
      } else if (key == "minItems") {
        node.min_items = TALARIA_TRY(ReadCount(value, key, where));
      } else if (key == "maxItems") {
        node.max_items = TALARIA_TRY(ReadCount(value, key, where));
      } else if (key == "uniqueItems") {
        if (!value.is_boolean()) return Invalid(where, key, "must be a boolean");
        node.unique_items = value.get<bool>();
      } else if (key == "contains") {
        node.contains = TALARIA_TRY(Sub(value, key, where));
      }
    }
    // additionalItems means nothing unless "items" is an array.
    if (node.has_tuple_items) node.additional_items = additional_items;
    return {};
  }

  Status CompileObject(const Json& schema, const Where& where, Node& node) {
    std::vector<std::pair<std::string, NodeId>> properties;
    TALARIA_RETURN_IF_ERROR(CompileSchemaMap(schema, "properties", where, &properties));
    for (auto& [name, id] : properties) node.properties.push_back({std::move(name), id, -1});
    std::sort(node.properties.begin(), node.properties.end(),
              [](const auto& a, const auto& b) { return PropertyNameLess(a.name, b.name); });

    for (const auto& [key, value] : schema.get_ref<const Json::object_t&>()) {
      if (key == "patternProperties") {
        TALARIA_RETURN_IF_ERROR(CompilePatternProperties(value, where, node));
      } else if (key == "additionalProperties") {
        node.additional_properties = TALARIA_TRY(Sub(value, key, where));
      } else if (key == "required") {
        TALARIA_RETURN_IF_ERROR(CompileRequired(value, where, node));
      } else if (key == "minProperties") {
        node.min_properties = TALARIA_TRY(ReadCount(value, key, where));
      } else if (key == "maxProperties") {
        node.max_properties = TALARIA_TRY(ReadCount(value, key, where));
      } else if (key == "dependencies") {
        TALARIA_RETURN_IF_ERROR(CompileDependencies(value, where, node));
      } else if (key == "propertyNames") {
        node.property_names = TALARIA_TRY(Sub(value, key, where));
      }
    }
    return {};
  }

  Status CompilePatternProperties(const Json& value, const Where& where, Node& node) {
    if (!value.is_object()) return Invalid(where, "patternProperties", "must be an object");
    const Where at = where.Child("patternProperties");
    for (const auto& [pattern, sub] : value.get_ref<const Json::object_t&>()) {
      const RE2* regex = TALARIA_TRY(CompileRegex(Json(pattern), "patternProperties", where));
      node.pattern_properties.push_back({regex, TALARIA_TRY(Compile(sub, at.Child(pattern)))});
    }
    return {};
  }

  static Result<std::vector<std::string>> ReadNames(const Json& value, std::string_view keyword,
                                                    const Where& where) {
    if (!value.is_array()) return Err(Invalid(where, keyword, "must be an array of strings"));
    std::vector<std::string> names;
    for (const Json& name : value) {
      if (!name.is_string()) return Err(Invalid(where, keyword, "must be an array of strings"));
      names.push_back(name.get<std::string>());
    }
    return names;
  }

  Status CompileRequired(const Json& value, const Where& where, Node& node) {
    int next_bit = 0;
    std::vector<std::string> names = TALARIA_TRY(ReadNames(value, "required", where));
    for (std::string& name : names) {
      const auto it = std::lower_bound(node.properties.begin(), node.properties.end(), name,
                                       [](const PropertySchema& p, const std::string& n) {
                                         return PropertyNameLess(p.name, n);
                                       });
      const bool declared = it != node.properties.end() && it->name == name;
      if (declared && it->required_bit >= 0) continue;  // listed twice
      if (declared && next_bit < kRequiredBits) {
        it->required_bit = next_bit;
        node.required_mask |= uint64_t{1} << next_bit++;
      } else {
        node.required_extra.push_back(std::move(name));
      }
    }
    return {};
  }

  Status CompileDependencies(const Json& value, const Where& where, Node& node) {
    if (!value.is_object()) return Invalid(where, "dependencies", "must be an object");
    const Where at = where.Child("dependencies");
    for (const auto& [name, dependency] : value.get_ref<const Json::object_t&>()) {
      Dependency d{name, {}, kNoNode};
      if (dependency.is_array()) {
        d.required = TALARIA_TRY(ReadNames(dependency, "dependencies", at.Child(name)));
      } else {
        d.node = TALARIA_TRY(Compile(dependency, at.Child(name)));
      }
      node.dependencies.push_back(std::move(d));
    }
    return {};
  }

  const Json& root_;
  const IdKeyword id_keyword_;
  std::unordered_map<std::string, const Json*> resources_;  // absolute URI, no fragment
  std::unordered_map<std::string, const Json*> anchors_;    // "uri#name"
  std::unordered_map<const Json*, std::string> base_of_;
  std::unordered_map<const Json*, NodeId> node_of_;
  std::vector<Node> nodes_;
  std::vector<std::string> paths_;  // per node, for messages
  std::vector<PendingRef> pending_;
  std::vector<std::unique_ptr<RE2>> regexes_;
};

}  // namespace

Result<SchemaGraph> CompileSchemaGraph(const Json& schema) {
  // nlohmann throws only on misuse; the guard keeps a bug here from crossing the module edge.
  try {
    return Compiler(schema).Run();
  } catch (const std::exception& e) {
    return Err(InternalError(std::string("schema compilation failed: ") + e.what()));
  }
}

}  // namespace talaria::schema_internal
