// Conformance: the official JSON-Schema-Test-Suite (Debian package json-schema-test-suite),
// drafts 4 and 7. Every case of every file directly under tests/draft4 and tests/draft7 is
// asserted against its "valid" expectation, one ctest per file
// (SchemaTestSuite/SchemaConformance.MatchesSuiteExpectations/draft7_ref, ...).
//
// Not run: the optional/ folders. format is an annotation here (by design, see
// schema_validator.h); bignum needs arbitrary precision; ecmascript-regex needs ECMA-262
// regexes, and patterns are RE2; zeroTerminatedFloats wants draft 4's "1.0 is not an integer",
// while the validator follows draft 6+ (1.0 is an integer) for every draft; content is
// annotation-only in draft 7.
//
// Remote references: SchemaValidator resolves references only inside the schema document (its
// API takes no resolver, and tool schemas must not fetch anything). The suite expects the files
// of its remotes/ folder to be served at http://localhost:1234/ and the draft's meta-schema to
// be known, so a schema that refers outside itself gets those documents bundled under
// "definitions", each carrying its URI as id/$id: a compound document that resolves exactly as
// the fetched ones would. Thus refRemote.json and the meta-schema cases of ref.json and
// definitions.json run in full.

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "talaria/base/json.h"
#include "talaria/core/schema_validator.h"

namespace talaria {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSuiteDir = "/usr/share/json-schema-test-suite";
constexpr std::string_view kRemoteBase = "http://localhost:1234/";

// Suite cases that are known to fail, with why. Each entry must name a case that exists and
// still fails (a test below enforces both), so this list can neither grow silently nor rot.
struct Exclusion {
  std::string_view file;   // "draft7/ref.json"
  std::string_view group;  // the case group's "description"
  std::string_view test;   // the test's "description"
  std::string_view reason;
};
constexpr Exclusion kExclusions[] = {
    // None: every non-optional case of drafts 4 and 7 passes. Keep the sentinel below last.
    {"", "", "", ""},
};

bool IsSentinel(const Exclusion& e) { return e.file.empty(); }

const Exclusion* FindExclusion(std::string_view file, std::string_view group,
                               std::string_view test) {
  for (const Exclusion& e : kExclusions) {
    if (!IsSentinel(e) && e.file == file && e.group == group && e.test == test) return &e;
  }
  return nullptr;
}

constexpr std::string_view kDraft4MetaSchema = R"json(
{"id":"http://json-schema.org/draft-04/schema#","$schema":
"http://json-schema.org/draft-04/schema#","description":
"Core schema meta-schema","definitions":{"schemaArray":{
"type":"array","minItems":1,"items":{"$ref":"#"}},"positiveInteger":{
"type":"integer","minimum":0},"positiveIntegerDefault0":{
"allOf":[{"$ref":"#/definitions/positiveInteger"},{"default":0}]},
"simpleTypes":{"enum":["array","boolean","integer","null",
"number","object","string"]},"stringArray":{"type":"array",
"items":{"type":"string"},"minItems":1,"uniqueItems":true}},
"type":"object","properties":{"id":{"type":"string"},"$schema":{
"type":"string"},"title":{"type":"string"},"description":{
"type":"string"},"default":{},"multipleOf":{"type":"number",
"minimum":0,"exclusiveMinimum":true},"maximum":{"type":"number"},
"exclusiveMaximum":{"type":"boolean","default":false},"minimum":{
"type":"number"},"exclusiveMinimum":{"type":"boolean","default":false},
"maxLength":{"$ref":"#/definitions/positiveInteger"},"minLength":{
"$ref":"#/definitions/positiveIntegerDefault0"},"pattern":{
"type":"string","format":"regex"},"additionalItems":{"anyOf":[{
"type":"boolean"},{"$ref":"#"}],"default":{}},"items":{"anyOf":[{
"$ref":"#"},{"$ref":"#/definitions/schemaArray"}],"default":{}},
"maxItems":{"$ref":"#/definitions/positiveInteger"},"minItems":{
"$ref":"#/definitions/positiveIntegerDefault0"},"uniqueItems":{
"type":"boolean","default":false},"maxProperties":{"$ref":
"#/definitions/positiveInteger"},"minProperties":{"$ref":
"#/definitions/positiveIntegerDefault0"},"required":{"$ref":
"#/definitions/stringArray"},"additionalProperties":{"anyOf":[{
"type":"boolean"},{"$ref":"#"}],"default":{}},"definitions":{
"type":"object","additionalProperties":{"$ref":"#"},"default":{}},
"properties":{"type":"object","additionalProperties":{"$ref":
"#"},"default":{}},"patternProperties":{"type":"object",
"additionalProperties":{"$ref":"#"},"default":{}},"dependencies":{
"type":"object","additionalProperties":{"anyOf":[{"$ref":
"#"},{"$ref":"#/definitions/stringArray"}]}},"enum":{"type":
"array","minItems":1,"uniqueItems":true},"type":{"anyOf":[{
"$ref":"#/definitions/simpleTypes"},{"type":"array","items":{
"$ref":"#/definitions/simpleTypes"},"minItems":1,"uniqueItems":true}]},
"format":{"type":"string"},"allOf":{"$ref":"#/definitions/schemaArray"},
"anyOf":{"$ref":"#/definitions/schemaArray"},"oneOf":{"$ref":
"#/definitions/schemaArray"},"not":{"$ref":"#"}},"dependencies":{
"exclusiveMaximum":["maximum"],"exclusiveMinimum":["minimum"]},
"default":{}})json";

constexpr std::string_view kDraft7MetaSchema = R"json(
{"$schema":"http://json-schema.org/draft-07/schema#","$id":
"http://json-schema.org/draft-07/schema#","title":"Core schema meta-schema",
"definitions":{"schemaArray":{"type":"array","minItems":1,
"items":{"$ref":"#"}},"nonNegativeInteger":{"type":"integer",
"minimum":0},"nonNegativeIntegerDefault0":{"allOf":[{"$ref":
"#/definitions/nonNegativeInteger"},{"default":0}]},"simpleTypes":{
"enum":["array","boolean","integer","null","number","object",
"string"]},"stringArray":{"type":"array","items":{"type":
"string"},"uniqueItems":true,"default":[]}},"type":["object",
"boolean"],"properties":{"$id":{"type":"string","format":
"uri-reference"},"$schema":{"type":"string","format":"uri"},
"$ref":{"type":"string","format":"uri-reference"},"$comment":{
"type":"string"},"title":{"type":"string"},"description":{
"type":"string"},"default":true,"readOnly":{"type":"boolean",
"default":false},"examples":{"type":"array","items":true},
"multipleOf":{"type":"number","exclusiveMinimum":0},"maximum":{
"type":"number"},"exclusiveMaximum":{"type":"number"},"minimum":{
"type":"number"},"exclusiveMinimum":{"type":"number"},"maxLength":{
"$ref":"#/definitions/nonNegativeInteger"},"minLength":{
"$ref":"#/definitions/nonNegativeIntegerDefault0"},"pattern":{
"type":"string","format":"regex"},"additionalItems":{"$ref":
"#"},"items":{"anyOf":[{"$ref":"#"},{"$ref":"#/definitions/schemaArray"}],
"default":true},"maxItems":{"$ref":"#/definitions/nonNegativeInteger"},
"minItems":{"$ref":"#/definitions/nonNegativeIntegerDefault0"},
"uniqueItems":{"type":"boolean","default":false},"contains":{
"$ref":"#"},"maxProperties":{"$ref":"#/definitions/nonNegativeInteger"},
"minProperties":{"$ref":"#/definitions/nonNegativeIntegerDefault0"},
"required":{"$ref":"#/definitions/stringArray"},"additionalProperties":{
"$ref":"#"},"definitions":{"type":"object","additionalProperties":{
"$ref":"#"},"default":{}},"properties":{"type":"object",
"additionalProperties":{"$ref":"#"},"default":{}},"patternProperties":{
"type":"object","additionalProperties":{"$ref":"#"},"propertyNames":{
"format":"regex"},"default":{}},"dependencies":{"type":"object",
"additionalProperties":{"anyOf":[{"$ref":"#"},{"$ref":"#/definitions/stringArray"}]}},
"propertyNames":{"$ref":"#"},"const":true,"enum":{"type":
"array","items":true},"type":{"anyOf":[{"$ref":"#/definitions/simpleTypes"},{
"type":"array","items":{"$ref":"#/definitions/simpleTypes"},
"minItems":1,"uniqueItems":true}]},"format":{"type":"string"},
"contentMediaType":{"type":"string"},"contentEncoding":{
"type":"string"},"if":{"$ref":"#"},"then":{"$ref":"#"},"else":{
"$ref":"#"},"allOf":{"$ref":"#/definitions/schemaArray"},
"anyOf":{"$ref":"#/definitions/schemaArray"},"oneOf":{"$ref":
"#/definitions/schemaArray"},"not":{"$ref":"#"}},"default":true})json";

Json ParseOrDie(std::string_view text, const std::string& what) {
  Result<Json> json = ParseJson(text);
  EXPECT_TRUE(json.has_value()) << what << ": " << json.error().ToString();
  return json ? std::move(*json) : Json();
}

Json ReadJsonFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return ParseOrDie(text.str(), path.string());
}

// A "$ref" that leaves the document: an absolute URI or a relative one against some $id.
bool HasNonLocalRef(const Json& v) {
  if (v.is_object()) {
    for (const auto& [key, value] : v.items()) {
      if (key == "$ref" && value.is_string() && !value.get<std::string>().starts_with("#")) {
        return true;
      }
      if (HasNonLocalRef(value)) return true;
    }
  } else if (v.is_array()) {
    return std::any_of(v.begin(), v.end(), [](const Json& item) { return HasNonLocalRef(item); });
  }
  return false;
}

Json BundleRemotes(Json schema, std::string_view draft) {
  if (!schema.is_object() || !HasNonLocalRef(schema)) return schema;
  const char* id_keyword = draft == "draft4" ? "id" : "$id";
  const fs::path remotes = fs::path(kSuiteDir) / "remotes";
  Json& definitions = schema["definitions"];
  for (const auto& entry : fs::recursive_directory_iterator(remotes)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    const std::string relative = fs::relative(entry.path(), remotes).generic_string();
    Json document = ReadJsonFile(entry.path());
    document[id_keyword] = std::string(kRemoteBase) + relative;
    definitions["talaria-remote:" + relative] = std::move(document);
  }
  definitions["talaria-metaschema"] =
      ParseOrDie(draft == "draft4" ? kDraft4MetaSchema : kDraft7MetaSchema, "meta-schema");
  return schema;
}

// "draft7/ref.json" for every non-optional suite file of the drafts.
std::vector<std::string> ListSuiteFiles() {
  std::vector<std::string> files;
  for (const char* draft : {"draft4", "draft7"}) {
    const fs::path dir = fs::path(kSuiteDir) / "tests" / draft;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.is_regular_file() && entry.path().extension() == ".json") {
        files.push_back(std::string(draft) + "/" + entry.path().filename().string());
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string TestNameFor(const testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.size() - 5);  // drop ".json"
  const auto not_alnum = [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); };
  std::replace_if(name.begin(), name.end(), not_alnum, '_');
  return name;
}

class SchemaConformance : public testing::TestWithParam<std::string> {};

TEST_P(SchemaConformance, MatchesSuiteExpectations) {
  const std::string& file = GetParam();
  const std::string draft = file.substr(0, file.find('/'));
  const Json groups = ReadJsonFile(fs::path(kSuiteDir) / "tests" / file);
  ASSERT_TRUE(groups.is_array() && !groups.empty()) << file;

  std::set<std::string> excluded_and_failing;
  int cases = 0;
  for (const Json& group : groups) {
    const std::string group_name = group.at("description").get<std::string>();
    Result<SchemaValidator> validator =
        SchemaValidator::Compile(BundleRemotes(group.at("schema"), draft));
    ASSERT_TRUE(validator.has_value())
        << file << " / " << group_name << ": " << validator.error().ToString();
    for (const Json& test : group.at("tests")) {
      ++cases;
      const std::string test_name = test.at("description").get<std::string>();
      const bool expected = test.at("valid").get<bool>();
      const Json& data = test.at("data");
      std::vector<std::string> errors;
      const bool valid = validator->Validate(data, &errors);
      const std::string where = file + " / " + group_name + " / " + test_name;

      // Collecting errors must never change the verdict, and a failure must say why.
      EXPECT_EQ(validator->Validate(data), valid) << where;
      EXPECT_EQ(errors.empty(), valid) << where;

      if (FindExclusion(file, group_name, test_name) != nullptr) {
        EXPECT_NE(valid, expected) << where << ": passes now, remove it from kExclusions";
        excluded_and_failing.insert(group_name + " / " + test_name);
        continue;
      }
      EXPECT_EQ(valid, expected) << where << "\n  data: " << DumpJson(data)
                                 << "\n  errors: " << testing::PrintToString(errors);
    }
  }
  EXPECT_GT(cases, 0) << file;

  std::set<std::string> listed;
  for (const Exclusion& e : kExclusions) {
    if (!IsSentinel(e) && e.file == file) {
      listed.insert(std::string(e.group) + " / " + std::string(e.test));
    }
  }
  EXPECT_EQ(excluded_and_failing, listed) << "kExclusions names cases that do not exist";
}

INSTANTIATE_TEST_SUITE_P(SchemaTestSuite, SchemaConformance, testing::ValuesIn(ListSuiteFiles()),
                         TestNameFor);

TEST(SchemaConformanceSuite, IsInstalledWithBothDrafts) {
  const std::vector<std::string> files = ListSuiteFiles();
  const auto count = [&](std::string_view draft) {
    return std::count_if(files.begin(), files.end(),
                         [&](const std::string& f) { return f.starts_with(draft); });
  };
  // Debian 12 ships 28 draft 4 and 35 draft 7 files; fewer means the package is missing.
  EXPECT_GE(count("draft4/"), 28) << "install the json-schema-test-suite package";
  EXPECT_GE(count("draft7/"), 35) << "install the json-schema-test-suite package";
}

TEST(SchemaConformanceSuite, ExclusionsNameSuiteFiles) {
  const std::vector<std::string> files = ListSuiteFiles();
  for (const Exclusion& e : kExclusions) {
    if (IsSentinel(e)) continue;
    EXPECT_NE(std::find(files.begin(), files.end(), e.file), files.end()) << e.file;
    EXPECT_FALSE(e.reason.empty()) << e.file << " / " << e.group << " / " << e.test;
  }
}

}  // namespace
}  // namespace talaria
