// A fake OpenAI-compatible server playing a script, started for one integration test: the
// model `talaria run` and `talaria chat` talk to. A failure to parse or start fails the test.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "support/fake_llm_server.h"

namespace talaria::testing_cli {

inline std::unique_ptr<test_support::FakeLlmServer> StartScriptedLlm(
    const test_support::FakeJson& script) {
  std::string error;
  auto server = test_support::FakeLlmServer::FromScript(script.dump(), &error);
  EXPECT_TRUE(server) << error;
  if (!server) return nullptr;
  EXPECT_TRUE(server->Start(&error)) << error;
  return server;
}

}  // namespace talaria::testing_cli
