// Crash safety for real: a child process (this test binary, re-run with a filter and an
// environment variable) appends an agent's turns to a session and is SIGKILLed at seeded
// moments; after each kill the parent reopens the file and checks it.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "store/store_test_util.h"
#include "support/self_spawn.h"
#include "support/temp_dir.h"
#include "talaria/base/unique_fd.h"
#include "talaria/store/session_store.h"

extern char** environ;

namespace talaria::store {
namespace {

using talaria::test_support::TempDir;
using testing::AssistantCalls;
using testing::Call;
using testing::HistoryProblem;
using testing::Msg;
using testing::OpenOrDie;
using testing::QueryText;
using testing::ToolResult;

constexpr const char* kDbEnv = "TALARIA_STORE_CHILD_DB";
constexpr const char* kSessionEnv = "TALARIA_STORE_CHILD_SESSION";
constexpr const char* kCountEnv = "TALARIA_STORE_CHILD_COUNT";  // stop after this many; 0: never
constexpr int kReportFd = 3;  // the child writes "<seq>\n" after each committed append

// The content of message `seq`: derived from seq alone, so the parent can tell a torn or mixed
// row from a whole one. Lengths vary (some rows span overflow pages); every 7th has CJK text.
std::string ContentFor(int64_t seq) {
  std::string out = "message " + std::to_string(seq) + ":";
  const size_t len = static_cast<size_t>((seq * 7919) % 1500);
  for (size_t i = 0; i < len; ++i) out += static_cast<char>('a' + (seq + i) % 26);
  if (seq % 7 == 0) out += " 会话恢复测试";
  out += ":end " + std::to_string(seq);
  return out;
}

void Report(int64_t seq) {
  std::string line = std::to_string(seq) + "\n";
  if (::write(kReportFd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    std::_Exit(4);
  }
}

// The child: resumes the session as the agent would (repair, then turns): a user message, an
// assistant message with 1-3 calls, their results one by one; every 5th turn a compaction;
// every 6th message a search (which indexes the messages not yet indexed).
TEST(StoreCrashChild, AppendTurns) {
  const char* db = std::getenv(kDbEnv);
  const char* session = std::getenv(kSessionEnv);
  if (db == nullptr || session == nullptr) GTEST_SKIP() << "helper for the crash tests";
  const char* count_text = std::getenv(kCountEnv);
  const int64_t stop_after = count_text != nullptr ? std::atoll(count_text) : 0;
  auto store = SessionStore::Open(db);
  if (!store) std::_Exit(5);
  if (!(*store)->RepairInterrupted(session)) std::_Exit(6);
  int64_t appended = 0;
  auto append = [&](StoredMessage m) {
    auto row = (*store)->GetSession(session);
    if (!row || !*row) std::_Exit(7);
    m.content = ContentFor((*row)->message_count + 1);
    if (!(*store)->AppendMessage(session, m).ok()) std::_Exit(8);
    Report(m.seq);
    if (stop_after > 0 && ++appended >= stop_after) std::_Exit(0);
    // A search indexes what is pending: kills also land inside index batches.
    if (m.seq % 6 == 0 && !(*store)->Search("make test", {}).has_value()) std::_Exit(10);
    // session_search's reads, on the store's second (read-only) connection.
    if (m.seq % 6 == 3 && !(*store)->RecallSearch("message", {.limit = 5}).has_value()) {
      std::_Exit(11);
    }
  };
  for (int turn = 0;; ++turn) {
    append(Msg("user", ""));
    const int calls = 1 + turn % 3;
    std::vector<Json> call_list;
    auto row = (*store)->GetSession(session);
    const std::string prefix = "call_" + std::to_string((*row)->message_count) + "_";
    for (int c = 0; c < calls; ++c) {
      call_list.push_back(Call(prefix + std::to_string(c), "terminal",
                               R"({"command":"make test )" + std::to_string(c) + R"("})"));
    }
    StoredMessage assistant = AssistantCalls(call_list);
    assistant.usage = {.input_tokens = 10, .output_tokens = 2};
    append(assistant);
    for (int c = 0; c < calls; ++c) append(ToolResult(prefix + std::to_string(c), "terminal", ""));
    if (turn % 5 == 4) {
      if (!(*store)->AppendCompaction(session, "summary", {Msg("user", "summary so far")}).ok())
        std::_Exit(9);
    }
  }
}

struct Child {
  pid_t pid = -1;
  UniqueFd reports;
};

// Spawns this binary running only StoreCrashChild.AppendTurns.
Child SpawnChild(const std::string& db, const std::string& session, int64_t count) {
  Child child;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return child;
  child.pid = test_support::SpawnSelf(
      {.test = "StoreCrashChild.AppendTurns",
       .env = {{kDbEnv, db}, {kSessionEnv, session}, {kCountEnv, std::to_string(count)}},
       .dup2s = {{fds[1], kReportFd}}});
  ::close(fds[1]);
  child.reports.reset(fds[0]);
  return child;
}

// Reads report lines until `want` seqs arrived (0: until EOF) or `timeout`; appends them.
void ReadReports(int fd, std::string& pending, std::vector<int64_t>& seqs, size_t want,
                 std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (want == 0 || seqs.size() < want) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    struct pollfd p {
      fd, POLLIN, 0
    };
    if (::poll(&p, 1, static_cast<int>(left.count())) != 1) return;
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) return;
    pending.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      seqs.push_back(std::atoll(pending.substr(0, nl).c_str()));
      pending.erase(0, nl + 1);
    }
  }
}

int Reap(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

// The whole-file checks after a kill: integrity, FTS consistency, every reported message
// present and whole, seqs without gaps, and a valid history once repaired.
void CheckAfterKill(const std::string& db, const std::string& session,
                    const std::vector<int64_t>& reported, int round) {
  SCOPED_TRACE("round " + std::to_string(round));
  auto store = OpenOrDie(db);
  ASSERT_TRUE(store);
  EXPECT_EQ(QueryText(db, "PRAGMA integrity_check"), "ok");
  // The index comparison rebuilds both indexes: every fourth round keeps the test short.
  if (round % 4 == 3) {
    EXPECT_EQ(testing::FtsDriftProblem(db), "");
  }
  auto transcript = store->LoadTranscript(session);
  ASSERT_TRUE(transcript) << transcript.error().ToString();
  std::set<int64_t> present;
  for (size_t i = 0; i < transcript->size(); ++i) {
    const StoredMessage& m = (*transcript)[i];
    ASSERT_EQ(m.seq, static_cast<int64_t>(i) + 1) << "a gap in the seqs";
    present.insert(m.seq);
    if (m.role == "tool" && m.content.find("interrupted") != std::string::npos) continue;
    ASSERT_EQ(m.content, ContentFor(m.seq)) << "torn or mixed row " << m.seq;
  }
  for (int64_t seq : reported) ASSERT_TRUE(present.contains(seq)) << "lost committed " << seq;
  auto row = store->GetSession(session);
  ASSERT_TRUE(row && *row);
  EXPECT_EQ((*row)->message_count, static_cast<int64_t>(transcript->size()));
  auto repaired = store->RepairInterrupted(session);
  ASSERT_TRUE(repaired) << repaired.error().ToString();
  auto history = store->LoadHistory(session);
  ASSERT_TRUE(history);
  EXPECT_EQ(HistoryProblem(*history), "");
}

TEST(StoreCrash, KilledWriterLosesNothingCommittedAndRepairs) {
  TempDir tmp;
  const std::string db = tmp / "sessions.db";
  std::string session;
  {
    auto store = OpenOrDie(db);
    ASSERT_TRUE(store);
    session = store->CreateSession({.cwd = "/crash"})->id;
  }
  // 24 kills at seeded moments: after the child reports its first commit, a delay of 0-4 ms
  // (a few dozen appends at most), so kills land inside transactions, between a call and its
  // results, inside compactions and during the repair that starts each child.
  std::mt19937 rng(20261205);
  std::uniform_int_distribution<int> delay_us(0, 4000);
  std::vector<int64_t> reported;
  constexpr int kRounds = 24;
  for (int round = 0; round < kRounds; ++round) {
    Child child = SpawnChild(db, session, 0);
    ASSERT_GT(child.pid, 0);
    std::string pending;
    const size_t before = reported.size();
    ReadReports(child.reports.get(), pending, reported, before + 1, std::chrono::seconds(30));
    ASSERT_GT(reported.size(), before) << "the child never committed";
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    ASSERT_EQ(::kill(child.pid, SIGKILL), 0);
    const int status = Reap(child.pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited on its own: " << status;
    ReadReports(child.reports.get(), pending, reported, 0, std::chrono::seconds(5));  // to EOF
    CheckAfterKill(db, session, reported, round);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(reported.size(), static_cast<size_t>(kRounds));
}

// "" when both FTS5 indexes pass FTS5's own 'integrity-check' against their content views
// (rank 1: every indexed row compared with the text the view gives now). Valid only when every
// message is indexed, as after an open.
std::string Fts5IntegrityProblem(const std::string& db) {
  for (const char* sql :
       {"INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)",
        "INSERT INTO messages_cjk(messages_cjk, rank) VALUES ('integrity-check', 1)"}) {
    std::string r = QueryText(db, sql);
    if (!r.empty()) return r;
  }
  return "";
}

// The issue's 1,000 crash tests: seeded SIGKILLs of a child appending turns (and searching on
// both connections), each followed by PRAGMA integrity_check and FTS5's integrity-check. Run by
// ctest's `crash` label (TALARIA_STORE_CRASH_RUNS=1000); skipped in the unit run. A fresh
// database every 50 kills keeps each check small.
TEST(StoreCrashRuns, SeededKillsNeverCorrupt) {
  const char* runs_text = std::getenv("TALARIA_STORE_CRASH_RUNS");
  if (runs_text == nullptr) GTEST_SKIP() << "set TALARIA_STORE_CRASH_RUNS (ctest -L crash)";
  const int runs = std::atoi(runs_text);
  ASSERT_GT(runs, 0);
  std::mt19937 rng(20261205);
  std::uniform_int_distribution<int> delay_us(0, 3000);
  int integrity_failures = 0, fts_failures = 0, lost = 0;
  TempDir tmp;
  std::string db, session;
  std::vector<int64_t> reported;
  for (int run = 0; run < runs; ++run) {
    if (run % 50 == 0) {
      db = tmp / ("crash" + std::to_string(run / 50) + ".db");
      auto store = OpenOrDie(db);
      ASSERT_TRUE(store);
      session = store->CreateSession({.cwd = "/crash"})->id;
      reported.clear();
    }
    Child child = SpawnChild(db, session, 0);
    ASSERT_GT(child.pid, 0);
    std::string pending;
    const size_t before = reported.size();
    ReadReports(child.reports.get(), pending, reported, before + 1, std::chrono::seconds(30));
    ASSERT_GT(reported.size(), before) << "the child never committed (run " << run << ")";
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    ASSERT_EQ(::kill(child.pid, SIGKILL), 0);
    const int status = Reap(child.pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited on its own: " << status;
    ReadReports(child.reports.get(), pending, reported, 0, std::chrono::seconds(5));

    if (QueryText(db, "PRAGMA integrity_check") != "ok") ++integrity_failures;
    auto store = OpenOrDie(db);  // indexes what the child left unindexed
    ASSERT_TRUE(store);
    if (!Fts5IntegrityProblem(db).empty()) ++fts_failures;
    auto transcript = store->LoadTranscript(session);
    ASSERT_TRUE(transcript) << transcript.error().ToString();
    std::set<int64_t> present;
    for (const StoredMessage& m : *transcript) present.insert(m.seq);
    for (int64_t seq : reported) lost += present.contains(seq) ? 0 : 1;
    reported.clear();  // checked; the next child appends after them
  }
  std::printf(
      "crash runs: %d, integrity_check failures: %d, FTS5 integrity-check failures: %d, "
      "committed messages lost: %d\n",
      runs, integrity_failures, fts_failures, lost);
  EXPECT_EQ(integrity_failures, 0);
  EXPECT_EQ(fts_failures, 0);
  EXPECT_EQ(lost, 0);
}

TEST(StoreCrash, TwoProcessesAppendToTheirOwnSessions) {
  TempDir tmp;
  const std::string db = tmp / "sessions.db";
  std::string ids[2];
  {
    auto store = OpenOrDie(db);
    ASSERT_TRUE(store);
    for (auto& id : ids) id = store->CreateSession({})->id;
  }
  constexpr int64_t kEach = 150;
  Child children[2] = {SpawnChild(db, ids[0], kEach), SpawnChild(db, ids[1], kEach)};
  for (Child& c : children) {
    ASSERT_GT(c.pid, 0);
    std::vector<int64_t> seqs;
    std::string pending;
    ReadReports(c.reports.get(), pending, seqs, 0, std::chrono::seconds(60));
    const int status = Reap(c.pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    EXPECT_EQ(seqs.size(), static_cast<size_t>(kEach));
  }
  auto store = OpenOrDie(db);
  ASSERT_TRUE(store);
  EXPECT_EQ(QueryText(db, "PRAGMA integrity_check"), "ok");
  for (const auto& id : ids) {
    auto transcript = store->LoadTranscript(id);
    ASSERT_TRUE(transcript);
    ASSERT_EQ(transcript->size(), static_cast<size_t>(kEach));
    for (const StoredMessage& m : *transcript) EXPECT_EQ(m.content, ContentFor(m.seq));
  }
}

}  // namespace
}  // namespace talaria::store
