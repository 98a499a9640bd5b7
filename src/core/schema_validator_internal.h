// Private to SchemaValidator: the compiled form of a schema, shared by the compiler
// (schema_validator_compile.cpp) and the evaluator (schema_validator.cpp).
//
// A schema compiles to a flat vector of Nodes that refer to each other by index, so $ref cycles
// are plain back-edges and validation touches no maps. Immutable once built; safe to read from
// many threads.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <re2/re2.h>
#include <nlohmann/json.hpp>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/base/uri.h"

namespace talaria::schema_internal {

using NodeId = uint32_t;
inline constexpr NodeId kNoNode = std::numeric_limits<NodeId>::max();
// Every compiled schema starts with these two, so `true`/`false` (and checks such as
// "additionalProperties is false") need no node of their own.
inline constexpr NodeId kTrueNode = 0;
inline constexpr NodeId kFalseNode = 1;

inline constexpr uint64_t kUnbounded = std::numeric_limits<uint64_t>::max();

// Instance kinds as bits; an integral number carries both kNumberBit and kIntegerBit.
enum TypeBit : uint8_t {
  kNullBit = 1 << 0,
  kBooleanBit = 1 << 1,
  kObjectBit = 1 << 2,
  kArrayBit = 1 << 3,
  kNumberBit = 1 << 4,
  kIntegerBit = 1 << 5,
  kStringBit = 1 << 6,
};
inline constexpr uint8_t kAnyType = 0x7F;

// A numeric bound from the schema. Integral bounds keep an exact copy so that integer
// instances beyond 2^53 still compare exactly.
struct Number {
  double value = 0;
  bool is_int = false;
  int64_t int_value = 0;
  std::string text;  // as written, for messages
};

struct PropertySchema {
  std::string name;
  NodeId node = kTrueNode;
  int required_bit = -1;  // index into Node::required_mask, or -1 when not required
};

struct PatternSchema {
  const RE2* regex = nullptr;
  NodeId node = kTrueNode;
};

struct Dependency {
  std::string name;
  std::vector<std::string> required;  // array form
  NodeId node = kNoNode;              // schema form
};

// A node's numeric keywords, kept apart from it: most nodes have none, and five optional bounds
// would be nearly half of every node.
struct NumberBounds {
  std::optional<Number> minimum, maximum, exclusive_minimum, exclusive_maximum, multiple_of;
};

// A node's "enum" and "const", kept apart for the same reason.
struct ValueChecks {
  bool has_enum = false;
  std::vector<Json> enum_values;
  std::string enum_text;  // ["a", "b"], bounded
  std::optional<Json> const_value;
  std::string const_text;
};

struct Node {
  // "$ref": siblings are ignored (drafts 4-7), the target decides.
  NodeId ref = kNoNode;
  bool reject_all = false;  // the `false` schema

  uint8_t types = kAnyType;
  std::string types_text;  // "string or null", for messages

  // Which keyword families are present, so validation skips absent ones in one test.
  bool has_number_checks = false;
  bool has_string_checks = false;
  bool has_array_checks = false;
  bool has_object_checks = false;
  bool has_generic_checks = false;  // enum, const and the applicators
  bool type_only = false;           // no keyword but "type": settled by one mask test

  // Any type.
  std::unique_ptr<ValueChecks> values;  // null: neither "enum" nor "const"
  std::vector<NodeId> all_of, any_of, one_of;
  NodeId not_node = kNoNode;
  NodeId if_node = kNoNode, then_node = kNoNode, else_node = kNoNode;

  // Numbers: null when the schema has no numeric keyword.
  std::unique_ptr<NumberBounds> numbers;

  // Strings (lengths count code points).
  uint64_t min_length = 0, max_length = kUnbounded;
  const RE2* pattern = nullptr;

  // Arrays.
  NodeId items = kNoNode;  // one schema for every item
  bool has_tuple_items = false;
  std::vector<NodeId> tuple_items;  // "items": [...]
  NodeId additional_items = kNoNode;
  uint64_t min_items = 0, max_items = kUnbounded;
  bool unique_items = false;
  NodeId contains = kNoNode;

  // Objects.
  std::vector<PropertySchema> properties;  // sorted by PropertyNameLess
  std::vector<PatternSchema> pattern_properties;
  NodeId additional_properties = kNoNode;
  uint64_t required_mask = 0;               // bits of required names found in `properties`
  std::vector<std::string> required_extra;  // the other required names
  uint64_t min_properties = 0, max_properties = kUnbounded;
  std::vector<Dependency> dependencies;
  NodeId property_names = kNoNode;
};

struct SchemaGraph {
  std::vector<Node> nodes;
  NodeId root = kTrueNode;
  std::vector<std::unique_ptr<RE2>> regexes;  // owned here, pointed to by nodes
};

// Compiles `schema`; InvalidArgument naming keyword and schema location when it is malformed.
Result<SchemaGraph> CompileSchemaGraph(const Json& schema);

// Short-circuits at the first problem when `errors` is null.
bool Evaluate(const SchemaGraph& schema, const Json& instance, std::vector<std::string>* errors);

// Length first, so a lookup mostly compares sizes; any strict order would do.
inline bool PropertyNameLess(std::string_view a, std::string_view b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

// --- Graph passes over compiled nodes (schema_validator_graph.cpp); `paths` names each node's
// schema location for messages ---

// Points every edge past pure "$ref" nodes so validation does not hop through them; returns the
// new root. InvalidArgument on a cycle made only of references.
Result<NodeId> CollapseRefs(std::vector<Node>& nodes, const std::vector<std::string>& paths,
                            NodeId root);
// InvalidArgument when some recursion keeps applying schemas to the same instance (allOf ->
// $ref -> allOf ...), which validation could never finish. REQUIRES: CollapseRefs ran.
Status RejectInPlaceCycles(const std::vector<Node>& nodes, const std::vector<std::string>& paths);
// Sets the has_*_checks summary flags from the keyword fields.
void SetFamilyFlags(Node& node);

// --- JSON helpers (schema_validator_json.cpp) ---

// JSON equality: numbers by value (1 == 1.0), objects regardless of member order.
bool JsonEqual(const Json& a, const Json& b);
// Consistent with JsonEqual.
size_t JsonHash(const Json& v);
// Number, or a float with no fractional part.
bool IsIntegral(const Json& v);
// "string \"42.5\"", "integer 5", "null": the kind and a bounded rendering of the value.
std::string DescribeValue(const Json& v);
// `text` cut to about `max_bytes` on a UTF-8 boundary, with "..." when cut.
std::string Truncate(std::string text, size_t max_bytes);
// Code points in UTF-8 `s`.
uint64_t CountCodePoints(std::string_view s);
// -1, 0 or 1 as number `v` is below, at or above `limit`.
int CompareNumber(const Json& v, const Number& limit);
// Whether number `v` is an integer multiple of `divisor` (> 0), tolerating float rounding.
bool IsMultipleOf(const Json& v, const Number& divisor);
// The first pair of equal items (JsonEqual), if any.
std::optional<std::pair<size_t, size_t>> FindDuplicate(const Json::array_t& items);

// --- URI and JSON Pointer helpers (schema_validator_uri.cpp) ---

// RFC 3986 §5.2 reference resolution; no case or percent-encoding normalisation.
std::string ResolveUri(std::string_view base, std::string_view ref);
// "doc#frag" -> {"doc", "frag"}; the fragment excludes '#', empty when absent.
std::pair<std::string_view, std::string_view> SplitFragment(std::string_view uri);
// Follows RFC 6901 `pointer` (already percent-decoded) from `root`; nullptr when it leads
// nowhere.
const Json* FollowPointer(const Json& root, std::string_view pointer);
// Escapes a key for use in a JSON Pointer ("a/b" -> "a~1b").
std::string EscapePointerToken(std::string_view key);

}  // namespace talaria::schema_internal
