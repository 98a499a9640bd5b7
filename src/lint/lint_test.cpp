#include "talaria/lint/lint.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace talaria {
namespace {

using LintStatus = LintReport::Status;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// ---- per-type checks --------------------------------------------------------------------------

struct ContentCase {
  const char* name;
  std::string path;
  std::string content;
  // Expected first issue; line 0 = the content is clean.
  int line;
  int column;
  std::string kind;
  std::string message_part;
};

void ExpectCase(const ContentCase& c) {
  SCOPED_TRACE(c.name);
  const LintReport r = LintContent(c.path, c.content);
  if (c.line == 0) {
    EXPECT_EQ(r.status, LintStatus::kOk) << r.output;
    EXPECT_EQ(r.output, "");
    EXPECT_TRUE(r.issues.empty());
    return;
  }
  ASSERT_EQ(r.status, LintStatus::kError);
  ASSERT_FALSE(r.issues.empty());
  const LintIssue& issue = r.issues.front();
  EXPECT_EQ(issue.line, c.line) << r.output;
  EXPECT_EQ(issue.column, c.column) << r.output;
  EXPECT_EQ(issue.kind, c.kind) << r.output;
  EXPECT_THAT(issue.message, HasSubstr(c.message_part));
  EXPECT_THAT(r.output, StartsWith(issue.ToString()));
}

TEST(LintContent, Json) {
  const std::vector<ContentCase> cases = {
      {"object", "a.json", R"({"a": [1, 2.5, {"b": null}], "c": "é"})", 0, 0, "", ""},
      {"scalar", "a.json", "42\n", 0, 0, "", ""},
      {"trailing comma", "a.json", "{\n  \"a\": 1,\n}\n", 3, 1, "JSONDecodeError",
       "unexpected '}'"},
      {"column counts characters", "a.json", "{\n  \"é\": 1 x}", 2, 10, "JSONDecodeError",
       "invalid literal"},
      {"raw newline in string", "a.json", "{\"a\": \"abc\n\"}", 1, 11, "JSONDecodeError",
       "control character"},
      {"empty", "a.json", "", 1, 1, "JSONDecodeError", "unexpected end of input"},
      {"unclosed", "a.json", "[1,\n 2\n", 3, 1, "JSONDecodeError", "unexpected end of input"},
      {"upper-case extension", "DIR/A.JSON", "{", 1, 2, "JSONDecodeError", "end of input"},
  };
  for (const auto& c : cases) ExpectCase(c);
}

TEST(LintContent, Yaml) {
  const std::vector<ContentCase> cases = {
      {"mapping", "a.yaml", "a: 1\nb:\n  - x\n  - {y: 2}\n", 0, 0, "", ""},
      {"several documents", "a.yml", "a: 1\n---\na: 2\n---\n- [1, 2]\n", 0, 0, "", ""},
      {"tags and anchors", "a.yaml", "x: !Ref y\nbase: &b {k: 1}\nuse: *b\n", 0, 0, "", ""},
      {"bad indentation", "a.yaml", "a: 1\n b: 2\n", 2, 3, "YAMLError", "illegal map value"},
      {"unclosed flow", "a.yml", "key: [1, 2\nnext: 3\n", 2, 5, "YAMLError",
       "end of sequence flow not found"},
      {"error in second document", "a.yaml", "a: 1\n---\nb: [\n", 4, 1, "YAMLError",
       "end of sequence flow"},
      {"column counts characters", "a.yaml", "éé: x: y\n", 1, 6, "YAMLError", "illegal map value"},
  };
  for (const auto& c : cases) ExpectCase(c);
}

TEST(LintContent, YamlDuplicateKeys) {
  const LintReport r = LintContent("c.yaml", "a: 1\nb:\n  c: 2\n  c: 3\n\"a\": 4\n");
  ASSERT_EQ(r.status, LintStatus::kError);
  ASSERT_EQ(r.issues.size(), 2u);
  EXPECT_EQ(r.issues[0].line, 4);
  EXPECT_EQ(r.issues[0].column, 3);
  EXPECT_EQ(r.issues[0].kind, "DuplicateKeyError");
  EXPECT_EQ(r.issues[0].category, LintIssue::Category::kDuplicateKey);
  EXPECT_EQ(r.issues[0].message, "duplicate key \"c\" in mapping (first defined on line 3)");
  EXPECT_EQ(r.issues[1].line, 5);
  EXPECT_EQ(r.issues[1].message, "duplicate key \"a\" in mapping (first defined on line 1)");
  EXPECT_EQ(r.output,
            "DuplicateKeyError: duplicate key \"c\" in mapping (first defined on line 3) (line 4, "
            "column 3)\nDuplicateKeyError: duplicate key \"a\" in mapping (first defined on line "
            "1) (line 5, column 1)");
}

TEST(LintContent, YamlKeysThatAreNotDuplicates) {
  const std::vector<std::string> clean = {
      "1: x\n\"1\": y\n",                           // int and str keys differ
      "a: 1\n---\na: 2\n",                          // separate documents
      "a: {b: 1}\nc: {b: 2}\nb: 3\n",               // same key in different mappings
      "- a: 1\n- a: 2\n",                           // one mapping per sequence item
      "base: &b {x: 1}\nd:\n  <<: *b\n  <<: *b\n",  // repeated merge keys are tolerated
      "a: 1\nb: a\nc: a\n",                         // equal values are fine
  };
  for (const std::string& text : clean) {
    const LintReport r = LintContent("x.yaml", text);
    EXPECT_EQ(r.status, LintStatus::kOk) << text << "\n" << r.output;
  }
  // Quoted and plain spellings of one string, and flow mappings, are caught.
  EXPECT_EQ(LintContent("x.yaml", "a: 1\n'a': 2\n").issues.size(), 1u);
  EXPECT_EQ(LintContent("x.yaml", "m: {k: 1, k: 2}\n").issues.size(), 1u);
  EXPECT_EQ(LintContent("x.yaml", "null: 1\n~: 2\n").issues.size(), 1u);
}

TEST(LintContent, Toml) {
  const std::vector<ContentCase> cases = {
      {"document", "pyproject.toml",
       "[project]\nname = \"x\"\nversion = \"1.0\"\n[tool.x]\nlist = [1, 2]\n", 0, 0, "", ""},
      {"missing value", "a.toml", "a = 1\nb = \n", 2, 5, "TOMLDecodeError", "expected value"},
      {"duplicate key", "a.toml", "a = 1\na = 2\n", 2, 5, "TOMLDecodeError",
       "cannot redefine existing"},
      {"unterminated string", "a.toml", "[t]\nk = \"abc\n", 2, 9, "TOMLDecodeError", ""},
  };
  for (const auto& c : cases) ExpectCase(c);
}

TEST(LintContent, Python) {
  const std::vector<ContentCase> cases = {
      {"module", "m.py",
       "import os\n\n\ndef f(a, b=1):\n    \"\"\"Doc é.\"\"\"\n    return [a * b for _ in "
       "range(3)]\n",
       0, 0, "", ""},
      {"bad def", "m.py", "def f(:\n", 1, 7, "SyntaxError", "invalid syntax"},
      {"missing indent", "m.py", "if x:\npass\n", 2, 1, "IndentationError",
       "expected an indented block after 'if' statement on line 1"},
      {"unexpected indent", "m.py", "x = 1\n    y = 2\n", 2, 4, "IndentationError",
       "unexpected indent"},
      {"tabs and spaces", "m.py", "if x:\n        a = 1\n\tb = 2\n", 3, 1, "TabError",
       "inconsistent use of tabs and spaces"},
      {"never closed", "m.py", "x = 1\ny = (1,\n", 2, 5, "SyntaxError", "'(' was never closed"},
      {"compiler error", "m.py", "return 5\n", 1, 1, "SyntaxError", "'return' outside function"},
      {"invalid utf-8", "m.py", "s = '\xff'\n", 1, 0, "SyntaxError", "(unicode error)"},
  };
  for (const auto& c : cases) {
    if (std::string(c.name) == "invalid utf-8") {
      // Python's offset for decode errors is not meaningful; only the line is checked.
      const LintReport r = LintContent(c.path, c.content);
      ASSERT_EQ(r.status, LintStatus::kError);
      EXPECT_EQ(r.issues.at(0).line, 1);
      EXPECT_THAT(r.issues.at(0).message, HasSubstr(c.message_part));
      continue;
    }
    ExpectCase(c);
  }
  // A coding cookie is honoured, as by py_compile.
  EXPECT_TRUE(LintContent("m.py", "# -*- coding: latin-1 -*-\ns = '\xff'\n").ok());
}

TEST(LintContent, PythonLeavesNoPendingError) {
  // Alternate failing and passing compiles: a leaked error indicator would fail the good ones.
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(LintContent("a.py", "def (\n").status, LintStatus::kError);
    EXPECT_EQ(LintContent("a.py", "x = 1\n").status, LintStatus::kOk);
  }
  EXPECT_TRUE(InitPythonLinter().ok());
}

TEST(LintContent, EncodingErrorsAreReportedWithPosition) {
  const std::vector<ContentCase> cases = {
      {"NUL in JSON", "a.json", std::string("{\"a\":\n 1\0}", 10), 2, 3, "UnicodeDecodeError",
       "NUL byte"},
      {"NUL in YAML", "a.yaml", std::string("a: 1\n\0b: 2\n", 11), 2, 1, "UnicodeDecodeError",
       "NUL byte"},
      {"NUL in TOML", "a.toml", std::string("a = 1\0", 6), 1, 6, "UnicodeDecodeError", "NUL byte"},
      {"NUL in Python", "a.py", std::string("x = 1\ny = 'é\0'\n", 15), 2, 7, "UnicodeDecodeError",
       "NUL byte"},
      {"invalid UTF-8 in YAML", "a.yaml", "a: é\nb: \xff\xfe\n", 2, 4, "UnicodeDecodeError",
       "invalid UTF-8 byte 0xFF"},
      {"overlong UTF-8 in JSON", "a.json", "[\"\xC0\xAF\"]", 1, 3, "UnicodeDecodeError",
       "invalid UTF-8 byte 0xC0"},
      {"surrogate in TOML", "a.toml", "a = \"\xED\xA0\x80\"", 1, 6, "UnicodeDecodeError",
       "invalid UTF-8"},
      {"truncated sequence", "a.json", "\"\xE2\x82", 1, 2, "UnicodeDecodeError", "invalid UTF-8"},
  };
  for (const auto& c : cases) ExpectCase(c);
}

TEST(LintContent, LeadingBomIsIgnored) {
  EXPECT_TRUE(LintContent("a.json", "\xEF\xBB\xBF{\"a\": 1}").ok());
  EXPECT_TRUE(LintContent("a.yaml",
                          "\xEF\xBB\xBF"
                          "a: 1\n")
                  .ok());
  EXPECT_TRUE(LintContent("a.toml",
                          "\xEF\xBB\xBF"
                          "a = 1\n")
                  .ok());
  EXPECT_TRUE(LintContent("a.py",
                          "\xEF\xBB\xBF"
                          "x = 1\n")
                  .ok());
}

TEST(LintContent, UnknownTypesAreSkipped) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"notes.txt", "No linter for .txt files"},
      {"main.rs", "No linter for .rs files"},
      {"Makefile", "No linter for files without an extension"},
      {".bashrc", "No linter for files without an extension"},
      {"dir.json/file", "No linter for files without an extension"},
  };
  for (const auto& [path, message] : cases) {
    const LintReport r = LintContent(path, "{{{ not parsed");
    EXPECT_EQ(r.status, LintStatus::kSkipped) << path;
    EXPECT_EQ(r.message, message) << path;
    EXPECT_EQ(DumpJson(r.ToJson()), "{\"status\":\"skipped\",\"message\":\"" + message + "\"}");
  }
}

TEST(LintExtension, FollowsSplitext) {
  EXPECT_EQ(LintExtension("a/b/C.Json"), ".json");
  EXPECT_EQ(LintExtension("x.tar.gz"), ".gz");
  EXPECT_EQ(LintExtension(".bashrc"), "");
  EXPECT_EQ(LintExtension("..json"), "");
  EXPECT_EQ(LintExtension("a."), ".");
  EXPECT_EQ(LintExtension(""), "");
  EXPECT_TRUE(HasLinter("k8s/deploy.YML"));
  EXPECT_FALSE(HasLinter("README.md"));
}

// ---- report shape ---------------------------------------------------------------------------

TEST(LintReport, ToJsonMatchesTheReferenceShape) {
  EXPECT_EQ(DumpJson(LintContent("a.json", "{}").ToJson()), R"({"status":"ok","output":""})");
  EXPECT_EQ(DumpJson(LintContent("a.json", "[1,]").ToJson()),
            R"j({"status":"error","output":"JSONDecodeError: syntax error while parsing value - )j"
            R"j(unexpected ']'; expected '[', '{', or a literal (line 1, column 4)"})j");
  LintReport pre;
  pre.status = LintStatus::kPreexisting;
  pre.output = "SyntaxError: x (line 1)";
  pre.message = std::string(kPreexistingLintMessage);
  const Json j = pre.ToJson();
  EXPECT_EQ(j["status"], "error");
  EXPECT_EQ(j["output"], "SyntaxError: x (line 1)");
  EXPECT_EQ(j["message"],
            "Pre-existing lint errors \u2014 this edit didn't introduce new ones but the file is "
            "still broken.");
  EXPECT_EQ(std::vector<std::string>({"status", "output", "message"}), [&] {
    std::vector<std::string> keys;
    for (const auto& [k, v] : j.items()) keys.push_back(k);
    return keys;
  }());
}

TEST(LintIssue, ToStringOmitsUnknownPosition) {
  EXPECT_EQ((LintIssue{3, 7, "bad", "SyntaxError", {}}).ToString(),
            "SyntaxError: bad (line 3, column 7)");
  EXPECT_EQ((LintIssue{3, 0, "bad", "SyntaxError", {}}).ToString(), "SyntaxError: bad (line 3)");
  EXPECT_EQ((LintIssue{0, 0, "bad", "MemoryError", {}}).ToString(), "MemoryError: bad");
}

// ---- delta ------------------------------------------------------------------------------------

std::string PythonBody(int lines) {
  std::string s;
  for (int i = 0; i < lines; ++i) s += "v" + std::to_string(i) + " = " + std::to_string(i) + "\n";
  return s;
}

TEST(LintDelta, CleanAfterEditIsOk) {
  const LintReport r = LintDelta("a.py", std::string_view("x = (\n"), "x = ()\n");
  EXPECT_EQ(r.status, LintStatus::kOk);
}

TEST(LintDelta, ErrorInAPreviouslyCleanFileIsReportedAsIs) {
  const LintReport r = LintDelta("a.py", std::string_view("x = 1\n"), "x = 1\ndef f(:\n");
  ASSERT_EQ(r.status, LintStatus::kError);
  EXPECT_EQ(r.output, "SyntaxError: invalid syntax (line 2, column 7)");
  EXPECT_TRUE(r.message.empty());
}

TEST(LintDelta, UnknownOldContentReportsEverything) {
  const LintReport r = LintDelta("a.yaml", std::nullopt, "a: 1\na: 2\n");
  ASSERT_EQ(r.status, LintStatus::kError);
  EXPECT_EQ(r.issues.size(), 1u);
}

TEST(LintDelta, EditThatAddsAnErrorReportsOnlyIt) {
  // The file already repeats key "a" (line 2); the edit repeats "b" too.
  const std::string old_text = "a: 1\na: 2\nb: 3\n";
  const std::string new_text = "a: 1\na: 2\nb: 3\nb: 4\n";
  const LintReport r = LintDelta("c.yaml", std::string_view(old_text), new_text);
  ASSERT_EQ(r.status, LintStatus::kError);
  ASSERT_EQ(r.issues.size(), 1u);
  EXPECT_EQ(r.issues[0].line, 4);
  EXPECT_EQ(r.output, std::string(kNewLintErrorsHeader) +
                          "\nDuplicateKeyError: duplicate key \"b\" in mapping (first defined on "
                          "line 3) (line 4, column 1)");
  EXPECT_EQ(DumpJson(r.ToJson()),
            "{\"status\":\"error\",\"output\":\"New lint errors introduced by this edit "
            "(pre-existing errors filtered out):\\nDuplicateKeyError: duplicate key \\\"b\\\" in "
            "mapping (first defined on line 3) (line 4, column 1)\"}");
}

TEST(LintDelta, EditToAnAlreadyBrokenFileIsPreexisting) {
  const std::string old_text = PythonBody(5) + "x = (1,\n";
  const std::string new_text = "import os\n" + PythonBody(5) + "x = (1,\n";
  const LintReport r = LintDelta("m.py", std::string_view(old_text), new_text);
  ASSERT_EQ(r.status, LintStatus::kPreexisting);
  EXPECT_EQ(r.message, kPreexistingLintMessage);
  EXPECT_EQ(r.output, "SyntaxError: '(' was never closed (line 7, column 5)");
  ASSERT_EQ(r.issues.size(), 1u);
  const Json j = r.ToJson();
  EXPECT_EQ(j["status"], "error");
  EXPECT_EQ(j["message"], std::string(kPreexistingLintMessage));
}

TEST(LintDelta, ErrorShiftedByInsertedLinesIsNotNew) {
  // Ten lines inserted above and below keep moving the old errors; none is new.
  std::string old_text = "a: 1\nb:\n  c: 2\n  c: 3\nd: 4\nd: 5\n";
  std::string new_text;
  for (int i = 0; i < 10; ++i) new_text += "top" + std::to_string(i) + ": x\n";
  new_text += "a: 1\nb:\n  c: 2\n  extra: 1\n  c: 3\nd: 4\nmore: 1\nd: 5\n";
  const LintReport r = LintDelta("s.yaml", std::string_view(old_text), new_text);
  ASSERT_EQ(r.status, LintStatus::kPreexisting) << r.output;
  ASSERT_EQ(r.issues.size(), 2u);
  EXPECT_EQ(r.issues[0].line, 15);
  EXPECT_EQ(r.issues[1].line, 18);
}

TEST(LintDelta, ErrorMovedByDeletedLinesIsNotNew) {
  const std::string old_text = PythonBody(30) + "if x:\npass\n";
  const std::string new_text = PythonBody(10) + "if x:\npass\n";
  const LintReport r = LintDelta("m.py", std::string_view(old_text), new_text);
  EXPECT_EQ(r.status, LintStatus::kPreexisting) << r.output;
}

TEST(LintDelta, FixingOneErrorAndAddingAnotherReportsTheNewOne) {
  const std::string old_text = "x = 1\ny = (1,\n";
  const std::string new_text = "x = 1 +\ny = (1,)\n";
  const LintReport r = LintDelta("m.py", std::string_view(old_text), new_text);
  ASSERT_EQ(r.status, LintStatus::kError);
  EXPECT_THAT(r.output, StartsWith(std::string(kNewLintErrorsHeader) + "\nSyntaxError: "));
  EXPECT_EQ(r.issues.at(0).line, 1);
}

TEST(LintDelta, SameErrorOnAnEditedLineCountsAsNew) {
  const std::string old_text = "a = 1\nb = (1,\n";
  const std::string new_text = "a = 1\nb = (1, 2,\n";
  const LintReport r = LintDelta("m.py", std::string_view(old_text), new_text);
  EXPECT_EQ(r.status, LintStatus::kError);
  EXPECT_THAT(r.output, StartsWith(std::string(kNewLintErrorsHeader)));
}

TEST(LintDelta, JsonErrorAtEndOfInputStaysPreexisting) {
  const std::string old_text = "[\n  1,\n  2,\n";
  const std::string new_text = "[\n  0,\n  1,\n  2,\n";
  const LintReport r = LintDelta("a.json", std::string_view(old_text), new_text);
  EXPECT_EQ(r.status, LintStatus::kPreexisting) << r.output;
}

TEST(LintDelta, SkippedTypesStaySkipped) {
  EXPECT_EQ(LintDelta("a.txt", std::string_view("x"), "y").status, LintStatus::kSkipped);
}

// ---- pre-write gate -----------------------------------------------------------------------------

TEST(CheckSyntaxBeforeWrite, RefusesUnparsableStructuredFiles) {
  const Status s = CheckSyntaxBeforeWrite("conf/app.json", "{\"a\": }");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "Refusing to write 'conf/app.json': candidate content fails .json syntax validation "
            "(JSONDecodeError: syntax error while parsing value - unexpected '}'; expected '[', "
            "'{', or a literal (line 1, column 7)). The file was NOT created or modified. Fix the "
            "content and retry.");
  EXPECT_FALSE(CheckSyntaxBeforeWrite("a.yaml", "a: [1\n").ok());
  EXPECT_FALSE(CheckSyntaxBeforeWrite("a.YML", "a: 1\n b: 2\n").ok());
  EXPECT_FALSE(CheckSyntaxBeforeWrite("a.toml", "a = \n").ok());
  EXPECT_FALSE(CheckSyntaxBeforeWrite("a.json", std::string("{}\0", 3)).ok());
  EXPECT_THAT(CheckSyntaxBeforeWrite("a.toml", "a = \n").message(),
              HasSubstr("fails .toml syntax validation (TOMLDecodeError: "));
}

TEST(CheckSyntaxBeforeWrite, LetsEverythingElseThrough) {
  EXPECT_TRUE(CheckSyntaxBeforeWrite("a.json", "{\"a\": [1, 2]}").ok());
  EXPECT_TRUE(CheckSyntaxBeforeWrite("a.json", "\xEF\xBB\xBF{}").ok());
  EXPECT_TRUE(CheckSyntaxBeforeWrite("a.yaml", "a: 1\n---\nb: 2\n").ok());
  EXPECT_TRUE(CheckSyntaxBeforeWrite("a.toml", "[x]\ny = 1\n").ok());
  // Python is linted after the write, not refused; duplicate YAML keys are a lint, not a parse
  // failure; other types have no gate.
  EXPECT_TRUE(CheckSyntaxBeforeWrite("a.py", "def f(:\n").ok());
  EXPECT_TRUE(CheckSyntaxBeforeWrite("a.yaml", "a: 1\na: 2\n").ok());
  EXPECT_TRUE(CheckSyntaxBeforeWrite("a.txt", "{").ok());
  EXPECT_TRUE(CheckSyntaxBeforeWrite("Makefile", "{").ok());
}

// ---- concurrency and hostile input ------------------------------------------------------------

TEST(LintConcurrency, EightThreadsLintPythonConcurrently) {
  const std::string good = PythonBody(40) + "def f(x):\n    return [i * x for i in range(3)]\n";
  const std::string bad = PythonBody(40) + "def f(x:\n    return x\n";
  std::atomic<int> failures{0};
  std::atomic<bool> go{false};
  std::vector<std::jthread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < 40; ++i) {
        const bool want_error = (i + t) % 2 == 0;
        const LintReport r = LintContent("t.py", want_error ? bad : good);
        const bool as_expected =
            want_error ? (r.status == LintStatus::kError && r.issues.size() == 1 &&
                          r.issues[0].line == 41 && r.issues[0].message == "'(' was never closed")
                       : r.status == LintStatus::kOk;
        if (!as_expected) ++failures;
        // Mix in the other parsers: they run outside the GIL.
        if (LintContent("t.json", "{\"k\": [1, 2, 3]}").status != LintStatus::kOk) ++failures;
        if (LintContent("t.yaml", "a: 1\na: 2\n").issues.size() != 1) ++failures;
      }
    });
  }
  go = true;
  threads.clear();
  EXPECT_EQ(failures.load(), 0);
}

TEST(LintHostile, DeepNestingIsAnErrorNotACrash) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a.json", std::string(100000, '[')},
      {"a.json", std::string(100000, '{')},
      {"a.json", std::string(300, '[') + std::string(300, ']')},
      {"a.yaml", std::string(100000, '[')},
      {"a.yaml", std::string(100000, '{')},
      {"a.yaml",
       [] {
         std::string s;
         for (int i = 0; i < 3000; ++i) s += std::string(static_cast<size_t>(i), ' ') + "k:\n";
         return s;
       }()},
      {"a.yaml",
       [] {
         std::string s;
         for (int i = 0; i < 3000; ++i) s += std::string(static_cast<size_t>(i), ' ') + "- \n";
         return s;
       }()},
      {"a.toml", "a = " + std::string(100000, '[')},
      {"a.toml", "a = " + std::string(100000, '{')},
      {"a.py", std::string(100000, '(')},
      {"a.py", std::string(200000, '-') + "1\n"},
      {"a.py",
       [] {
         std::string s = "x = 1";
         for (int i = 0; i < 50000; ++i) s += "+1";
         return s + "\n";
       }()},
      {"a.py",
       [] {
         std::string s;
         for (int i = 0; i < 5000; ++i) s += "lambda: ";
         return s + "1\n";
       }()},
      {"a.py",
       [] {
         std::string s;
         for (int i = 0; i < 120; ++i) s += std::string(static_cast<size_t>(i), ' ') + "if x:\n";
         return s;
       }()},
  };
  for (const auto& [path, content] : cases) {
    const LintReport r = LintContent(path, content);
    EXPECT_EQ(r.status, LintStatus::kError) << path << " " << content.substr(0, 40);
    EXPECT_FALSE(r.output.empty());
    EXPECT_LE(r.output.size(), 2000u);
  }
}

TEST(LintHostile, DeepNestingOnASmallStack) {
  // A worker with a small stack (256 KiB): hostile Python needs ~0.9 MiB, so the parse must move
  // to a helper thread instead of overflowing this one.
  struct Arg {
    int failures = 0;
  } arg;
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, size_t{256} << 10), 0);
  pthread_t thread;
  auto body = [](void* p) -> void* {
    auto* a = static_cast<Arg*>(p);
    const std::pair<const char*, std::string> cases[] = {
        {"a.py", std::string(200000, '-') + "1\n"},
        {"a.py", std::string(100000, '(')},
        {"a.py", "x = 1" + std::string(100000, '+') + "1\n"},
        {"a.py",
         [] {
           std::string s = "x = a";
           for (int i = 0; i < 50000; ++i) s += ".b";
           return s + "\n";
         }()},
        {"a.yaml", std::string(100000, '[')},
        {"a.json", std::string(100000, '[')},
        {"a.toml", "a = " + std::string(100000, '[')},
    };
    for (const auto& [path, content] : cases) {
      if (LintContent(path, content).status != LintStatus::kError) ++a->failures;
    }
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, +body, &arg), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  pthread_attr_destroy(&attr);
  EXPECT_EQ(arg.failures, 0);
}

TEST(LintHostile, TenMegabyteFiles) {
  constexpr size_t kTen = size_t{10} << 20;
  // Valid JSON validates without a DOM; an error at the very end is still found and placed.
  std::string json = "[";
  while (json.size() < kTen) json += "{\"key\": \"value\", \"n\": [1, 2, 3]},\n";
  const std::string broken_json = json + "oops]";
  json += "0]";
  EXPECT_EQ(LintContent("big.json", json).status, LintStatus::kOk);
  const LintReport bj = LintContent("big.json", broken_json);
  ASSERT_EQ(bj.status, LintStatus::kError);
  EXPECT_EQ(bj.issues[0].line, 1 + static_cast<int>(std::count(json.begin(), json.end(), '\n')));
  EXPECT_EQ(bj.issues[0].column, 1);

  // Garbage of every type is rejected quickly, as are NUL bytes and invalid UTF-8 at the end.
  std::string garbage(kTen, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 7919) % 251 + 1);
  std::string nul_at_end(kTen, 'x');
  nul_at_end.back() = '\0';
  std::string bad_utf8_at_end(kTen, ' ');
  bad_utf8_at_end.back() = '\xC3';
  for (const char* path : {"g.json", "g.yaml", "g.toml", "g.py"}) {
    EXPECT_EQ(LintContent(path, garbage).status, LintStatus::kError) << path;
    EXPECT_EQ(LintContent(path, nul_at_end).status, LintStatus::kError) << path;
    EXPECT_EQ(LintContent(path, bad_utf8_at_end).status, LintStatus::kError) << path;
  }
  // A 10 MB single line: one huge token.
  const std::string one_line = "x: " + std::string(kTen, 'a') + "\n";
  EXPECT_EQ(LintContent("l.yaml", one_line).status, LintStatus::kOk);
}

TEST(LintHostile, LargeValidFilesOfEveryType) {
  // Sizes keep the test inside its time budget on a loaded 2-core machine (yaml-cpp and
  // CPython's compiler take seconds for 10 MB); the code paths are the same as for 10 MB.
  std::string yaml;
  for (int i = 0; yaml.size() < (size_t{256} << 10); ++i) {
    yaml += "k" + std::to_string(i) + ": [a, b, c]\n";
  }
  EXPECT_EQ(LintContent("big.yaml", yaml).status, LintStatus::kOk);
  const LintReport dup = LintContent("big.yaml", yaml + "k0: dup\n");
  ASSERT_EQ(dup.status, LintStatus::kError);
  EXPECT_EQ(dup.issues[0].message, "duplicate key \"k0\" in mapping (first defined on line 1)");

  std::string toml;
  for (int i = 0; toml.size() < (size_t{1} << 20); ++i) {
    toml += "k" + std::to_string(i) + " = [1, 2, 3]\n";
  }
  EXPECT_EQ(LintContent("big.toml", toml).status, LintStatus::kOk);

  std::string python;
  for (int i = 0; python.size() < (size_t{128} << 10); ++i) {
    python += "def f" + std::to_string(i) + "(a):\n    return [a, 2, 3]\n";
  }
  EXPECT_EQ(LintContent("big.py", python).status, LintStatus::kOk);
  EXPECT_EQ(LintContent("big.py", python + "def g(:\n").status, LintStatus::kError);
}

TEST(LintHostile, OversizedContentIsSkipped) {
  const std::string huge(kMaxLintBytes + 1, ' ');
  const LintReport r = LintContent("huge.json", huge);
  EXPECT_EQ(r.status, LintStatus::kSkipped);
  EXPECT_THAT(r.message, StartsWith("File too large to lint"));
  EXPECT_TRUE(CheckSyntaxBeforeWrite("huge.json", huge).ok());
}

TEST(LintHostile, MessagesAreBoundedAndValidUtf8) {
  // nlohmann quotes the token it choked on; a 1 MB token must not come back whole.
  const LintReport r = LintContent("a.json", "\"" + std::string(1 << 20, 'x'));
  ASSERT_EQ(r.status, LintStatus::kError);
  EXPECT_LT(r.output.size(), 500u);
  // The text goes out as JSON: it must serialize strictly.
  EXPECT_NO_THROW((void)r.ToJson().dump());
  const LintReport y = LintContent("a.yaml", "\"a\x01\": 1\n\"a\x01\": 2\n");
  ASSERT_EQ(y.status, LintStatus::kError);
  EXPECT_NO_THROW((void)y.ToJson().dump());
}

}  // namespace
}  // namespace talaria
