// The stdio transport over real pipes: line framing, blank lines, CRLF, a last line without a
// newline, over-long lines skipped while streaming, stop, and a writer whose reader went away.
#include "talaria/mcp/stdio_transport.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/wait_until.h"
#include "talaria/base/unique_fd.h"

namespace talaria::mcp {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

struct Pipe {
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    read_end.reset(fds[0]);
    write_end.reset(fds[1]);
  }
  UniqueFd read_end, write_end;
};

class StdioTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created =
        McpServer::Create(dispatcher_, toolsets_, options_, [this](std::string_view line) {
          std::lock_guard lock(mu_);
          out_.emplace_back(line);
        });
    ASSERT_TRUE(created.has_value());
    server_ = std::move(*created);
  }
  // Writes `input` from a thread (it may exceed the pipe buffer), closes, serves to EOF.
  std::vector<Json> Serve(const std::string& input, size_t max_line = kDefaultMaxMessageBytes) {
    Pipe p;
    std::thread writer([&] {
      size_t done = 0;
      while (done < input.size()) {
        const ssize_t n = ::write(p.write_end.get(), input.data() + done, input.size() - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
      p.write_end.reset();
    });
    StdioOptions options;
    options.in_fd = p.read_end.get();
    options.max_line_bytes = max_line;
    EXPECT_TRUE(ServeLines(*server_, options).ok());
    writer.join();
    std::lock_guard lock(mu_);
    std::vector<Json> parsed;
    for (const auto& l : out_) parsed.push_back(Json::parse(l));
    return parsed;
  }

  Registry registry_;
  Toolsets toolsets_{registry_, {{"empty", "nothing", {}, {}}}};
  Dispatcher dispatcher_{registry_};
  McpServerOptions options_ = [] {
    McpServerOptions o;
    o.toolsets = {"empty"};
    return o;
  }();
  std::mutex mu_;
  std::vector<std::string> out_;  // Guarded by mu_.
  std::unique_ptr<McpServer> server_;
};

TEST_F(StdioTransportTest, ServesEachLineAndTheLastOneWithoutANewline) {
  const auto out = Serve(
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
      "\n   \n"
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\r\n"
      "garbage\n"
      "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0]["id"], 1);
  EXPECT_EQ(out[1]["id"], 2);
  EXPECT_EQ(out[2]["error"]["code"], kParseError);
  EXPECT_TRUE(out[2]["id"].is_null());
  EXPECT_EQ(out[3]["id"], 3);
}

TEST_F(StdioTransportTest, SkipsAnOverlongLineWithoutBufferingItAndServesTheNext) {
  const std::string huge =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"pad\":\"" +
      std::string(300'000, 'x') + "\"}}\n";
  const auto out =
      Serve(huge + "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n" + huge, 1000);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0]["error"]["code"], kInvalidRequest);
  EXPECT_THAT(out[0]["error"]["message"].get<std::string>(),
              HasSubstr("exceeds the limit of 1000"));
  EXPECT_EQ(out[1]["id"], 2);
  EXPECT_EQ(out[2]["error"]["code"], kInvalidRequest);
}

TEST_F(StdioTransportTest, StopEndsTheLoopWhileInputStaysOpen) {
  Pipe p;
  std::stop_source stop;
  StdioOptions options;
  options.in_fd = p.read_end.get();
  options.stop = stop.get_token();
  // Stops once this thread sleeps inside ServeLines, waiting for input that never comes.
  const pid_t serving = ::gettid();
  std::thread stopper([&] {
    test_support::WaitUntil([&] { return test_support::ThreadAsleep(serving); }, 10s);
    stop.request_stop();
  });
  EXPECT_TRUE(ServeLines(*server_, options).ok());
  stopper.join();
}

TEST(FdLineWriter, WritesWholeLinesAndStopsOnceTheReaderIsGone) {
  ::signal(SIGPIPE, SIG_IGN);
  Pipe p;
  std::stop_source broken;
  FdLineWriter writer(p.write_end.get(), broken);
  EXPECT_TRUE(writer.Write("{\"a\":1}"));
  char buf[32] = {};
  ASSERT_EQ(::read(p.read_end.get(), buf, sizeof buf), 8);
  EXPECT_EQ(std::string(buf, 8), "{\"a\":1}\n");
  p.read_end.reset();
  EXPECT_FALSE(writer.Write("x"));
  EXPECT_TRUE(writer.broken());
  EXPECT_TRUE(broken.stop_requested());
}

// A line goes out straight from the caller's buffer in one writev; on a non-blocking pipe that
// takes only part of it (or nothing), the rest and the newline still follow, whole and in order.
TEST(FdLineWriter, ALineLargerThanANonBlockingPipeArrivesWhole) {
  Pipe p;
  ASSERT_EQ(::fcntl(p.write_end.get(), F_SETFL, O_NONBLOCK), 0);
  FdLineWriter writer(p.write_end.get());
  std::string received;
  std::thread reader([&] {
    char buf[1024];
    ssize_t n;
    while ((n = ::read(p.read_end.get(), buf, sizeof buf)) > 0) {
      received.append(buf, static_cast<size_t>(n));
      std::this_thread::sleep_for(std::chrono::microseconds(50));  // a slow client
    }
  });
  const std::string big(300'000, 'b');
  EXPECT_TRUE(writer.Write(big));
  EXPECT_TRUE(writer.Write("after"));
  p.write_end.reset();
  reader.join();
  EXPECT_EQ(received, big + "\nafter\n");
}

TEST(FdLineWriter, ConcurrentWritersNeverInterleaveOrLoseALine) {
  Pipe p;
  FdLineWriter writer(p.write_end.get());
  std::string received;
  std::thread reader([&] {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(p.read_end.get(), buf, sizeof buf)) > 0)
      received.append(buf, static_cast<size_t>(n));
  });
  constexpr int kThreads = 8, kLines = 400;
  // Lines of different lengths, every 50th longer than a pipe's buffer.
  auto size_of = [](int i) {
    return static_cast<size_t>(i % 50 == 0 ? 70000 + i : (i * 37) % 300);
  };
  {
    std::vector<std::jthread> writers;
    for (int t = 0; t < kThreads; ++t) {
      writers.emplace_back([&writer, &size_of, t] {
        for (int i = 0; i < kLines; ++i) {
          const std::string body(size_of(i), 'a' + static_cast<char>(t));
          EXPECT_TRUE(writer.Write(std::to_string(t) + ":" + std::to_string(i) + ":" + body));
        }
      });
    }
  }
  p.write_end.reset();
  reader.join();
  std::vector<int> next(kThreads, 0);
  size_t start = 0, lines = 0;
  for (size_t nl; (nl = received.find('\n', start)) != std::string::npos; start = nl + 1, ++lines) {
    const std::string line = received.substr(start, nl - start);
    const size_t c1 = line.find(':'), c2 = line.find(':', c1 + 1);
    ASSERT_NE(c2, std::string::npos) << line.substr(0, 80);
    const int t = std::stoi(line.substr(0, c1)), i = std::stoi(line.substr(c1 + 1, c2 - c1 - 1));
    ASSERT_EQ(i, next[static_cast<size_t>(t)]++) << "a writer's lines keep their order";
    const std::string body = line.substr(c2 + 1);
    ASSERT_EQ(body, std::string(body.size(), 'a' + static_cast<char>(t))) << "interleaved";
    ASSERT_EQ(body.size(), size_of(i));
  }
  EXPECT_EQ(start, received.size());
  EXPECT_EQ(lines, static_cast<size_t>(kThreads * kLines));
}

}  // namespace
}  // namespace talaria::mcp
