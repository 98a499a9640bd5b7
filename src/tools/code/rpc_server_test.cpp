// The RPC server against a client in this process (the tests' pid plays the interpreter).
#include "tools/code/rpc_server.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "tools/code/rpc_frame.h"

namespace talaria::tools::code {
namespace {

using Clock = std::chrono::steady_clock;

class RpcServerTest : public ::testing::Test {
 protected:
  void Start(pid_t expected) {
    int pair[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    client_.reset(pair[1]);
    auto server = RpcServer::Start(
        UniqueFd(pair[0]),
        [](const std::string& tool, Json args) {
          if (tool == "slow") std::this_thread::sleep_for(std::chrono::milliseconds(300));
          return "echo:" + tool + ":" + args.dump();
        },
        Clock::now() + std::chrono::seconds(10));
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(*server);
    server_->ExpectChild(expected);
  }
  void Send(const std::string& payload) {
    const std::string frame = EncodeFrame(payload);
    ASSERT_EQ(::write(client_.get(), frame.data(), frame.size()),
              static_cast<ssize_t>(frame.size()));
  }
  // The next response, or nullopt when none arrives within `wait`.
  std::optional<Json> Receive(std::chrono::milliseconds wait = std::chrono::milliseconds(2000)) {
    const auto end = Clock::now() + wait;
    for (;;) {
      auto frame = reader_.Next();
      if (frame && *frame) return Json::parse(**frame);
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
      if (left <= 0) return std::nullopt;
      pollfd p{client_.get(), POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) return std::nullopt;
      char buf[4096];
      const ssize_t n = ::read(client_.get(), buf, sizeof buf);
      if (n <= 0) return std::nullopt;
      reader_.Feed(std::string_view(buf, static_cast<size_t>(n)));
    }
  }

  UniqueFd client_;
  std::unique_ptr<RpcServer> server_;
  FrameReader reader_;
};

TEST_F(RpcServerTest, AnswersOverlappingCallsByIdInCompletionOrder) {
  Start(::getpid());
  Send(R"({"hello": 1})");
  Send(R"({"id": 1, "tool": "slow", "args": {"a": 1}})");
  Send(R"({"id": "two", "tool": "fast"})");
  auto first = Receive();
  auto second = Receive();
  ASSERT_TRUE(first && second);
  EXPECT_EQ((*first)["id"], "two");
  EXPECT_EQ((*first)["result"], "echo:fast:{}");
  EXPECT_EQ((*second)["id"], 1);
  EXPECT_EQ((*second)["result"], R"(echo:slow:{"a":1})");
  server_->Stop();
  EXPECT_TRUE(server_->stats().authenticated);
  EXPECT_EQ(server_->stats().requests, 2);
  EXPECT_EQ(server_->stats().rejected_frames, 0);
}

TEST_F(RpcServerTest, ServesNothingBeforeAHello) {
  Start(::getpid());
  Send(R"({"id": 1, "tool": "fast"})");
  EXPECT_FALSE(Receive(std::chrono::milliseconds(300)));
  server_->Stop();
  EXPECT_FALSE(server_->stats().authenticated);
  EXPECT_EQ(server_->stats().requests, 0);
  EXPECT_EQ(server_->stats().rejected_frames, 1);
}

TEST_F(RpcServerTest, RefusesAHelloFromOutsideTheChildsTree) {
  Start(1);  // init: never an accepted ancestor, so this process is not "the child"
  Send(R"({"hello": 1})");
  Send(R"({"id": 1, "tool": "fast"})");
  EXPECT_FALSE(Receive(std::chrono::milliseconds(300)));
  server_->Stop();
  EXPECT_FALSE(server_->stats().authenticated);
  EXPECT_GE(server_->stats().rejected_frames, 1);
  EXPECT_NE(server_->stats().rejection.find("did not come from the script's interpreter"),
            std::string::npos);
}

TEST_F(RpcServerTest, MalformedRequestsAreRejectedOrAnsweredWithAnError) {
  Start(::getpid());
  Send(R"({"hello": 1})");
  Send("not json");
  Send(R"({"tool": "fast"})");  // no id: nothing to answer to
  Send(R"({"id": 5})");         // no tool: answered with an error
  auto r = Receive();
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["id"], 5);
  EXPECT_EQ((*r)["error"], "request has no tool name");
  server_->Stop();
  EXPECT_EQ(server_->stats().rejected_frames, 2);
}

TEST_F(RpcServerTest, AnOversizedFrameEndsTheStream) {
  Start(::getpid());
  Send(R"({"hello": 1})");
  ASSERT_EQ(::write(client_.get(), "\x7f\xff\xff\xff", 4), 4);
  Send(R"({"id": 1, "tool": "fast"})");
  EXPECT_FALSE(Receive(std::chrono::milliseconds(300)));
  server_->Stop();
  EXPECT_NE(server_->stats().rejection.find("exceeds the limit"), std::string::npos);
}

}  // namespace
}  // namespace talaria::tools::code
