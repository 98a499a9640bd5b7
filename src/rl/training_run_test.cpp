// The supervisor's small parts: URL host and port, and the readiness probe on a real socket.
#include "rl/training_run.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace talaria::rl {
namespace {

TEST(TrainingRun, HostPortOfReadsHttpUrls) {
  EXPECT_EQ(HostPortOf("http://localhost:8000"), std::make_pair(std::string("localhost"), 8000));
  EXPECT_EQ(HostPortOf("http://localhost:8001/v1"), std::make_pair(std::string("localhost"), 8001));
  EXPECT_EQ(HostPortOf("https://example.com/x"), std::make_pair(std::string("example.com"), 443));
  EXPECT_EQ(HostPortOf("http://[::1]:9000/"), std::make_pair(std::string("::1"), 9000));
  EXPECT_EQ(HostPortOf("http://h"), std::make_pair(std::string("h"), 80));
  for (const char* bad : {"", "localhost:8000", "http://:80", "http://h:99999", "http://h:x",
                          "http://h:", "http://[::1"}) {
    EXPECT_EQ(HostPortOf(bad).second, 0) << bad;
  }
}

TEST(TrainingRun, PortAcceptsOnlyWhileSomethingListens) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin_port);
  EXPECT_FALSE(PortAccepts("127.0.0.1", port, std::chrono::milliseconds(200)));  // bound only
  ASSERT_EQ(::listen(fd, 4), 0);
  EXPECT_TRUE(PortAccepts("127.0.0.1", port, std::chrono::milliseconds(200)));
  ::close(fd);
  EXPECT_FALSE(PortAccepts("127.0.0.1", port, std::chrono::milliseconds(200)));
}

}  // namespace
}  // namespace talaria::rl
