#include "agent/loop_guard.h"

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "talaria/base/json.h"

namespace talaria::agent {
namespace {

TEST(LoopGuard, WarnsThenBlocksTheSameFailure) {
  LoopGuard guard;
  const std::string error = R"({"error": "No such file"})";
  EXPECT_EQ(guard.CheckBefore("read_file", "{\"path\":\"x\"}", true), "");
  EXPECT_EQ(guard.Record("read_file", "{\"path\":\"x\"}", true, error, true, false), "");
  for (int n = 2; n <= 4; ++n) {
    EXPECT_EQ(guard.CheckBefore("read_file", "{\"path\":\"x\"}", true), "") << n;
    std::string warning = guard.Record("read_file", "{\"path\":\"x\"}", true, error, true, false);
    EXPECT_NE(warning.find("failed the same way " + std::to_string(n) + " times"),
              std::string::npos)
        << warning;
  }
  std::string block = guard.CheckBefore("read_file", "{\"path\":\"x\"}", true);
  ASSERT_FALSE(block.empty());
  auto body = ParseJson(block);
  ASSERT_TRUE(body.has_value()) << block;
  EXPECT_NE(JsonStringField(*body, "error").find("Blocked by the loop guard"), std::string::npos);
  EXPECT_FALSE(guard.halted());
  // Other arguments are another call.
  EXPECT_EQ(guard.CheckBefore("read_file", "{\"path\":\"y\"}", true), "");
}

TEST(LoopGuard, HaltsWhenBlockedCallsKeepComing) {
  LoopGuard guard;
  const std::string error = R"({"error": "boom"})";
  int attempts = 0;
  while (!guard.halted() && attempts < 20) {
    ++attempts;
    std::string block = guard.CheckBefore("terminal", "{}", false);
    guard.Record("terminal", "{}", false, block.empty() ? error : block, true, !block.empty());
  }
  EXPECT_TRUE(guard.halted());
  EXPECT_EQ(attempts, 8);
  EXPECT_NE(guard.halt_reason().find("terminal"), std::string::npos);
  guard.Reset();
  EXPECT_FALSE(guard.halted());
  EXPECT_EQ(guard.CheckBefore("terminal", "{}", false), "");
}

TEST(LoopGuard, HaltsATurnWhoseToolKeepsFailing) {
  LoopGuard guard;
  std::string last;
  for (int n = 1; n <= 8 && !guard.halted(); ++n) {
    last = guard.Record("terminal", "{\"command\":\"try" + std::to_string(n) + "\"}", false,
                        "{\"error\":\"" + std::to_string(n) + "\"}", true, false);
    if (n == 3) {
      EXPECT_NE(last.find("failed 3 times in a row"), std::string::npos) << last;
    }
    if (n < 8) {
      EXPECT_FALSE(guard.halted()) << n;
    }
  }
  EXPECT_TRUE(guard.halted());
}

TEST(LoopGuard, ASuccessResetsTheToolsFailureRun) {
  LoopGuard guard;
  for (int n = 1; n <= 7; ++n) {
    guard.Record("terminal", "{\"n\":" + std::to_string(n) + "}", false, "e" + std::to_string(n),
                 true, false);
    guard.Record("terminal", "{\"ok\":" + std::to_string(n) + "}", false, "fine", false, false);
  }
  EXPECT_FALSE(guard.halted());
}

TEST(LoopGuard, IdempotentCallsWithTheSameResultAreNoProgress) {
  LoopGuard guard;
  EXPECT_EQ(guard.Record("search_files", "{\"q\":1}", true, "3 hits", false, false), "");
  EXPECT_NE(guard.Record("search_files", "{\"q\":1}", true, "3 hits", false, false)
                .find("same result 2 times"),
            std::string::npos);
  guard.Record("search_files", "{\"q\":1}", true, "3 hits", false, false);
  guard.Record("search_files", "{\"q\":1}", true, "3 hits", false, false);
  EXPECT_FALSE(guard.CheckBefore("search_files", "{\"q\":1}", true).empty());
  // A mutating call repeating its result is not blocked (a test run may legitimately repeat).
  LoopGuard other;
  for (int n = 0; n < 4; ++n) other.Record("terminal", "{}", false, "ok", false, false);
  EXPECT_EQ(other.CheckBefore("terminal", "{}", false), "");
}

TEST(LoopGuard, ADifferentResultStartsTheCountAgain) {
  LoopGuard guard;
  for (int n = 0; n < 4; ++n) guard.Record("read_file", "{}", true, "v1", false, false);
  guard.Record("read_file", "{}", true, "v2", false, false);
  EXPECT_EQ(guard.CheckBefore("read_file", "{}", true), "");
}

}  // namespace
}  // namespace talaria::agent
