#include "agent/argument_repair.h"

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

namespace talaria::agent {
namespace {

Json Parsed(std::string_view text) { return *ParseJson(text); }

void ExpectRepairs(std::string_view raw, std::string_view expected, bool repaired = true) {
  auto r = RepairArguments(raw);
  ASSERT_TRUE(r.has_value()) << raw << ": " << r.error().message();
  EXPECT_EQ(r->args, Parsed(expected)) << raw;
  EXPECT_EQ(r->repaired, repaired) << raw;
}

void ExpectRefused(std::string_view raw) {
  auto r = RepairArguments(raw);
  ASSERT_FALSE(r.has_value()) << raw << " -> " << DumpJson(r->args);
  EXPECT_NE(r.error().message().find("not run"), std::string::npos) << r.error().message();
}

TEST(ArgumentRepair, ValidObjectsPassUnchanged) {
  ExpectRepairs(R"({"path": "a.txt", "limit": 3})", R"({"path": "a.txt", "limit": 3})", false);
  ExpectRepairs("", "{}", false);
  ExpectRepairs("  \n", "{}", false);
}

TEST(ArgumentRepair, StripsSpecialTokensAndFences) {
  ExpectRepairs(R"(<|call|>{"path": "a"}<|end|>)", R"({"path": "a"})");
  ExpectRepairs("```json\n{\"path\": \"a\"}\n```", R"({"path": "a"})");
}

TEST(ArgumentRepair, RemovesTrailingCommas) {
  ExpectRepairs(R"({"a": [1, 2, ], "b": 1, })", R"({"a": [1, 2], "b": 1})");
}

TEST(ArgumentRepair, ConvertsSingleQuotesAndPythonLiterals) {
  ExpectRepairs(R"({'path': 'it"s', 'flag': True, 'x': None})",
                R"({"path": "it\"s", "flag": true, "x": null})");
  ExpectRepairs(R"({'text': 'don\'t'})", R"({"text": "don't"})");
  // Words inside strings are left alone.
  ExpectRepairs(R"({'text': 'True story', })", R"({"text": "True story"})");
}

TEST(ArgumentRepair, UnwrapsAnObjectInsideAString) {
  ExpectRepairs(R"("{\"path\": \"a\"}")", R"({"path": "a"})");
}

TEST(ArgumentRepair, EscapesControlCharactersInStrings) {
  ExpectRepairs("{\"content\": \"line1\nline2\ttab\"}", R"({"content": "line1\nline2\ttab"})");
}

TEST(ArgumentRepair, ClosesUnclosedBracketsOutsideStrings) {
  ExpectRepairs(R"({"a": {"b": [1, 2)", R"({"a": {"b": [1, 2]}})");
  ExpectRepairs(R"({"a": 1}})", R"({"a": 1})");
}

TEST(ArgumentRepair, RefusesTextCutOffInsideAString) {
  // A half-written file must never be written.
  ExpectRefused(R"({"path": "a.py", "content": "def f():\n    return)");
}

TEST(ArgumentRepair, RefusesWhatIsNotAnObject) {
  ExpectRefused("[1, 2]");
  ExpectRefused("42");
  ExpectRefused(R"("just a string")");
  ExpectRefused("{\"a\": [1}");
  ExpectRefused("not json at all");
  ExpectRefused(std::string(10'000, '{') + std::string(10'000, '}'));
}

TEST(ArgumentRepair, RefusalQuotesABoundedPreview) {
  auto r = RepairArguments("x" + std::string(5'000, 'y'));
  ASSERT_FALSE(r.has_value());
  EXPECT_LT(r.error().message().size(), 600u);
}

TEST(ArgumentRepair, CanonicalFormSortsKeysAtEveryLevel) {
  EXPECT_EQ(CanonicalArguments(Parsed(R"({"b": 1, "a": {"d": [1, {"z": 1, "y": 2}], "c": 2}})")),
            R"({"a":{"c":2,"d":[1,{"y":2,"z":1}]},"b":1})");
  EXPECT_EQ(CanonicalArguments(Parsed(R"({"a": 1, "b": 2})")),
            CanonicalArguments(Parsed(R"({"b": 2, "a": 1})")));
}

}  // namespace
}  // namespace talaria::agent
