// `talaria call` for the browser tools across processes, through the real binary and real
// Chromium on a 127.0.0.1 page: separate calls act on one page (the task's browser daemon),
// browser_close and the idle timeout end the daemon and its Chromium, a SIGKILLed daemon leaves
// no Chromium and its stale socket is replaced, two racing first calls start one daemon, and
// bytes that are not our protocol get an error, not a crash. Skipped only without Chromium.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "browser_shop_fixture.h"
#include "talaria/base/unique_fd.h"

namespace talaria::testing_cli {
namespace {

using namespace std::chrono_literals;

class BrowserDaemonCli : public ShopSiteTest {
 protected:
  CliRun Call(const std::vector<std::string>& args) {
    std::vector<std::string> full = {"call"};
    full.insert(full.end(), args.begin(), args.end());
    return Run(full);
  }
  std::string home() const { return home_.talaria_home(); }
  std::string socket_path() const { return home() + "/run/browser-cli.sock"; }
};

TEST_F(BrowserDaemonCli, FourProcessesActOnOnePage) {
  CliRun nav = Call({"browser_navigate", "url=" + site_.url("/")});
  ASSERT_EQ(nav.exit_code, 0) << nav.out << nav.err;
  const pid_t daemon = DaemonPid(home());
  ASSERT_TRUE(ProcessRuns(daemon)) << "no daemon after the first call";
  EXPECT_NE(daemon, ::getpid());

  CliRun snap = Call({"browser_snapshot"});
  ASSERT_EQ(snap.exit_code, 0) << snap.out << snap.err;
  // The page the first process opened, refs and all.
  EXPECT_NE(snap.out.find("textbox \\\"Item\\\" [ref=e2]"), std::string::npos) << snap.out;
  EXPECT_NE(snap.out.find("button \\\"Add\\\" [ref=e3]"), std::string::npos) << snap.out;

  CliRun type = Call({"browser_type", "ref=@e2", "text=apples"});
  ASSERT_EQ(type.exit_code, 0) << type.out << type.err;
  EXPECT_NE(type.out.find(": apples"), std::string::npos) << type.out;

  CliRun click = Call({"browser_click", "ref=@e3"});
  ASSERT_EQ(click.exit_code, 0) << click.out << click.err;
  // The click submitted the form the second-to-last process typed into.
  EXPECT_NE(click.out.find("Added apples"), std::string::npos) << click.out;
  EXPECT_NE(click.out.find("/done?item=apples"), std::string::npos) << click.out;
  EXPECT_EQ(DaemonPid(home()), daemon) << "every call went to the one daemon";

  struct stat st {};
  ASSERT_EQ(::stat((home() + "/run").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(socket_path().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(BrowserDaemonCli, BrowserCloseEndsTheDaemonAndItsChromium) {
  ASSERT_EQ(Call({"browser_navigate", "url=" + site_.url("/")}).exit_code, 0);
  const pid_t daemon = DaemonPid(home());
  ASSERT_TRUE(ProcessRuns(daemon));
  EXPECT_FALSE(BrowsersOwnedBy(daemon).empty()) << "the daemon owns the Chromium";
  CliRun close = Call({"browser_close"});
  ASSERT_EQ(close.exit_code, 0) << close.out << close.err;
  EXPECT_NE(close.out.find("\"closed\": true"), std::string::npos) << close.out;
  EXPECT_TRUE(WaitFor([&] { return !ProcessRuns(daemon); }, 30s)) << "the daemon lives on";
  EXPECT_TRUE(WaitFor([&] { return BrowsersOwnedBy(daemon).empty(); }, 30s));
  EXPECT_FALSE(std::filesystem::exists(socket_path()));
}

TEST_F(BrowserDaemonCli, IdleTimeoutEndsTheDaemonAndItsChromium) {
  WriteConfig("  inactivity_timeout: 10\n");  // the least the config accepts
  ASSERT_EQ(Call({"browser_navigate", "url=" + site_.url("/")}).exit_code, 0);
  const pid_t daemon = DaemonPid(home());
  ASSERT_TRUE(ProcessRuns(daemon));
  EXPECT_TRUE(WaitFor([&] { return !ProcessRuns(daemon); }, 60s)) << "still up after 60 s idle";
  EXPECT_TRUE(WaitFor([&] { return BrowsersOwnedBy(daemon).empty(); }, 30s));
}

TEST_F(BrowserDaemonCli, KilledDaemonLeavesNoChromiumAndItsSocketIsReplaced) {
  ASSERT_EQ(Call({"browser_navigate", "url=" + site_.url("/")}).exit_code, 0);
  const pid_t daemon = DaemonPid(home());
  ASSERT_TRUE(ProcessRuns(daemon));
  ASSERT_FALSE(BrowsersOwnedBy(daemon).empty());
  ASSERT_EQ(::kill(daemon, SIGKILL), 0);
  ASSERT_TRUE(WaitFor([&] { return !ProcessRuns(daemon); }, 30s));
  const bool gone = WaitFor([&] { return BrowsersOwnedBy(daemon).empty(); }, 30s);
  const auto left = BrowsersOwnedBy(daemon);
  for (pid_t p : left) ::kill(p, SIGKILL);  // never leave them behind, even on failure
  EXPECT_TRUE(gone) << left.size() << " Chromium processes outlived the SIGKILLed daemon";
  // Its socket file is still there, and nobody listens: the next call replaces it.
  ASSERT_TRUE(std::filesystem::exists(socket_path()));
  CliRun nav = Call({"browser_navigate", "url=" + site_.url("/")});
  ASSERT_EQ(nav.exit_code, 0) << nav.out << nav.err;
  EXPECT_NE(nav.out.find("Shop"), std::string::npos);
  const pid_t second = DaemonPid(home());
  EXPECT_TRUE(ProcessRuns(second));
  EXPECT_NE(second, daemon);
}

TEST_F(BrowserDaemonCli, RacingFirstCallsStartOneDaemon) {
  constexpr int kRacers = 3;
  std::vector<CliRun> runs(kRacers);
  {
    std::vector<std::jthread> racers;
    for (int i = 0; i < kRacers; ++i) {
      racers.emplace_back([&, i] {
        runs[i] = Call({"browser_navigate", "url=" + site_.url("/")});
      });
    }
  }
  for (const CliRun& run : runs) {
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_NE(run.out.find("Shop"), std::string::npos) << run.out;
  }
  const std::vector<pid_t> daemons = DaemonsOf(home());
  EXPECT_EQ(daemons.size(), 1u) << "the racing first calls started more than one daemon";
}

TEST_F(BrowserDaemonCli, SomethingElseAtTheSocketPathIsAClearError) {
  std::filesystem::create_directories(home() + "/run");
  std::ofstream(socket_path()) << "not a socket";
  CliRun nav = Call({"browser_navigate", "url=" + site_.url("/")});
  EXPECT_EQ(nav.exit_code, 1);
  EXPECT_NE(nav.err.find("is not a socket"), std::string::npos) << nav.err;
  EXPECT_TRUE(DaemonsOf(home()).empty());
}

// Raw frames, as a hostile local client would send them.
std::string Frame(const std::string& payload) {
  std::string out;
  const auto n = static_cast<uint32_t>(payload.size());
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(n >> shift));
  return out + payload;
}

std::string ReadSome(int fd) {
  std::string got;
  char buf[4096];
  timeval tv{.tv_sec = 20, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  // The greeting, then the answer: two frames at most.
  for (int i = 0; i < 8; ++i) {
    const ssize_t r = ::recv(fd, buf, sizeof(buf), 0);
    if (r <= 0) break;
    got.append(buf, static_cast<size_t>(r));
    if (got.find("\"text\"") != std::string::npos) break;
  }
  return got;
}

UniqueFd ConnectTo(const std::string& path) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return UniqueFd();
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    return UniqueFd();
  }
  return fd;
}

TEST_F(BrowserDaemonCli, GarbageOnTheSocketGetsAnErrorAndTheDaemonLives) {
  ASSERT_EQ(Call({"browser_navigate", "url=" + site_.url("/")}).exit_code, 0);
  const pid_t daemon = DaemonPid(home());
  for (const std::string& bad :
       {Frame("not json"), Frame("{\"protocol\":1,\"tool\":\"terminal\",\"arguments\":{}}"),
        Frame("{\"protocol\":99,\"tool\":\"browser_snapshot\",\"arguments\":{}}"),
        std::string("\xff\xff\xff\xff", 4)}) {
    UniqueFd fd = ConnectTo(socket_path());
    ASSERT_TRUE(fd.valid()) << "cannot connect to " << socket_path();
    ASSERT_EQ(::send(fd.get(), bad.data(), bad.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bad.size()));
    const std::string answer = ReadSome(fd.get());
    EXPECT_NE(answer.find("talaria-browser"), std::string::npos) << answer;  // the greeting
    if (bad.starts_with("\xff")) continue;  // an oversized frame: the connection just ends
    EXPECT_NE(answer.find("\"status\":\"error\""), std::string::npos) << answer;
  }
  EXPECT_TRUE(ProcessRuns(daemon));
  CliRun snap = Call({"browser_snapshot"});
  EXPECT_EQ(snap.exit_code, 0) << snap.out << snap.err;
  EXPECT_NE(snap.out.find("Shop"), std::string::npos) << snap.out;
  EXPECT_EQ(DaemonPid(home()), daemon);
}

TEST_F(BrowserDaemonCli, DaemonOffRunsTheBrowserInProcess) {
  CliInvocation how;
  how.home = home_.path();
  how.timeout = std::chrono::seconds(90);
  how.extra_env = {"TALARIA_BROWSER_DAEMON=0"};
  CliRun nav = RunTalaria(how, {"call", "browser_navigate", "url=" + site_.url("/")});
  ASSERT_EQ(nav.exit_code, 0) << nav.out << nav.err;
  EXPECT_NE(nav.out.find("Shop"), std::string::npos);
  EXPECT_TRUE(DaemonsOf(home()).empty());
  EXPECT_FALSE(std::filesystem::exists(socket_path()));
}

}  // namespace
}  // namespace talaria::testing_cli
