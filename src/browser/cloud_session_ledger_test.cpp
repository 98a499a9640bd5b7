// The cloud session ledger on its own: records are private files written whole, a live owner's
// session is left alone, a dead owner's (a real child process, exited and reaped) is released
// once, and a release that fails keeps the record for the next sweep. The whole path through a
// SIGKILLed talaria is tests/integration/browser_cloud_leftovers_test.cpp.
#include "browser/cloud_session_ledger.h"

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "support/temp_dir.h"

extern char** environ;

namespace talaria::browser {
namespace cloud_ledger_testing {

class CloudLedgerTest : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("TALARIA_HOME", home_.path().c_str(), 1); }
  void TearDown() override { ::unsetenv("TALARIA_HOME"); }

  // A pid that ran and is gone: a child that exited and was reaped.
  static pid_t DeadPid() {
    char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
    pid_t pid = -1;
    EXPECT_EQ(::posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, environ), 0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return pid;
  }
  void WriteRecord(const std::string& provider, const std::string& id, pid_t owner) {
    std::filesystem::create_directories(CloudLedgerDir());
    std::ofstream(CloudLedgerDir() + "/" + provider + "." + id + ".json")
        << R"({"provider":")" << provider << R"(","session_id":")" << id << R"(","owner_pid":)"
        << owner << R"(,"owner_start":1,"created_ms":0})";
  }
  static std::vector<std::string> Files() {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(CloudLedgerDir(), ec)) {
      names.push_back(e.path().filename());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  test_support::TempDir home_;
};

TEST_F(CloudLedgerTest, RecordsArePrivateAndForgottenOnRelease) {
  const RemoteBrowser b{.provider = "browserbase",
                        .session_id = "s-1",
                        .cdp_url = "",
                        .cdp_headers = {},
                        .route = ""};
  ASSERT_TRUE(RecordCloudSession(b).ok());
  const std::string path = CloudLedgerDir() + "/browserbase.s-1.json";
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(CloudLedgerDir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // Our own session: its owner runs, nothing is released.
  int calls = 0;
  EXPECT_TRUE(ReleaseLeftoverCloudSessions([&](const RemoteBrowser&) {
                ++calls;
                return Status::Ok();
              }).empty());
  EXPECT_EQ(calls, 0);
  ForgetCloudSession(b);
  EXPECT_TRUE(Files().empty());
}

TEST_F(CloudLedgerTest, ADeadOwnersSessionIsReleasedOnce) {
  WriteRecord("firecrawl", "fc-9", DeadPid());
  std::vector<std::string> released;
  auto got = ReleaseLeftoverCloudSessions([&](const RemoteBrowser& b) {
    released.push_back(b.provider + "/" + b.session_id);
    return Status::Ok();
  });
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(released, std::vector<std::string>{"firecrawl/fc-9"});
  EXPECT_TRUE(Files().empty());
  EXPECT_TRUE(ReleaseLeftoverCloudSessions([](const RemoteBrowser&) {
                ADD_FAILURE() << "released twice";
                return Status::Ok();
              }).empty());
}

TEST_F(CloudLedgerTest, TheWayASessionWasMadeComesBackWithIt) {
  const RemoteBrowser made{.provider = "browser-use",
                           .session_id = "bu-7",
                           .cdp_url = "",
                           .cdp_headers = {},
                           .route = "gateway"};
  ASSERT_TRUE(RecordCloudSession(made).ok());
  // As if its owner had died: the record names a pid that is gone.
  auto text = std::ifstream(CloudLedgerDir() + "/browser-use.bu-7.json");
  std::string record((std::istreambuf_iterator<char>(text)), std::istreambuf_iterator<char>());
  const size_t pid_at = record.find("\"owner_pid\":");
  ASSERT_NE(pid_at, std::string::npos) << record;
  const size_t pid_end = record.find_first_of(",}", pid_at);
  record.replace(pid_at, pid_end - pid_at, "\"owner_pid\":" + std::to_string(DeadPid()));
  std::ofstream(CloudLedgerDir() + "/browser-use.bu-7.json", std::ios::trunc) << record;
  std::string route;
  ASSERT_EQ(ReleaseLeftoverCloudSessions([&](const RemoteBrowser& b) {
              route = b.route;
              return Status::Ok();
            }).size(),
            1u);
  EXPECT_EQ(route, "gateway");
  // A record without one (or with anything else) has no route: the provider picks.
  WriteRecord("browser-use", "bu-8", DeadPid());
  route = "unset";
  (void)ReleaseLeftoverCloudSessions([&](const RemoteBrowser& b) {
    route = b.route;
    return Status::Ok();
  });
  EXPECT_EQ(route, "");
}

TEST_F(CloudLedgerTest, AFailedReleaseKeepsTheRecordForTheNextSweep) {
  WriteRecord("browser-use", "bu-3", DeadPid());
  EXPECT_TRUE(ReleaseLeftoverCloudSessions([](const RemoteBrowser&) {
                return UnavailableError("provider down");
              }).empty());
  EXPECT_EQ(Files(), std::vector<std::string>{"browser-use.bu-3.json"});
  EXPECT_EQ(ReleaseLeftoverCloudSessions([](const RemoteBrowser&) { return Status::Ok(); }).size(),
            1u);
  EXPECT_TRUE(Files().empty());
}

TEST_F(CloudLedgerTest, RecordsNamingPathsAreIgnoredAndIdsChecked) {
  const RemoteBrowser bad{.provider = "browserbase",
                          .session_id = "../../etc",
                          .cdp_url = "",
                          .cdp_headers = {},
                          .route = ""};
  EXPECT_FALSE(RecordCloudSession(bad).ok());
  WriteRecord("browserbase", "x", DeadPid());
  // Rewritten by hand to carry a path as its id: not released, not followed.
  std::ofstream(CloudLedgerDir() + "/browserbase.x.json", std::ios::trunc)
      << R"({"provider":"browserbase","session_id":"../x","owner_pid":1,"owner_start":1})";
  EXPECT_TRUE(ReleaseLeftoverCloudSessions([](const RemoteBrowser&) {
                ADD_FAILURE() << "an id with a path was released";
                return Status::Ok();
              }).empty());
}

}  // namespace cloud_ledger_testing
}  // namespace talaria::browser
