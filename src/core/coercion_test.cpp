#include "talaria/core/coercion.h"

#include <cmath>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "talaria/core/registry.h"

namespace talaria {
namespace {

Json J(std::string_view text) { return *ParseJson(text); }

struct Case {
  const char* name;
  const char* schema;  // the "parameters" object schema
  const char* input;
  const char* expected;
};

// Every rule of the seed and the newer original, and every refusal (the value is kept).
const Case kCases[] = {
    // integer / number (seed _coerce_number)
    {"IntegerFromString", R"({"properties":{"n":{"type":"integer"}}})", R"({"n":"42"})",
     R"({"n":42})"},
    {"NegativeInteger", R"({"properties":{"n":{"type":"integer"}}})", R"({"n":"-7"})",
     R"({"n":-7})"},
    {"IntegralFloatTextBecomesInt", R"({"properties":{"n":{"type":"integer"}}})", R"({"n":"42.0"})",
     R"({"n":42})"},
    {"ExponentIntegral", R"({"properties":{"n":{"type":"integer"}}})", R"({"n":"1e3"})",
     R"({"n":1000})"},
    {"WhitespaceAroundNumber", R"({"properties":{"n":{"type":"integer"}}})", R"({"n":"  5\n"})",
     R"({"n":5})"},
    {"UnderscoreDigits", R"({"properties":{"n":{"type":"integer"}}})", R"({"n":"1_000"})",
     R"({"n":1000})"},
    {"IntegerRefusesFraction", R"({"properties":{"n":{"type":"integer"}}})", R"({"n":"42.5"})",
     R"({"n":"42.5"})"},
    {"NumberKeepsFraction", R"({"properties":{"x":{"type":"number"}}})", R"({"x":"42.5"})",
     R"({"x":42.5})"},
    {"NumberIntegralBecomesInt", R"({"properties":{"x":{"type":"number"}}})", R"({"x":"3"})",
     R"({"x":3})"},
    {"NotANumberKept", R"({"properties":{"n":{"type":"integer"}}})", R"({"n":"forty"})",
     R"({"n":"forty"})"},
    {"HexRefused", R"({"properties":{"n":{"type":"integer"}}})", R"({"n":"0x10"})",
     R"({"n":"0x10"})"},
    {"BadUnderscoreRefused", R"({"properties":{"n":{"type":"integer"}}})", R"({"n":"1__0"})",
     R"({"n":"1__0"})"},
    // the short-decimal fast path ("42") and its edges, which must match float() exactly
    {"PlusSignInteger", R"({"properties":{"n":{"type":"integer"}}})", R"({"n":"+7"})",
     R"({"n":7})"},
    {"NegativeZeroIsZero", R"({"properties":{"n":{"type":"integer"}}})", R"({"n":"-0"})",
     R"({"n":0})"},
    {"LeadingZeros", R"({"properties":{"n":{"type":"integer"}}})", R"({"n":"007"})", R"({"n":7})"},
    {"FifteenDigits", R"({"properties":{"n":{"type":"integer"}}})", R"({"n":"999999999999999"})",
     R"({"n":999999999999999})"},
    {"SeventeenDigitsRoundLikeFloat", R"({"properties":{"n":{"type":"integer"}}})",
     R"({"n":"12345678901234567"})", R"({"n":12345678901234568})"},
    {"LoneSignRefused", R"({"properties":{"n":{"type":"integer"}}})", R"({"n":"-"})",
     R"({"n":"-"})"},
    {"EmptyStringRefused", R"({"properties":{"n":{"type":"integer"}}})", R"({"n":""})",
     R"({"n":""})"},
    // boolean (seed _coerce_boolean): true/false only, case-insensitive, trimmed
    {"BoolTrue", R"({"properties":{"b":{"type":"boolean"}}})", R"({"b":"true"})", R"({"b":true})"},
    {"BoolFalseMixedCaseTrimmed", R"({"properties":{"b":{"type":"boolean"}}})",
     R"({"b":"  FaLsE "})", R"({"b":false})"},
    {"BoolRefusesYes", R"({"properties":{"b":{"type":"boolean"}}})", R"({"b":"yes"})",
     R"({"b":"yes"})"},
    {"BoolRefusesOne", R"({"properties":{"b":{"type":"boolean"}}})", R"({"b":"1"})",
     R"({"b":"1"})"},
    // only strings are coerced; typed values and unknown keys are left alone
    {"TypedValueUntouched", R"({"properties":{"n":{"type":"string"}}})", R"({"n":42})",
     R"({"n":42})"},
    {"StringStaysString", R"({"properties":{"s":{"type":"string"}}})", R"({"s":"42"})",
     R"({"s":"42"})"},
    {"UnknownKeyUntouched", R"({"properties":{"n":{"type":"integer"}}})", R"({"m":"42"})",
     R"({"m":"42"})"},
    {"UntypedPropertyUntouched", R"({"properties":{"n":{"description":"x"}}})", R"({"n":"42"})",
     R"({"n":"42"})"},
    // union types: tried in order, first successful coercion wins (string never "succeeds")
    {"UnionIntegerThenBoolean", R"({"properties":{"v":{"type":["integer","boolean"]}}})",
     R"({"v":"true"})", R"({"v":true})"},
    {"UnionStringFirstStillCoerces", R"({"properties":{"v":{"type":["string","integer"]}}})",
     R"({"v":"7"})", R"({"v":7})"},
    {"UnionNoneApplies", R"({"properties":{"v":{"type":["integer","boolean"]}}})",
     R"({"v":"maybe"})", R"({"v":"maybe"})"},
    // null where the schema allows it
    {"NullInTypeList", R"({"properties":{"v":{"type":["integer","null"]}}})", R"({"v":"null"})",
     R"({"v":null})"},
    {"NullableTrue", R"({"properties":{"v":{"type":"string","nullable":true}}})", R"({"v":"null"})",
     R"({"v":null})"},
    {"NullBranchInAnyOf", R"({"properties":{"v":{"anyOf":[{"type":"integer"},{"type":"null"}]}}})",
     R"({"v":"null"})", R"({"v":null})"},
    {"NullNotAllowedKept", R"({"properties":{"v":{"type":"string"}}})", R"({"v":"null"})",
     R"({"v":"null"})"},
    // JSON text for array/object parameters, kept only when the parsed type matches
    {"ArrayFromJsonText", R"({"properties":{"a":{"type":"array","items":{"type":"integer"}}}})",
     R"({"a":"[1,2]"})", R"({"a":[1,2]})"},
    {"ObjectFromJsonText", R"({"properties":{"o":{"type":"object"}}})", R"({"o":"{\"k\":1}"})",
     R"({"o":{"k":1}})"},
    {"ObjectRefusesArrayText", R"({"properties":{"o":{"type":"object"}}})", R"({"o":"[1]"})",
     R"({"o":"[1]"})"},
    {"EmptyStringToEmptyObject", R"({"properties":{"o":{"type":"object"}}})", R"({"o":""})",
     R"({"o":{}})"},
    {"EmptyStringKeptWhenRequired", R"({"properties":{"o":{"type":"object","required":["k"]}}})",
     R"({"o":""})", R"({"o":""})"},
    // a bare scalar for an array becomes a one-element array (and its items are coerced)
    {"BareStringWrapped", R"({"properties":{"a":{"type":"array","items":{"type":"string"}}}})",
     R"({"a":"x.txt"})", R"({"a":["x.txt"]})"},
    {"BareNumberWrapped", R"({"properties":{"a":{"type":"array"}}})", R"({"a":5})", R"({"a":[5]})"},
    {"WrappedItemCoerced", R"({"properties":{"a":{"type":"array","items":{"type":"integer"}}}})",
     R"({"a":"7"})", R"({"a":[7]})"},
    {"StringOrArrayNotWrapped", R"({"properties":{"a":{"type":["array","string"]}}})",
     R"({"a":"x"})", R"({"a":"x"})"},
    // recursion into items, properties and anyOf/oneOf/allOf
    {"ItemsRecursion", R"({"properties":{"a":{"type":"array","items":{"type":"integer"}}}})",
     R"({"a":["1","2","x"]})", R"({"a":[1,2,"x"]})"},
    {"NestedProperties",
     R"({"properties":{"o":{"type":"object","properties":{"n":{"type":"integer"}}}}})",
     R"({"o":{"n":"3"}})", R"({"o":{"n":3}})"},
    {"ParsedTextRecursesIntoItems",
     R"({"properties":{"a":{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer"}}}}}})",
     R"({"a":"[{\"n\":\"4\"}]"})", R"({"a":[{"n":4}]})"},
    {"OneOfBranchProperties",
     R"({"properties":{"o":{"oneOf":[{"type":"object","properties":{"b":{"type":"boolean"}}}]}}})",
     R"({"o":{"b":"TRUE"}})", R"({"o":{"b":true}})"},
    {"AllOfBranchProperties", R"({"allOf":[{"properties":{"n":{"type":"integer"}}}]})",
     R"({"n":"9"})", R"({"n":9})"},
    {"AnyOfStringValue", R"({"properties":{"v":{"anyOf":[{"type":"integer"},{"type":"string"}]}}})",
     R"({"v":"12"})", R"({"v":12})"},
    // The shapes compiled to a fast path (string, integer or boolean alone) keep what the
    // general rules keep.
    {"StringParamKeepsAnObject", R"({"properties":{"s":{"type":"string"}}})", R"({"s":{"a":"1"}})",
     R"({"s":{"a":"1"}})"},
    {"StringParamKeepsNullText", R"({"properties":{"s":{"type":"string"}}})", R"({"s":"null"})",
     R"({"s":"null"})"},
    {"UntypedParamKeepsText", R"({"properties":{"u":{}}})", R"({"u":"42"})", R"({"u":"42"})"},
    {"IntegerParamKeepsAnArray", R"({"properties":{"n":{"type":"integer"}}})", R"({"n":["1"]})",
     R"({"n":["1"]})"},
    {"IntegerParamKeepsABoolean", R"({"properties":{"n":{"type":"integer"}}})", R"({"n":true})",
     R"({"n":true})"},
    {"BooleanIgnoresCaseAndSpace", R"({"properties":{"b":{"type":"boolean"}}})",
     R"({"b":" FaLsE\n"})", R"({"b":false})"},
    {"BooleanRefusesYes", R"({"properties":{"b":{"type":"boolean"}}})", R"({"b":"yes"})",
     R"({"b":"yes"})"},
    {"BooleanParamKeepsANumber", R"({"properties":{"b":{"type":"boolean"}}})", R"({"b":1})",
     R"({"b":1})"},
    {"NullableIntegerTakesNull", R"({"properties":{"n":{"type":"integer","nullable":true}}})",
     R"({"n":"null"})", R"({"n":null})"},
};

class CoercionTable : public ::testing::TestWithParam<Case> {};

TEST_P(CoercionTable, AppliesTheRule) {
  const Case& c = GetParam();
  CoercionPlan plan = CoercionPlan::Compile(J(c.schema));
  Json args = J(c.input);
  plan.Coerce(args);
  EXPECT_EQ(args, J(c.expected)) << "input " << c.input << " got " << args.dump();
  // Coercion never changes the type of an already-correct value: running it twice is stable.
  Json again = args;
  plan.Coerce(again);
  EXPECT_EQ(again, args);
}

INSTANTIATE_TEST_SUITE_P(Rules, CoercionTable, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Coercion, InfinityAndNanBecomeFloats) {
  CoercionPlan plan = CoercionPlan::Compile(J(R"({"properties":{"n":{"type":"integer"}}})"));
  for (const char* text : {"inf", "-Infinity", "nan", "NaN"}) {
    Json args = Json::object({{"n", text}});
    plan.Coerce(args);
    ASSERT_TRUE(args["n"].is_number_float()) << text;
    const double v = args["n"].get<double>();
    EXPECT_TRUE(std::isinf(v) || std::isnan(v)) << text;
  }
}

// JSON equality ignores int vs float; the original's int(float(text)) yields an int, and so must
// both the short-decimal fast path and the general parse.
TEST(Coercion, IntegralTextBecomesAnIntegerNotAFloat) {
  CoercionPlan plan = CoercionPlan::Compile(J(R"({"properties":{"n":{"type":"integer"}}})"));
  for (const char* text :
       {"42", "-0", "+7", "999999999999999", "1234567890123456", "42.0", " 5 "}) {
    Json args = Json::object({{"n", text}});
    plan.Coerce(args);
    EXPECT_TRUE(args["n"].is_number_integer()) << text << " -> " << args.dump();
  }
}

TEST(Coercion, HugeIntegralValueStaysANumber) {
  CoercionPlan plan = CoercionPlan::Compile(J(R"({"properties":{"n":{"type":"integer"}}})"));
  Json args = J(R"({"n":"1e300"})");
  plan.Coerce(args);
  EXPECT_TRUE(args["n"].is_number_float());
}

TEST(Coercion, NonObjectArgumentsAreLeftAlone) {
  CoercionPlan plan = CoercionPlan::Compile(J(R"({"properties":{"n":{"type":"integer"}}})"));
  Json args = J(R"(["42"])");
  plan.Coerce(args);
  EXPECT_EQ(args, J(R"(["42"])"));
}

TEST(Coercion, HostileSchemasAndDeepValuesDoNotCrash) {
  std::string deep_schema = R"({"type":"integer"})";
  for (int i = 0; i < 200; ++i) deep_schema = R"({"type":"array","items":)" + deep_schema + "}";
  CoercionPlan plan = CoercionPlan::Compile(J(R"({"properties":{"a":)" + deep_schema + "}}"));
  std::string deep_value = R"("1")";
  for (int i = 0; i < 200; ++i) deep_value = "[" + deep_value + "]";
  Json args = J(R"({"a":)" + deep_value + "}");
  plan.Coerce(args);  // must terminate without blowing the stack
  CoercionPlan weird =
      CoercionPlan::Compile(J(R"({"properties":{"n":{"type":5,"items":"x","anyOf":7}}})"));
  Json a2 = J(R"({"n":"3"})");
  weird.Coerce(a2);
  EXPECT_EQ(a2, J(R"({"n":"3"})"));
}

TEST(Coercion, CoerceToolArgsUsesTheRegisteredSchema) {
  Registry r;
  ToolSpec spec;
  spec.name = "tool_7";
  spec.toolset = "bench";
  spec.schema = R"({"name":"tool_7","parameters":{"type":"object","properties":{
      "n":{"type":"integer"},"flag":{"type":"boolean"},"s":{"type":"string"}},"required":["n"]}})";
  spec.handler = [](const Json&, ToolContext&) { return ToolResult::Text("{}"); };
  ASSERT_TRUE(r.Register(std::move(spec)).ok());
  EXPECT_EQ(CoerceToolArgs(r, "tool_7", J(R"({"n":"42","flag":"true","s":"x"})")),
            J(R"({"n":42,"flag":true,"s":"x"})"));
  EXPECT_EQ(CoerceToolArgs(r, "unknown", J(R"({"n":"42"})")), J(R"({"n":"42"})"));
}

}  // namespace
}  // namespace talaria
