#include "talaria/core/schema_validator.h"

#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/schema_validator_internal.h"
#include "talaria/base/json.h"

namespace talaria {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Json JsonOf(std::string_view text) {
  Result<Json> json = ParseJson(text);
  EXPECT_TRUE(json.has_value()) << text;
  return json ? std::move(*json) : Json();
}

SchemaValidator MustCompile(std::string_view schema) {
  Result<SchemaValidator> validator = SchemaValidator::Compile(JsonOf(schema));
  EXPECT_TRUE(validator.has_value()) << schema << ": " << validator.error().ToString();
  if (!validator) return std::move(*SchemaValidator::Compile(Json(true)));
  return std::move(*validator);
}

std::vector<std::string> ErrorsOf(std::string_view schema, std::string_view instance) {
  const SchemaValidator validator = MustCompile(schema);
  std::vector<std::string> errors;
  const bool valid = validator.Validate(JsonOf(instance), &errors);
  EXPECT_EQ(valid, errors.empty()) << schema << " / " << instance;
  EXPECT_EQ(validator.Validate(JsonOf(instance)), valid) << "verdict must not depend on collecting";
  return errors;
}

constexpr std::string_view kToolSchema = R"({
  "type": "object",
  "properties": {"n": {"type": "integer"}, "flag": {"type": "boolean"}, "s": {"type": "string"}},
  "required": ["n"]
})";

TEST(SchemaValidator, AcceptsConformingToolArguments) {
  const SchemaValidator validator = MustCompile(kToolSchema);
  std::vector<std::string> errors;
  EXPECT_TRUE(validator.Validate(JsonOf(R"({"n": 42, "flag": true, "s": "x"})"), &errors));
  EXPECT_THAT(errors, IsEmpty());
  EXPECT_TRUE(validator.Validate(JsonOf(R"({"n": -1, "extra": [1, 2]})")));
}

TEST(SchemaValidator, ReportsEveryProblemOfToolArguments) {
  EXPECT_THAT(ErrorsOf(kToolSchema, R"({"n": "42.5", "flag": 1})"),
              ElementsAre(R"(n: expected integer, got string "42.5")",
                          "flag: expected boolean, got integer 1"));
  EXPECT_THAT(ErrorsOf(kToolSchema, R"({"s": "x"})"),
              ElementsAre(R"((root): missing required property "n")"));
  EXPECT_THAT(ErrorsOf(kToolSchema, "[1]"), ElementsAre("(root): expected object, got array [1]"));
}

struct MessageCase {
  std::string_view name;
  std::string_view schema;
  std::string_view instance;
  std::string_view error;  // the one expected line
};

class SchemaValidatorMessages : public testing::TestWithParam<MessageCase> {};

TEST_P(SchemaValidatorMessages, NamesPathAndProblem) {
  EXPECT_THAT(ErrorsOf(GetParam().schema, GetParam().instance), ElementsAre(GetParam().error));
}

const MessageCase kMessageCases[] = {
    {"Enum",
     R"({"properties": {"todos": {"items": {"properties": {
          "status": {"enum": ["pending", "in_progress"]}}}}}})",
     R"({"todos": [{"status": "done"}]})",
     R"(todos[0].status: must be one of ["pending", "in_progress"])"},
    {"TypeList", R"({"type": ["string", "null"]})", "5",
     "(root): expected string or null, got integer 5"},
    {"AdditionalPropertiesFalse", R"({"properties": {"a": {}}, "additionalProperties": false})",
     R"({"a": 1, "b": 2})", R"((root): unexpected property "b")"},
    {"AdditionalPropertiesSchema", R"({"additionalProperties": {"type": "string"}})",
     R"({"a.b": 2})", R"(["a.b"]: expected string, got integer 2)"},
    {"PatternProperties", R"({"patternProperties": {"^x_": {"type": "integer"}}})",
     R"({"x_1": 1.5})", "x_1: expected integer, got number 1.5"},
    {"Minimum", R"({"minimum": 1})", "0", "(root): must be >= 1, got 0"},
    {"ExclusiveMaximum", R"({"exclusiveMaximum": 10})", "10", "(root): must be < 10, got 10"},
    {"Draft4ExclusiveMinimum", R"({"minimum": 5, "exclusiveMinimum": true})", "5",
     "(root): must be > 5, got 5"},
    {"MultipleOf", R"({"multipleOf": 0.5})", "1.3", "(root): must be a multiple of 0.5, got 1.3"},
    {"MinLengthCountsCodePoints", R"({"minLength": 2})", R"("é")",
     "(root): must be at least 2 characters long, got 1"},
    {"MaxLength", R"({"maxLength": 2})", R"("abc")",
     "(root): must be at most 2 characters long, got 3"},
    {"PatternIsUnanchored", R"({"pattern": "b+c"})", R"("xyz")",
     R"((root): must match pattern "b+c", got "xyz")"},
    {"MinItems", R"({"minItems": 2})", "[1]", "(root): must have at least 2 items, got 1"},
    {"TupleWithoutAdditionalItems", R"({"items": [{}, {}], "additionalItems": false})", "[1, 2, 3]",
     "(root): must have at most 2 items, got 3"},
    {"TupleItem", R"({"items": [{"type": "string"}]})", "[1]",
     "[0]: expected string, got integer 1"},
    {"UniqueItems", R"({"uniqueItems": true})", "[1, 2, 1.0]",
     "(root): must not contain duplicates, but items [0] and [2] are equal"},
    {"Contains", R"({"contains": {"const": 5}})", "[1, 2]",
     R"((root): must contain at least one item matching the "contains" schema)"},
    {"MaxProperties", R"({"maxProperties": 1})", R"({"a": 1, "b": 2})",
     "(root): must have at most 1 properties, got 2"},
    {"Const", R"({"const": {"a": [1]}})", R"({"a": [2]})",
     R"((root): must be equal to {"a": [1]})"},
    {"Not", R"({"not": {"type": "string"}})", R"("x")",
     R"((root): must not match the "not" schema)"},
    {"AnyOfExplainsEachBranch", R"({"anyOf": [{"type": "string"}, {"minimum": 10}]})", "5",
     "(root): must match at least one schema in anyOf: [0] expected string, got integer 5; "
     "[1] must be >= 10, got 5"},
    {"OneOfMatchingTwo", R"({"oneOf": [{"type": "integer"}, {"minimum": 0}]})", "5",
     "(root): must match exactly one schema in oneOf, but matches [0] and [1]"},
    {"DependencyArray", R"({"dependencies": {"a": ["b"]}})", R"({"a": 1})",
     R"((root): property "a" requires property "b")"},
    {"PropertyNames", R"({"propertyNames": {"maxLength": 3}})", R"({"long": 1})",
     R"((root): invalid property name "long": must be at most 3 characters long, got 4)"},
    {"IfThenElse",
     R"({"if": {"properties": {"kind": {"const": "file"}}}, "then": {"required": ["path"]},
         "else": {"required": ["url"]}})",
     R"({"kind": "web"})", R"((root): missing required property "url")"},
    {"FalseSchema", R"({"properties": {"x": false}})", R"({"x": 1})",
     "x: no value is allowed here"},
    {"RefTarget",
     R"({"definitions": {"pos": {"minimum": 1}}, "items": {"$ref": "#/definitions/pos"}})",
     "[1, 0]", "[1]: must be >= 1, got 0"},
};

INSTANTIATE_TEST_SUITE_P(SchemaKeywords, SchemaValidatorMessages, testing::ValuesIn(kMessageCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(SchemaValidator, QuotesLongValuesBounded) {
  const std::string long_string(5000, 'x');
  const std::vector<std::string> errors =
      ErrorsOf(R"({"type": "integer"})", JsonQuote(long_string));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_LT(errors[0].size(), 150u);
  EXPECT_THAT(errors[0], HasSubstr("..."));
}

TEST(SchemaValidator, CapsTheNumberOfReportedProblems) {
  Json many = Json::array();
  for (int i = 0; i < 100; ++i) many.push_back(i);
  const SchemaValidator validator = MustCompile(R"({"items": {"type": "string"}})");
  std::vector<std::string> lines;
  EXPECT_FALSE(validator.Validate(many, &lines));
  ASSERT_EQ(lines.size(), 21u);
  EXPECT_EQ(lines[0], "[0]: expected string, got integer 0");
  EXPECT_THAT(lines.back(), HasSubstr("too many problems"));
}

TEST(SchemaValidator, IntegerAcceptsFloatsWithoutFraction) {
  const SchemaValidator validator = MustCompile(R"({"type": "integer"})");
  EXPECT_TRUE(validator.Validate(JsonOf("1.0")));
  EXPECT_TRUE(validator.Validate(JsonOf("-3")));
  EXPECT_FALSE(validator.Validate(JsonOf("1.5")));
  EXPECT_FALSE(validator.Validate(JsonOf(R"("1")")));
}

TEST(SchemaValidator, UniqueItemsUsesJsonEquality) {
  const SchemaValidator validator = MustCompile(R"({"uniqueItems": true})");
  EXPECT_FALSE(validator.Validate(JsonOf(R"([{"a": 1, "b": 2}, {"b": 2.0, "a": 1}])")));
  EXPECT_TRUE(validator.Validate(JsonOf(R"([1, true, "1", [1], {"1": 1}])")));
  EXPECT_TRUE(validator.Validate(JsonOf("[0, false, null]")));

  // Past the pairwise limit the check hashes; equal values must still collide.
  Json items = Json::array();
  for (int i = 0; i < 100; ++i) items.push_back(Json{{"id", i}, {"tags", Json::array({i, "x"})}});
  EXPECT_TRUE(validator.Validate(items));
  items.push_back(Json{{"tags", Json::array({42.0, "x"})}, {"id", 42}});
  std::vector<std::string> errors;
  EXPECT_FALSE(validator.Validate(items, &errors));
  EXPECT_THAT(errors, ElementsAre("(root): must not contain duplicates, but items [42] and "
                                  "[100] are equal"));
}

TEST(SchemaValidator, NumbersCompareExactlyBeyondDoublePrecision) {
  const SchemaValidator validator = MustCompile(R"({"maximum": 9007199254740993})");
  EXPECT_TRUE(validator.Validate(JsonOf("9007199254740993")));
  EXPECT_FALSE(validator.Validate(JsonOf("9007199254740994")));
  EXPECT_TRUE(validator.Validate(JsonOf("-9007199254740994")));
}

TEST(SchemaValidator, MultipleOfToleratesDecimalRounding) {
  const SchemaValidator cents = MustCompile(R"({"multipleOf": 0.01})");
  EXPECT_TRUE(cents.Validate(JsonOf("19.99")));
  EXPECT_FALSE(cents.Validate(JsonOf("19.995")));
  const SchemaValidator tiny = MustCompile(R"({"multipleOf": 0.0001})");
  EXPECT_TRUE(tiny.Validate(JsonOf("0.0075")));
  EXPECT_FALSE(tiny.Validate(JsonOf("0.00751")));
  const SchemaValidator whole = MustCompile(R"({"multipleOf": 3})");
  EXPECT_TRUE(whole.Validate(JsonOf("18446744073709551615")));  // 2^64 - 1
  EXPECT_FALSE(whole.Validate(JsonOf("18446744073709551614")));
  EXPECT_FALSE(whole.Validate(JsonOf("-7")));
}

TEST(SchemaValidator, ChecksManyRequiredNames) {
  // More required names than the 64-bit fast path holds.
  Json schema = {{"type", "object"}, {"properties", Json::object()}, {"required", Json::array()}};
  Json instance = Json::object();
  for (int i = 0; i < 80; ++i) {
    const std::string name = "p" + std::to_string(i);
    schema["properties"][name] = Json{{"type", "integer"}};
    schema["required"].push_back(name);
    instance[name] = i;
  }
  Result<SchemaValidator> validator = SchemaValidator::Compile(schema);
  ASSERT_TRUE(validator.has_value());
  EXPECT_TRUE(validator->Validate(instance));
  for (const char* missing : {"p3", "p79"}) {
    Json partial = instance;
    partial.erase(missing);
    std::vector<std::string> errors;
    EXPECT_FALSE(validator->Validate(partial, &errors));
    EXPECT_THAT(errors,
                ElementsAre("(root): missing required property \"" + std::string(missing) + "\""));
  }
}

TEST(SchemaValidator, BooleanSchemas) {
  EXPECT_TRUE(MustCompile("true").Validate(JsonOf(R"({"any": "thing"})")));
  EXPECT_FALSE(MustCompile("false").Validate(JsonOf("null")));
  const SchemaValidator no_items = MustCompile(R"({"items": false})");
  EXPECT_TRUE(no_items.Validate(JsonOf("[]")));
  EXPECT_FALSE(no_items.Validate(JsonOf("[1]")));
}

TEST(SchemaValidator, IgnoresUnknownKeywordsAndFormat) {
  const SchemaValidator validator = MustCompile(
      R"({"format": "email", "x-internal": {"type": 5}, "description": 7, "type": "string"})");
  EXPECT_TRUE(validator.Validate(JsonOf(R"("not an email")")));
}

TEST(SchemaValidator, ResolvesRefsToDefsAnchorsAndIds) {
  // pydantic v2 style "$defs".
  const SchemaValidator defs = MustCompile(R"({
    "$defs": {"Item": {"type": "object", "required": ["id"]}},
    "type": "array", "items": {"$ref": "#/$defs/Item"}})");
  EXPECT_TRUE(defs.Validate(JsonOf(R"([{"id": 1}])")));
  EXPECT_FALSE(defs.Validate(JsonOf(R"([{"name": 1}])")));

  const SchemaValidator anchor = MustCompile(R"({
    "definitions": {"a": {"$id": "#positive", "minimum": 0}},
    "items": {"$ref": "#positive"}})");
  EXPECT_TRUE(anchor.Validate(JsonOf("[0, 1]")));
  EXPECT_FALSE(anchor.Validate(JsonOf("[-1]")));

  const SchemaValidator ids = MustCompile(R"({
    "$id": "http://example.com/root.json",
    "definitions": {"b": {"$id": "other.json", "type": "boolean"}},
    "properties": {"flag": {"$ref": "other.json"},
                   "again": {"$ref": "root.json#/properties/flag"}}})");
  EXPECT_TRUE(ids.Validate(JsonOf(R"({"flag": true, "again": false})")));
  EXPECT_FALSE(ids.Validate(JsonOf(R"({"again": 1})")));
}

TEST(SchemaValidator, RecursiveSchemaValidatesNestedInstances) {
  const SchemaValidator tree = MustCompile(R"({
    "definitions": {"node": {"type": "object", "required": ["value"],
      "properties": {"value": {"type": "number"},
                     "children": {"type": "array", "items": {"$ref": "#/definitions/node"}}}}},
    "$ref": "#/definitions/node"})");
  EXPECT_TRUE(tree.Validate(JsonOf(R"({"value": 1, "children": [{"value": 2, "children": []}]})")));
  std::vector<std::string> errors;
  EXPECT_FALSE(tree.Validate(
      JsonOf(R"({"value": 1, "children": [{"children": [{"value": "x"}]}]})"), &errors));
  EXPECT_THAT(errors,
              ElementsAre(R"(children[0].children[0].value: expected number, got string "x")",
                          R"(children[0]: missing required property "value")"));
}

TEST(SchemaValidator, DeepInstanceAgainstRecursiveSchemaFailsCleanly) {
  Json deep = Json::array();
  Json* at = &deep;
  for (int i = 0; i < 5000; ++i) {
    at->push_back(Json::array());
    at = &at->back();
  }
  const SchemaValidator validator = MustCompile(R"({"type": "array", "items": {"$ref": "#"}})");
  EXPECT_FALSE(validator.Validate(deep));
  std::vector<std::string> errors;
  EXPECT_FALSE(validator.Validate(deep, &errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("nested too deeply"));
}

struct BadSchemaCase {
  std::string_view name;
  std::string_view schema;
  std::string_view message;  // expected substring
};

class SchemaValidatorRejects : public testing::TestWithParam<BadSchemaCase> {};

TEST_P(SchemaValidatorRejects, MalformedSchema) {
  Result<SchemaValidator> validator = SchemaValidator::Compile(JsonOf(GetParam().schema));
  ASSERT_FALSE(validator.has_value());
  EXPECT_EQ(validator.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(validator.error().message(), HasSubstr(GetParam().message));
}

const BadSchemaCase kBadSchemaCases[] = {
    {"RequiredNotArray", R"({"required": 5})",
     R"(invalid schema at #: "required" must be an array of strings)"},
    {"MinimumNotNumber", R"({"properties": {"n": {"minimum": "x"}}})",
     R"(invalid schema at #/properties/n: "minimum" must be a number)"},
    {"UnknownType", R"({"type": "nonsense"})", R"("type" has unknown type "nonsense")"},
    {"EmptyTypeList", R"({"type": []})", R"("type" must not be an empty array)"},
    {"BadPattern", R"({"properties": {"s": {"pattern": "(unclosed"}}})",
     R"(#/properties/s: "pattern" pattern "(unclosed" is not supported)"},
    {"Lookahead", R"json({"patternProperties": {"^(?!x)": {}}})json", R"("patternProperties")"},
    {"UnresolvedRef", R"({"items": {"$ref": "#/definitions/missing"}})",
     R"(#/items: "$ref" "#/definitions/missing" does not resolve)"},
    {"RemoteRef", R"({"$ref": "http://example.com/schema.json"})", "does not resolve"},
    {"RefNotString", R"({"$ref": 5})", R"("$ref" must be a string)"},
    {"EmptyAnyOf", R"({"anyOf": []})", R"("anyOf" must be a non-empty array of schemas)"},
    {"ItemsNotSchema", R"({"items": 5})", "#/items: a schema must be an object or a boolean"},
    {"RootNotSchema", "5", "a schema must be an object or a boolean"},
    {"NegativeMinLength", R"({"minLength": -1})", R"("minLength" must be a non-negative integer)"},
    {"ZeroMultipleOf", R"({"multipleOf": 0})", R"("multipleOf" must be greater than 0)"},
    {"UniqueItemsNotBoolean", R"({"uniqueItems": "yes"})", R"("uniqueItems" must be a boolean)"},
    {"DependencyNotNames", R"({"dependencies": {"a": [1]}})",
     R"(#/dependencies/a: "dependencies" must be an array of strings)"},
    {"BadDefinition", R"({"definitions": {"x": {"maxItems": 1.5}}})",
     R"(#/definitions/x: "maxItems" must be a non-negative integer)"},
    {"RefCycle",
     R"({"definitions": {"a": {"$ref": "#/definitions/b"}, "b": {"$ref": "#/definitions/a"}},
                    "$ref": "#/definitions/a"})",
     "is a cycle of references"},
    {"InPlaceRecursion", R"({"anyOf": [{"type": "null"}, {"$ref": "#"}]})",
     "recursion never descends into the instance"},
};

INSTANTIATE_TEST_SUITE_P(SchemaKeywords, SchemaValidatorRejects, testing::ValuesIn(kBadSchemaCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(SchemaValidator, ValidatesConcurrently) {
  const SchemaValidator validator = MustCompile(kToolSchema);
  const Json good = JsonOf(R"({"n": 42, "flag": true, "s": "x"})");
  const Json bad = JsonOf(R"({"n": "x"})");
  std::vector<std::jthread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        std::vector<std::string> errors;
        if (!validator.Validate(good) || validator.Validate(bad, &errors) || errors.size() != 1) {
          ++failures[t];
        }
      }
    });
  }
  threads.clear();  // joins
  EXPECT_THAT(failures, ElementsAre(0, 0, 0, 0));
}

TEST(SchemaValidator, MoveKeepsTheCompiledSchema) {
  SchemaValidator original = MustCompile(kToolSchema);
  SchemaValidator moved = std::move(original);
  EXPECT_TRUE(moved.Validate(JsonOf(R"({"n": 1})")));
  original = std::move(moved);
  EXPECT_FALSE(original.Validate(JsonOf("{}")));
}

struct UriCase {
  std::string_view base, ref, resolved;
};

TEST(SchemaUri, ResolvesReferencesAgainstBase) {
  const UriCase cases[] = {
      {"", "#/definitions/a", "#/definitions/a"},
      {"", "node", "node"},
      {"http://localhost:1234/", "folder/", "http://localhost:1234/folder/"},
      {"http://localhost:1234/folder/", "folderInteger.json",
       "http://localhost:1234/folder/folderInteger.json"},
      {"http://localhost:1234/tree", "node", "http://localhost:1234/node"},
      {"http://x/a/b/c", "../d", "http://x/a/d"},
      {"http://x/a/b", "./c/./d/../e", "http://x/a/c/e"},
      {"http://x/a/b", "/d#frag", "http://x/d#frag"},
      {"http://x/a", "//y/z", "http://y/z"},
      {"http://x/a?q=1", "#f", "http://x/a?q=1#f"},
      {"http://x/a#old", "b", "http://x/b"},
      {"urn:uuid:1234", "#foo", "urn:uuid:1234#foo"},
      {"http://x/a", "https://other/b", "https://other/b"},
  };
  for (const UriCase& c : cases) {
    EXPECT_EQ(schema_internal::ResolveUri(c.base, c.ref), c.resolved) << c.base << " + " << c.ref;
  }
}

TEST(SchemaUri, FollowsEscapedJsonPointers) {
  const Json doc = JsonOf(R"({"a/b": {"c~d": [10, 20]}, "%": 1})");
  const Json* found = schema_internal::FollowPointer(doc, "/a~1b/c~0d/1");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(*found, 20);
  EXPECT_EQ(schema_internal::FollowPointer(doc, ""), &doc);
  EXPECT_EQ(*schema_internal::FollowPointer(doc, PercentDecode("/%25")), 1);
  for (const char* missing :
       {"/a~1b/c~0d/2", "/a~1b/c~0d/01", "/a~1b/c~0d/-", "/x", "/a~2b", "a"}) {
    EXPECT_EQ(schema_internal::FollowPointer(doc, missing), nullptr) << missing;
  }
}

}  // namespace
}  // namespace talaria
