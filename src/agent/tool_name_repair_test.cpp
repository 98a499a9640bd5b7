#include "agent/tool_name_repair.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>
#include <vector>

namespace talaria::agent {
namespace {

const std::vector<std::string> kOffered = {"read_file", "write_file", "patch", "search_files",
                                           "terminal",  "process",    "todo"};

std::string Lookup(std::string_view name) {
  if (name == "todo_list") return "todo";  // an alias
  auto it = std::find(kOffered.begin(), kOffered.end(), name);
  return it == kOffered.end() ? std::string() : *it;
}

std::optional<std::string> Repair(std::string_view name) {
  return RepairToolName(name, kOffered, Lookup);
}

TEST(ToolNameRepair, KeepsExactNamesAndAliases) {
  EXPECT_EQ(Repair("read_file"), "read_file");
  EXPECT_EQ(Repair("todo_list"), "todo");
}

TEST(ToolNameRepair, FixesCaseSeparatorsAndCamelCase) {
  EXPECT_EQ(Repair("READ_FILE"), "read_file");
  EXPECT_EQ(Repair("read-file"), "read_file");
  EXPECT_EQ(Repair("read file"), "read_file");
  EXPECT_EQ(Repair("ReadFile"), "read_file");
  EXPECT_EQ(Repair("searchFiles"), "search_files");
  EXPECT_EQ(Repair("Terminal"), "terminal");
}

TEST(ToolNameRepair, StripsToolSuffixes) {
  EXPECT_EQ(Repair("terminal_tool"), "terminal");
  EXPECT_EQ(Repair("terminal-tool"), "terminal");
  EXPECT_EQ(Repair("patchtool"), "patch");
  EXPECT_EQ(Repair("PatchTool"), "patch");
}

TEST(ToolNameRepair, CutsAtALeakedQuoteOrTag) {
  EXPECT_EQ(Repair("patch\""), "patch");
  EXPECT_EQ(Repair("terminal</tool_call>"), "terminal");
  EXPECT_EQ(Repair("read_file'"), "read_file");
  EXPECT_EQ(Repair(" process "), "process");
}

TEST(ToolNameRepair, TakesAUniqueFuzzyMatch) {
  EXPECT_EQ(Repair("serch_files"), "search_files");
  EXPECT_EQ(Repair("terminl"), "terminal");
}

TEST(ToolNameRepair, RefusesAnAmbiguousFuzzyMatch) {
  // As close to read_file as to write_file: guessing could run the wrong tool.
  EXPECT_EQ(Repair("re_file"), std::nullopt);
  EXPECT_EQ(Repair("wr_file"), std::nullopt);
  EXPECT_EQ(Repair("e_file"), std::nullopt);
}

TEST(ToolNameRepair, RefusesWhatNamesNoTool) {
  EXPECT_EQ(Repair("browser_navigate"), std::nullopt);
  EXPECT_EQ(Repair(""), std::nullopt);
  EXPECT_EQ(Repair("\"\"\""), std::nullopt);
  EXPECT_EQ(Repair(std::string(100'000, 'a')), std::nullopt);
}

TEST(ToolNameRepair, UnknownToolMessageListsTheRealTools) {
  std::string message = UnknownToolMessage("browse", kOffered);
  EXPECT_NE(message.find("Tool 'browse' does not exist"), std::string::npos);
  EXPECT_NE(message.find("read_file, write_file, patch"), std::string::npos);
}

TEST(ToolNameRepair, SimilarityIsSymmetricAndBounded) {
  EXPECT_DOUBLE_EQ(NameSimilarity("abc", "abc"), 1.0);
  EXPECT_DOUBLE_EQ(NameSimilarity("abc", "xyz"), 0.0);
  EXPECT_DOUBLE_EQ(NameSimilarity("read_fil", "read_file"),
                   NameSimilarity("read_file", "read_fil"));
}

}  // namespace
}  // namespace talaria::agent
