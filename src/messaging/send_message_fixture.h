// The fixture send_message's tests share: every platform variable unset, $TALARIA_HOME a fresh
// directory with its config.yaml, and Call() running the registered tool as the agent would.
// Test-only; include it from *_test.cpp files.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "support/registered_tool.h"
#include "support/temp_dir.h"
#include "talaria/base/json.h"
#include "talaria/core/registry.h"
#include "talaria/core/tool_context.h"

namespace talaria::messaging {

inline const std::vector<const char*> kVars = {
    "SLACK_BOT_TOKEN",     "TELEGRAM_BOT_TOKEN",    "DISCORD_BOT_TOKEN",
    "MATRIX_ACCESS_TOKEN", "MATRIX_HOMESERVER",     "SIGNAL_HTTP_URL",
    "SIGNAL_ACCOUNT",      "EMAIL_PASSWORD",        "EMAIL_ADDRESS",
    "EMAIL_SMTP_HOST",     "EMAIL_SMTP_PORT",       "TWILIO_ACCOUNT_SID",
    "TWILIO_AUTH_TOKEN",   "TWILIO_PHONE_NUMBER",   "NTFY_TOKEN",
    "NTFY_SERVER",         "MESSAGING_WEBHOOK_URL", "MESSAGING_WEBHOOK_TOKEN",
    "SLACK_HOME_CHANNEL",  "TELEGRAM_HOME_CHANNEL", "DISCORD_HOME_CHANNEL",
    "MATRIX_HOME_CHANNEL", "MATRIX_HOME_ROOM",      "SIGNAL_HOME_CHANNEL",
    "EMAIL_HOME_CHANNEL",  "EMAIL_HOME_ADDRESS",    "SMS_HOME_CHANNEL",
    "NTFY_HOME_CHANNEL",   "WEBHOOK_HOME_CHANNEL"};

inline Json Body(const httplib::Request& req) { return Json::parse(req.body, nullptr, false); }

inline void Reply(httplib::Response& res, const Json& body, int status = 200) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

class SendMessageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVars) ::unsetenv(v);
    ::setenv("TALARIA_HOME", home_.path().c_str(), 1);
    WriteConfig("");
  }
  void TearDown() override {
    for (const char* v : kVars) ::unsetenv(v);
  }
  void WriteConfig(const std::string& yaml) {
    std::ofstream(home_.path() + "/config.yaml") << yaml;
  }
  Json Call(const Json& args, bool* ok = nullptr) {
    ToolResult r;
    Json j = talaria::test_support::CallRegisteredTool("send_message", args, ctx_, &r);
    if (ok != nullptr) *ok = r.ok();
    return j;
  }
  static std::string Error(const Json& r) { return r.value("error", std::string()); }

  talaria::test_support::TempDir home_;
  ToolContext ctx_;
};

}  // namespace talaria::messaging
