// The browser's egress proxy on its own: a SOCKS5 client written here asks it for hosts a stub
// resolver answers; canary listeners on 127.0.0.1 (never accepting) must never see a connection
// the guard did not admit; a socket of another uid is turned away.
#include "browser/egress_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>

#include "support/host_table_resolver.h"
#include "support/loopback_listener.h"
#include "support/wait_until.h"

extern char** environ;

namespace talaria::browser {
namespace egress_proxy_testing {

using namespace std::chrono_literals;

UniqueFd Dial(int port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{.tv_sec = 20, .tv_usec = 0};  // a hang guard only
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return {};
  return fd;
}

bool ReadN(int fd, uint8_t* out, size_t n) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::recv(fd, out + got, n - got, 0);
    if (r <= 0) return false;
    got += static_cast<size_t>(r);
  }
  return true;
}

// A SOCKS5 CONNECT by name; the reply code, or -1 when the proxy closed without one.
int SocksConnect(int fd, const std::string& host, int port) {
  const uint8_t hello[] = {5, 1, 0};
  if (::send(fd, hello, sizeof hello, MSG_NOSIGNAL) != 3) return -1;
  std::array<uint8_t, 10> r{};
  if (!ReadN(fd, r.data(), 2) || r[1] != 0) return -1;
  std::string req = {5, 1, 0, 3, static_cast<char>(host.size())};
  req += host;
  req += static_cast<char>(port >> 8);
  req += static_cast<char>(port & 0xff);
  if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size()))
    return -1;
  if (!ReadN(fd, r.data(), 10)) return -1;
  return r[1];
}

// A server on 127.0.0.2 (all of 127/8 is loopback on Linux) that writes `hello` to each
// connection: the address the guard judged, as opposed to the canary on 127.0.0.1.
class SecondLoopbackServer {
 public:
  explicit SecondLoopbackServer(int port) {
    fd_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.2", &a.sin_addr);
    ok_ = ::bind(fd_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
          ::listen(fd_.get(), 8) == 0;
  }
  bool ok() const { return ok_; }
  void ServeOne(const std::string& hello) {
    UniqueFd c(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    (void)::send(c.get(), hello.data(), hello.size(), MSG_NOSIGNAL);
  }

 private:
  UniqueFd fd_;
  bool ok_ = false;
};

class EgressProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    canary_ = test_support::ListenOnLoopback();
    ASSERT_TRUE(canary_.fd.valid());
  }
  std::unique_ptr<EgressProxy> StartProxy(std::vector<std::string> allow) {
    auto guard = web::NetworkGuard::Create({.allow_private = std::move(allow), .resolver = dns_});
    EXPECT_TRUE(guard.has_value());
    auto proxy = EgressProxy::Start(
        {.guard = *guard, .connect_timeout = std::chrono::seconds(10), .max_connections = 16});
    EXPECT_TRUE(proxy.has_value()) << proxy.error().message();
    return std::move(*proxy);
  }

  std::shared_ptr<test_support::HostTableResolver> dns_ =
      std::make_shared<test_support::HostTableResolver>();
  test_support::LoopbackListener canary_;
};

TEST_F(EgressProxyTest, TunnelsOnlyToTheAddressTheGuardJudged) {
  SecondLoopbackServer judged(canary_.port);
  ASSERT_TRUE(judged.ok());
  dns_->Set("site.test", {"127.0.0.2"});
  auto proxy = StartProxy({"127.0.0.2/32"});
  std::jthread server([&] { judged.ServeOne("judged\n"); });
  UniqueFd c = Dial(proxy->port());
  ASSERT_EQ(SocksConnect(c.get(), "site.test", canary_.port), 0);
  std::array<uint8_t, 7> got{};
  ASSERT_TRUE(ReadN(c.get(), got.data(), got.size()));
  EXPECT_EQ(std::string(got.begin(), got.end()), "judged\n");
  EXPECT_FALSE(test_support::BacklogHasConnection(canary_));
}

TEST_F(EgressProxyTest, RefusesARebindingAnswerAndNamesTheRule) {
  // The first lookup (someone's check) is public; the proxy's own is loopback.
  dns_->Set("rebind.test", {"93.184.216.34", "127.0.0.1"});
  auto proxy = StartProxy({});
  auto guard = web::NetworkGuard::Create({.allow_private = {}, .resolver = dns_});
  ASSERT_TRUE((*guard)->Admit("http://rebind.test/").has_value());
  UniqueFd c = Dial(proxy->port());
  EXPECT_EQ(SocksConnect(c.get(), "rebind.test", canary_.port), 2);  // not allowed by ruleset
  EXPECT_FALSE(test_support::BacklogHasConnection(canary_));
  auto refusals = proxy->TakeRefusals();
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_NE(refusals[0].find("(rule: loopback)"), std::string::npos) << refusals[0];
  EXPECT_NE(refusals[0].find("rebind.test:" + std::to_string(canary_.port)), std::string::npos);
}

TEST_F(EgressProxyTest, RefusesLiteralAddressesAndMalformedNames) {
  auto proxy = StartProxy({});
  {
    UniqueFd c = Dial(proxy->port());
    EXPECT_EQ(SocksConnect(c.get(), "127.0.0.1", canary_.port), 2);
  }
  {
    UniqueFd c = Dial(proxy->port());
    EXPECT_EQ(SocksConnect(c.get(), "169.254.169.254", 80), 2);
  }
  {
    UniqueFd c = Dial(proxy->port());  // a name no DNS name can be, kept from the guard's parser
    EXPECT_EQ(SocksConnect(c.get(), "x@127.0.0.1/", canary_.port), 8);
  }
  {
    // An IPv4 CONNECT by address (ATYP 1) is judged the same way.
    UniqueFd c = Dial(proxy->port());
    const uint8_t hello[] = {5, 1, 0};
    ASSERT_EQ(::send(c.get(), hello, 3, MSG_NOSIGNAL), 3);
    std::array<uint8_t, 10> r{};
    ASSERT_TRUE(ReadN(c.get(), r.data(), 2));
    const uint8_t req[] = {5,
                           1,
                           0,
                           1,
                           127,
                           0,
                           0,
                           1,
                           static_cast<uint8_t>(canary_.port >> 8),
                           static_cast<uint8_t>(canary_.port & 0xff)};
    ASSERT_EQ(::send(c.get(), req, sizeof req, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof req));
    ASSERT_TRUE(ReadN(c.get(), r.data(), 10));
    EXPECT_EQ(r[1], 2);
  }
  EXPECT_FALSE(test_support::BacklogHasConnection(canary_));
  EXPECT_EQ(proxy->TakeRefusals().size(), 3u);
}

TEST_F(EgressProxyTest, NeverTunnelsIntoItself) {
  auto proxy = StartProxy({"127.0.0.0/8"});
  UniqueFd c = Dial(proxy->port());
  EXPECT_EQ(SocksConnect(c.get(), "127.0.0.1", proxy->port()), 2);
}

TEST_F(EgressProxyTest, TurnsAwayASocketOfAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to connect as another uid (setpriv)";
  if (::access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "no setpriv (util-linux)";
  auto proxy = StartProxy({"127.0.0.0/8"});
  // nobody connects and reads what the proxy says: nothing, the connection is closed at once.
  const std::string script =
      "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(proxy->port()) + "; head -c 2 <&3 | wc -c";
  std::vector<std::string> args = {"/usr/bin/setpriv",
                                   "--reuid=65534",
                                   "--regid=65534",
                                   "--clear-groups",
                                   "/bin/bash",
                                   "-c",
                                   script};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2];
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  pid_t pid = -1;
  ASSERT_EQ(::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out[1]);
  std::string printed;
  char buf[64];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) printed.append(buf, n);
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(printed, "0\n");
  EXPECT_EQ(proxy->foreign_peers(), 1);
  // Talaria's own uid is still served.
  UniqueFd c = Dial(proxy->port());
  EXPECT_EQ(SocksConnect(c.get(), "127.0.0.1", canary_.port), 0);
  EXPECT_TRUE(test_support::BacklogHasConnection(canary_));
}

}  // namespace egress_proxy_testing
}  // namespace talaria::browser
