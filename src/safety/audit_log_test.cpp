#include "talaria/safety/audit_log.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "safety/safety_test_util.h"
#include "talaria/safety/sha256.h"

namespace talaria::safety {
namespace {

using testing::ReadFile;
using testing::TempDir;

TEST(AuditLog, RecordShape) {
  AuditRecord r;
  r.time = std::chrono::system_clock::time_point(std::chrono::milliseconds(1714564800123));
  r.session = "s1";
  r.tool = "write_file";
  r.path = "/w/a.txt";
  r.bytes = 5;
  r.sha256_after = Sha256Hex("hello");
  r.outcome = "ok";
  EXPECT_EQ(AuditRecordToJsonLine(r),
            "{\"time\":\"2024-05-01T12:00:00.123Z\",\"session\":\"s1\",\"tool\":\"write_file\","
            "\"path\":\"/w/a.txt\",\"bytes\":5,\"sha256_before\":null,\"sha256_after\":"
            "\"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824\","
            "\"outcome\":\"ok\"}\n");
}

TEST(AuditLog, InvalidUtf8PathDoesNotThrow) {
  AuditRecord r;
  r.path = "/w/\xff\xfe.txt";
  std::string line = AuditRecordToJsonLine(r);
  nlohmann::json j;
  EXPECT_NO_THROW(j = nlohmann::json::parse(line));
}

TEST(AuditLog, CreatesPrivateFileAndDirectory) {
  TempDir tmp;
  auto log = AuditLog::Open(tmp / "home/.talaria/audit.jsonl");
  ASSERT_TRUE(log) << log.error().ToString();
  struct stat st {};
  ASSERT_EQ(::stat((tmp / "home/.talaria/audit.jsonl").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((tmp / "home/.talaria").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST(AuditLog, RefusesSymlinkAtLeaf) {
  TempDir tmp;
  testing::WriteFile(tmp / "target", "");
  ASSERT_EQ(::symlink((tmp / "target").c_str(), (tmp / "audit.jsonl").c_str()), 0);
  auto log = AuditLog::Open(tmp / "audit.jsonl");
  ASSERT_FALSE(log);
  EXPECT_EQ(log.error().code(), StatusCode::kPermissionDenied);
}

TEST(AuditLog, ConcurrentAppendsNeverInterleave) {
  TempDir tmp;
  auto log = AuditLog::Open(tmp / "audit.jsonl");
  ASSERT_TRUE(log) << log.error().ToString();
  constexpr int kThreads = 8;
  constexpr int kPerThread = 400;
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          AuditRecord r;
          r.session = "t" + std::to_string(t);
          r.tool = "patch";
          // Some records well over PIPE_BUF (4096) to show size does not matter.
          r.path = "/w/" + std::string(static_cast<size_t>(i % 7 == 0 ? 9000 : 10), 'p') +
                   std::to_string(i);
          r.bytes = static_cast<uint64_t>(i);
          r.sha256_before = std::string(64, 'a');
          r.sha256_after = std::string(64, 'b');
          r.outcome = "ok";
          ASSERT_TRUE((*log)->Append(r).ok());
        }
      });
    }
  }
  std::istringstream in(ReadFile(tmp / "audit.jsonl"));
  std::string line;
  std::set<std::pair<std::string, uint64_t>> seen;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(line)) << "line " << lines;
    ASSERT_TRUE(j.contains("time") && j.contains("sha256_before") && j.contains("outcome"));
    seen.emplace(j["session"].get<std::string>(), j["bytes"].get<uint64_t>());
  }
  EXPECT_EQ(lines, kThreads * kPerThread);
  EXPECT_EQ(seen.size(), static_cast<size_t>(kThreads * kPerThread));
}

}  // namespace
}  // namespace talaria::safety
