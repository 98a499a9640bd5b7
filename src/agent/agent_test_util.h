// What the agent loop's tests share: a temporary $TALARIA_HOME and project, the real session
// store (SQLite in the temp dir), the scripted OpenAI-compatible server on loopback, and an
// AgentEvents that records what a front end would have shown.
#pragma once

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/fake_llm_server.h"
#include "support/temp_dir.h"
#include "talaria/agent/agent.h"
#include "talaria/store/session_store.h"

namespace talaria::agent::testing {

class RecordingEvents : public AgentEvents {
 public:
  struct Call {
    size_t index;
    std::string name;
    std::string arguments;
    std::optional<ToolCallStatus> status;
  };
  void OnText(std::string_view delta) override {
    std::lock_guard lock(mu_);
    text_ += delta;
  }
  void OnToolCallStarted(size_t index, std::string_view name, std::string_view arguments) override {
    std::lock_guard lock(mu_);
    calls_.push_back(Call{index, std::string(name), std::string(arguments), std::nullopt});
    ++started_;
  }
  void OnToolCallFinished(size_t index, std::string_view name, ToolCallStatus status,
                          std::chrono::milliseconds) override {
    std::lock_guard lock(mu_);
    for (auto it = calls_.rbegin(); it != calls_.rend(); ++it) {
      if (it->index == index && it->name == name && !it->status) {
        it->status = status;
        break;
      }
    }
  }
  void OnNotice(std::string_view text) override {
    std::lock_guard lock(mu_);
    notices_.emplace_back(text);
  }
  std::optional<std::string> Clarify(std::string_view question,
                                     const std::vector<std::string>& choices) override {
    std::lock_guard lock(mu_);
    questions_.emplace_back(question);
    last_choices_ = choices;
    return clarify_answer_;
  }

  std::string text() const {
    std::lock_guard lock(mu_);
    return text_;
  }
  std::vector<Call> calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }
  size_t started() const {
    std::lock_guard lock(mu_);
    return started_;
  }
  std::vector<std::string> notices() const {
    std::lock_guard lock(mu_);
    return notices_;
  }
  std::vector<std::string> questions() const {
    std::lock_guard lock(mu_);
    return questions_;
  }
  std::vector<std::string> last_choices() const {
    std::lock_guard lock(mu_);
    return last_choices_;
  }
  void set_clarify_answer(std::optional<std::string> answer) {
    std::lock_guard lock(mu_);
    clarify_answer_ = std::move(answer);
  }

 private:
  mutable std::mutex mu_;
  std::string text_;
  std::vector<Call> calls_;
  size_t started_ = 0;
  std::vector<std::string> notices_;
  std::vector<std::string> questions_;
  std::vector<std::string> last_choices_;
  std::optional<std::string> clarify_answer_;
};

class AgentFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("TALARIA_HOME");
    if (old != nullptr) old_home_ = old;
    ::setenv("TALARIA_HOME", home_.path().c_str(), 1);
    std::ofstream(home_ / "config.yaml") << "terminal:\n  backend: local\n";
    auto store = store::SessionStore::Open(home_ / "sessions.db");
    ASSERT_TRUE(store.has_value()) << store.error().message();
    store_ = std::move(*store);
  }
  void TearDown() override {
    agent_.reset();
    if (old_home_) {
      ::setenv("TALARIA_HOME", old_home_->c_str(), 1);
    } else {
      ::unsetenv("TALARIA_HOME");
    }
  }

  // Starts the scripted server.
  void Serve(std::string_view script) {
    std::string error;
    server_ = test_support::FakeLlmServer::FromScript(script, &error);
    ASSERT_TRUE(server_ != nullptr) << error;
    ASSERT_TRUE(server_->Start(&error)) << error;
  }

  ModelSettings Model() const {
    ModelSettings m;
    m.base_url = server_->base_url();
    m.model = "fake-model";
    m.max_retries = 0;
    m.backoff_base = std::chrono::milliseconds(1);
    m.connect_timeout = std::chrono::milliseconds(5'000);
    m.idle_timeout = std::chrono::milliseconds(10'000);
    m.pricing.input_per_mtok = 1.0;
    m.pricing.output_per_mtok = 2.0;
    return m;
  }

  AgentOptions Options() const {
    AgentOptions o;
    o.roots = {project_.path()};
    o.toolsets = {"file", "terminal", "todo", "clarify"};
    o.config_path = home_ / "config.yaml";
    o.enable_code_execution = false;
    return o;
  }

  void Open(AgentOptions options) { Open(std::move(options), Model()); }
  void Open(AgentOptions options, ModelSettings model) {
    auto agent = Agent::Open(std::move(options), std::move(model), store_);
    ASSERT_TRUE(agent.has_value()) << agent.error().message();
    agent_ = std::move(*agent);
  }
  void Open() { Open(Options()); }

  TurnResult Turn(std::string_view message, std::stop_token stop = {}) {
    return agent_->RunTurn(message, &events_, stop);
  }

  // The request bodies the server received, parsed.
  std::vector<nlohmann::ordered_json> Requests() const {
    std::vector<nlohmann::ordered_json> out;
    for (const auto& r : server_->requests()) out.push_back(r.Json());
    return out;
  }

  std::vector<store::StoredMessage> History() const {
    auto h = store_->LoadHistory(agent_->session_id());
    EXPECT_TRUE(h.has_value());
    return h ? *h : std::vector<store::StoredMessage>{};
  }

  void WriteFile(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories(std::filesystem::path(project_ / rel).parent_path());
    std::ofstream(project_ / rel) << text;
  }
  std::string ReadFile(const std::string& rel) const {
    std::ifstream in(project_ / rel);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  bool Exists(const std::string& rel) const { return std::filesystem::exists(project_ / rel); }

  test_support::TempDir home_;
  test_support::TempDir project_;
  std::optional<std::string> old_home_;
  std::shared_ptr<store::SessionStore> store_;
  std::unique_ptr<test_support::FakeLlmServer> server_;
  std::unique_ptr<Agent> agent_;
  RecordingEvents events_;
};

}  // namespace talaria::agent::testing
