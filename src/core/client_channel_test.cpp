#include "talaria/core/client_channel.h"

#include <chrono>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace talaria {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// A client that declared `capabilities` and answers nothing (only the checks are under test).
class DeclaringClient final : public ClientChannel {
 public:
  explicit DeclaringClient(std::set<std::string, std::less<>> capabilities)
      : capabilities_(std::move(capabilities)) {}
  bool Supports(std::string_view capability) const override {
    return capabilities_.contains(capability);
  }
  void Log(std::string_view, std::string_view, const Json&) override {}
  void Progress(double, std::optional<double>, std::string_view) override {}
  Result<Json> Request(std::string_view, const Json&, std::stop_token, Deadline) override {
    return Err(UnavailableError("not under test"));
  }

 private:
  std::set<std::string, std::less<>> capabilities_;
};

TEST(WhyClientCannotAnswer, NoClientIsNamedWithTheMethod) {
  EXPECT_EQ(WhyClientCannotAnswer(nullptr, "sampling/createMessage"),
            "sampling/createMessage needs an MCP client, and this call has none");
}

TEST(WhyClientCannotAnswer, EachMcpRequestNeedsItsOwnCapability) {
  const DeclaringClient only_sampling({"sampling"});
  EXPECT_EQ(WhyClientCannotAnswer(&only_sampling, "sampling/createMessage"), std::nullopt);
  EXPECT_EQ(WhyClientCannotAnswer(&only_sampling, "elicitation/create"),
            "the MCP client did not declare the elicitation capability, so it cannot answer "
            "elicitation/create");
  EXPECT_EQ(WhyClientCannotAnswer(&only_sampling, "roots/list"),
            "the MCP client did not declare the roots capability, so it cannot answer roots/list");
  // A method MCP does not define needs no capability: the client answers or refuses it.
  EXPECT_EQ(WhyClientCannotAnswer(&only_sampling, "x-vendor/thing"), std::nullopt);
}

TEST(EarlierDeadline, TheTimeoutWhenItEndsFirst) {
  const auto before = steady_clock::now();
  const auto got = EarlierDeadline(steady_clock::time_point::max(), milliseconds(500));
  EXPECT_GE(got, before + milliseconds(500));
  EXPECT_LE(got, steady_clock::now() + milliseconds(500));
}

TEST(EarlierDeadline, TheCallsDeadlineWhenItEndsFirst) {
  const auto soon = steady_clock::now() + milliseconds(100);
  EXPECT_EQ(EarlierDeadline(soon, std::chrono::minutes(5)), soon);
  const auto past = steady_clock::now() - milliseconds(1);
  EXPECT_EQ(EarlierDeadline(past, milliseconds(500)), past);
}

}  // namespace
}  // namespace talaria
