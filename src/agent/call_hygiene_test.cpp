#include "agent/call_hygiene.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>
#include <vector>

#include "talaria/base/json.h"

namespace talaria::agent {
namespace {

using Disposition = PreparedCall::Disposition;

const std::vector<std::string> kOffered = {"read_file", "write_file", "terminal"};

std::string Lookup(std::string_view name) {
  auto it = std::find(kOffered.begin(), kOffered.end(), name);
  return it == kOffered.end() ? std::string() : *it;
}

ToolCall Call(std::string id, std::string name, std::string args, bool truncated = false) {
  return ToolCall{std::move(id), std::move(name), std::move(args), truncated};
}

std::string ErrorOf(const std::string& text) {
  auto body = ParseJson(text);
  return body ? JsonStringField(*body, "error") : std::string();
}

TEST(CallHygiene, RunsValidCallsWithCompactArguments) {
  std::vector<ToolCall> calls = {Call("c1", "read_file", R"({"path": "a"})")};
  auto prepared = PrepareCalls(calls, kOffered, Lookup);
  ASSERT_EQ(prepared.size(), 1u);
  EXPECT_EQ(prepared[0].disposition, Disposition::kRun);
  EXPECT_EQ(prepared[0].id, "c1");
  EXPECT_EQ(prepared[0].arguments, R"({"path":"a"})");
  EXPECT_FALSE(prepared[0].name_repaired);
  EXPECT_FALSE(prepared[0].arguments_repaired);
}

TEST(CallHygiene, RepairsNamesAndArguments) {
  std::vector<ToolCall> calls = {Call("c1", "ReadFile", "{'path': 'a',}")};
  auto prepared = PrepareCalls(calls, kOffered, Lookup);
  ASSERT_EQ(prepared[0].disposition, Disposition::kRun);
  EXPECT_EQ(prepared[0].name, "read_file");
  EXPECT_EQ(prepared[0].arguments, R"({"path":"a"})");
  EXPECT_TRUE(prepared[0].name_repaired);
  EXPECT_TRUE(prepared[0].arguments_repaired);
}

TEST(CallHygiene, RejectsUnknownToolsListingTheRealOnes) {
  std::vector<ToolCall> calls = {Call("c1", "browser_open", "{}"),
                                 Call("c2", "terminal", R"({"command": "ls"})")};
  auto prepared = PrepareCalls(calls, kOffered, Lookup);
  EXPECT_EQ(prepared[0].disposition, Disposition::kRejected);
  EXPECT_NE(ErrorOf(prepared[0].rejection).find("Available tools: read_file, write_file, terminal"),
            std::string::npos)
      << prepared[0].rejection;
  EXPECT_EQ(prepared[1].disposition, Disposition::kRun) << "valid siblings still run";
}

TEST(CallHygiene, NeverRunsArgumentsItCannotRepair) {
  std::vector<ToolCall> calls = {
      Call("c1", "write_file", R"({"path": "a.py", "content": "half a fi)")};
  auto prepared = PrepareCalls(calls, kOffered, Lookup);
  EXPECT_EQ(prepared[0].disposition, Disposition::kRejected);
  EXPECT_TRUE(prepared[0].arguments.empty());
  EXPECT_NE(ErrorOf(prepared[0].rejection).find("Invalid arguments for write_file"),
            std::string::npos);
}

TEST(CallHygiene, NeverRunsTruncatedCalls) {
  std::vector<ToolCall> calls = {Call("c1", "write_file", R"({"path": "a", "content": "x"})",
                                      /*truncated=*/true)};
  auto prepared = PrepareCalls(calls, kOffered, Lookup);
  EXPECT_EQ(prepared[0].disposition, Disposition::kRejected);
  EXPECT_NE(ErrorOf(prepared[0].rejection).find("cut off"), std::string::npos);
}

TEST(CallHygiene, RunsExactDuplicatesOnce) {
  std::vector<ToolCall> calls = {Call("c1", "read_file", R"({"path": "a", "limit": 5})"),
                                 Call("c2", "read_file", R"({"limit": 5, "path": "a"})"),
                                 Call("c3", "read_file", R"({"path": "b"})"),
                                 Call("c4", "ReadFile", R"({"path": "a", "limit": 5})")};
  auto prepared = PrepareCalls(calls, kOffered, Lookup);
  EXPECT_EQ(prepared[0].disposition, Disposition::kRun);
  EXPECT_EQ(prepared[1].disposition, Disposition::kDuplicate);
  EXPECT_EQ(prepared[1].duplicate_of, 0u);
  EXPECT_EQ(prepared[2].disposition, Disposition::kRun);
  EXPECT_EQ(prepared[3].disposition, Disposition::kDuplicate);
  EXPECT_EQ(prepared[3].id, "c4") << "every call keeps its own id";
}

}  // namespace
}  // namespace talaria::agent
