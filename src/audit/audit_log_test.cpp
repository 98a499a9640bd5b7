#include "talaria/audit/audit_log.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "support/safety_test_util.h"
#include "talaria/base/sha256.h"

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
  auto verified = VerifyAuditLog(tmp / "audit.jsonl");
  ASSERT_TRUE(verified) << verified.error().ToString();
  EXPECT_TRUE(verified->intact) << verified->problem;
  EXPECT_FALSE(verified->head_missing);
}

// Two logs open on one file chain as two processes would: each re-reads the tail the other
// wrote (the flock orders them), so the chain stays whole.
TEST(AuditLog, TwoWritersOnOneFileKeepOneChain) {
  TempDir tmp;
  auto a = AuditLog::Open(tmp / "audit.jsonl");
  auto b = AuditLog::Open(tmp / "audit.jsonl");
  ASSERT_TRUE(a && b);
  {
    std::jthread ta([&] {
      for (int i = 0; i < 300; ++i)
        ASSERT_TRUE((*a)->AppendLine("{\"w\":\"a\",\"i\":" + std::to_string(i) + "}\n").ok());
    });
    std::jthread tb([&] {
      for (int i = 0; i < 300; ++i)
        ASSERT_TRUE((*b)->AppendLine("{\"w\":\"b\",\"i\":" + std::to_string(i) + "}\n").ok());
    });
  }
  auto verified = VerifyAuditLog(tmp / "audit.jsonl");
  ASSERT_TRUE(verified) << verified.error().ToString();
  EXPECT_TRUE(verified->intact) << verified->problem;
  EXPECT_EQ(verified->lines, 600u);
}

class TamperedAuditLog : public ::testing::Test {
 protected:
  void SetUp() override {
    auto log = AuditLog::Open(path_);
    ASSERT_TRUE(log);
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE((*log)
                      ->AppendLine("{\"event\":\"command\",\"command\":\"step " +
                                   std::to_string(i) + "\"}\n")
                      .ok());
    }
    lines_ = Lines();
  }
  std::vector<std::string> Lines() const {
    std::vector<std::string> out;
    std::istringstream in(ReadFile(path_));
    for (std::string l; std::getline(in, l);) out.push_back(l + "\n");
    return out;
  }
  void Rewrite(const std::vector<std::string>& lines) const {
    std::string text;
    for (const auto& l : lines) text += l;
    testing::WriteFile(path_, text);
  }
  AuditVerification Verify() const {
    auto v = VerifyAuditLog(path_);
    EXPECT_TRUE(v) << v.error().ToString();
    return v ? *v : AuditVerification{};
  }
  TempDir tmp_;
  std::string path_ = tmp_ / "audit.jsonl";
  std::vector<std::string> lines_;
};

TEST_F(TamperedAuditLog, AnUntouchedLogIsIntact) {
  const AuditVerification v = Verify();
  EXPECT_TRUE(v.intact) << v.problem;
  EXPECT_EQ(v.lines, 5u);
}

TEST_F(TamperedAuditLog, AnEditedLineBreaksTheChainAfterIt) {
  auto lines = lines_;
  const size_t at = lines[2].find("step 2");
  lines[2].replace(at, 6, "step X");
  Rewrite(lines);
  const AuditVerification v = Verify();
  EXPECT_FALSE(v.intact);
  EXPECT_NE(v.problem.find("line 4"), std::string::npos) << v.problem;
}

TEST_F(TamperedAuditLog, ARemovedLineIsSeen) {
  auto lines = lines_;
  lines.erase(lines.begin() + 1);
  Rewrite(lines);
  const AuditVerification v = Verify();
  EXPECT_FALSE(v.intact);
  EXPECT_NE(v.problem.find("line 2"), std::string::npos) << v.problem;
}

TEST_F(TamperedAuditLog, ACutOffEndIsSeen) {
  auto lines = lines_;
  lines.resize(3);
  Rewrite(lines);
  const AuditVerification v = Verify();
  EXPECT_FALSE(v.intact);
  EXPECT_NE(v.problem.find("cut off"), std::string::npos) << v.problem;
  Rewrite({});
  EXPECT_FALSE(Verify().intact);
}

TEST_F(TamperedAuditLog, AReplacedLastLineIsSeen) {
  auto lines = lines_;
  lines[4] = lines[3];  // same length, a valid line, but not the one written last
  Rewrite(lines);
  EXPECT_FALSE(Verify().intact);
}

// The last line dropped and a longer forged one appended with a correct "prev" (SHA-256 has no
// key), or the head deleted along with a cut: both are caught by the head.
TEST_F(TamperedAuditLog, AForgedLongerLastLineOrADeletedHeadIsSeen) {
  auto lines = lines_;
  lines.pop_back();
  std::string forged =
      "{\"event\":\"command\",\"command\":\"echo a much longer and innocent line\",\"prev\":\"" +
      Sha256Hex(lines.back()) + "\"}\n";
  lines.push_back(forged);
  Rewrite(lines);
  AuditVerification v = Verify();
  EXPECT_FALSE(v.intact) << "forged last line passed";
  Rewrite(std::vector<std::string>(lines_.begin(), lines_.begin() + 3));
  std::filesystem::remove(path_ + ".head");
  v = Verify();
  EXPECT_FALSE(v.intact);
  EXPECT_NE(v.problem.find("head record"), std::string::npos) << v.problem;
}

TEST_F(TamperedAuditLog, LinesFromBeforeChainingAndATornLineAreHandled) {
  TempDir tmp;
  const std::string path = tmp / "old.jsonl";
  testing::WriteFile(path, "{\"event\":\"approval\"}\n{\"event\":\"appr");  // old, then torn
  auto log = AuditLog::Open(path);
  ASSERT_TRUE(log);
  ASSERT_TRUE((*log)->AppendLine("{\"event\":\"command\"}\n").ok());
  auto v = VerifyAuditLog(path);
  ASSERT_TRUE(v);
  // The torn line is not an object: the verifier names it rather than vouching for the log.
  EXPECT_FALSE(v->intact);
  EXPECT_NE(v->problem.find("line 2"), std::string::npos) << v->problem;
  testing::WriteFile(path, "{\"event\":\"approval\"}\n");
  auto fresh = AuditLog::Open(path);
  ASSERT_TRUE(fresh);
  ASSERT_TRUE((*fresh)->AppendLine("{\"event\":\"command\"}\n").ok());
  v = VerifyAuditLog(path);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->intact) << v->problem;
  EXPECT_EQ(v->unchained_lines, 1u);
}

}  // namespace
}  // namespace talaria::safety
