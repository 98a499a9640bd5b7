// Test-only fixture for execute_code: a real session (workspace, local terminal) under a private
// temp dir with its own $TALARIA_HOME, the process-wide registry's tools plus fake web tools, a
// dispatcher with the command policy, and execute_code enabled on it. Scripts run in a real
// python3 under real bwrap. Not thread-safe; one per test.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/bwrap_support.h"
#include "support/file_text.h"
#include "support/temp_dir.h"
#include "talaria/core/dispatcher.h"
#include "talaria/core/tool_registration.h"
#include "talaria/tools/code_execution.h"
#include "talaria/tools/command_policy.h"
#include "talaria/tools/session.h"

namespace talaria::tools::testing {

// How many "slow:" web_search calls were in flight at once, at most (reset by the test).
inline std::atomic<int> slow_searches_in_flight{0};
inline std::atomic<int> slow_searches_peak{0};
// A "slow:N" search waits (up to 5 s) until N slow searches are in flight together: a script
// whose calls are served one at a time shows a peak of 1, never a hang.
inline void WaitForSlowSearches(int together) {
  const int now = ++slow_searches_in_flight;
  int peak = slow_searches_peak.load();
  while (now > peak && !slow_searches_peak.compare_exchange_weak(peak, now)) {
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (slow_searches_peak.load() < together && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  --slow_searches_in_flight;
}

// Fake web tools: web_search echoes its query ("slow:N" after waiting for N of them to overlap),
// web_extract echoes its urls.
inline void RegisterFakeWebTools() {
  ToolSpec search;
  search.name = "web_search";
  search.toolset = "web";
  search.schema =
      R"json({"name":"web_search","description":"Search the web.","parameters":{"type":"object",
    "properties":{"query":{"type":"string"},"limit":{"type":"integer","default":5}},"required":["query"]}})json";
  search.handler = [](const Json& args, ToolContext&) {
    const std::string query = args["query"].get<std::string>();
    if (query.rfind("slow:", 0) == 0) WaitForSlowSearches(std::atoi(query.c_str() + 5));
    Json body = {
        {"success", true},
        {"data", {{"web", Json::array({{{"title", query}, {"url", "https://example.invalid/"}}})}}},
        {"limit", args.value("limit", 0)}};
    return ToolResult::FromJson(body);
  };
  ASSERT_TRUE(Registry::Global().Register(std::move(search)).ok());
  ToolSpec extract;
  extract.name = "web_extract";
  extract.toolset = "web";
  extract.schema =
      R"json({"name":"web_extract","description":"Extract pages.","parameters":{"type":"object",
    "properties":{"urls":{"type":"array","items":{"type":"string"}},"char_limit":{"type":"integer"}},"required":["urls"]}})json";
  extract.handler = [](const Json& args, ToolContext&) {
    Json results = Json::array();
    for (const auto& u : args["urls"])
      results.push_back({{"url", u}, {"title", "t"}, {"content", "page " + u.get<std::string>()}});
    return ToolResult::FromJson(Json{{"results", results}});
  };
  ASSERT_TRUE(Registry::Global().Register(std::move(extract)).ok());
}

class ExecuteCodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    namespace fs = std::filesystem;
    root_ = base_ / "ws";
    home_ = base_ / "talaria-home";
    fs::create_directories(root_);
    fs::create_directories(home_);
    if (const char* old = std::getenv("TALARIA_HOME")) saved_home_ = old;
    ::setenv("TALARIA_HOME", home_.c_str(), 1);
    RegisterFakeWebTools();
    SessionOptions options;
    options.roots = {root_};
    options.audit = false;
    auto session = Session::Open(options);
    ASSERT_TRUE(session) << session.error().ToString();
    session_ = *session;
    ctx_ = session_->NewContext("call_1");
    ASSERT_TRUE(InstallCommandPolicy(dispatcher_, Config{}, nullptr).ok());
    Enable(CodeExecutionOptions{});
  }
  void TearDown() override {
    DisableCodeExecution(dispatcher_);
    (void)Registry::Global().Deregister("web_search");
    (void)Registry::Global().Deregister("web_extract");
    if (saved_home_) {
      ::setenv("TALARIA_HOME", saved_home_->c_str(), 1);
    } else {
      ::unsetenv("TALARIA_HOME");
    }
  }

  void Enable(CodeExecutionOptions options) {
    Status s = EnableCodeExecution(dispatcher_, std::move(options));
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // Runs `code` through the dispatcher; the result as JSON (last_ keeps the raw result).
  Json Run(const std::string& code) {
    last_ = dispatcher_.Dispatch("execute_code", Json{{"code", code}}.dump(), ctx_);
    auto parsed = Json::parse(last_.text, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << last_.text;
    return parsed;
  }

  void Write(const std::string& rel, const std::string& content) const {
    std::ofstream(root_ + "/" + rel, std::ios::binary | std::ios::trunc) << content;
  }
  static std::string ReadAbsolute(const std::string& path) {
    return test_support::ReadWholeFile(path);
  }

  test_support::TempDir base_;  // removed with the fixture
  std::string root_;
  std::string home_;
  std::optional<std::string> saved_home_;
  std::shared_ptr<Session> session_;
  ToolContext ctx_;
  Dispatcher dispatcher_;
  ToolResult last_;
};

}  // namespace talaria::tools::testing
