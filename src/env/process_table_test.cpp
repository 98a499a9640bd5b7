// The background process table with real children: output windows, wait/kill/write, id
// prefixes, the process limit and cleanup of whole groups.
#include "talaria/env/process_table.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include "support/wait_until.h"

namespace talaria::env {
namespace {

using namespace std::chrono_literals;
using test_support::WaitUntil;

// A started bash child; a failure to start throws out of the test (value() of an error).
StartedProcess Start(const std::string& script, bool stdin_pipe = false, bool pty = false) {
  SpawnOptions options;
  options.argv.push_back("/bin/bash");
  options.argv.push_back("-c");
  options.argv.push_back(script);
  return StartProcess(options, {.stdin_pipe = stdin_pipe, .pty = pty}).value();
}

TEST(ProcessTable, CollectsOutputAndTheExitCode) {
  ProcessTable table;
  auto id = table.Add(Start("echo one; echo two >&2; exit 4"), "demo", false);
  ASSERT_TRUE(id) << id.error().ToString();
  EXPECT_EQ(id->rfind("proc_", 0), 0u);
  EXPECT_EQ(id->size(), 17u);
  auto done = table.Wait(*id, 10s, {});
  ASSERT_TRUE(done);
  EXPECT_FALSE(done->running);
  EXPECT_EQ(done->exit_code, 4);
  // Output may still be draining just after the exit.
  WaitUntil([&] { return table.Get(*id, true)->output == "one\ntwo\n"; }, 10s);
  EXPECT_EQ(table.Get(*id, true)->output, "one\ntwo\n");
  EXPECT_EQ(table.List().size(), 1u);
}

TEST(ProcessTable, WaitTimesOutOnARunningProcessAndKillEndsItsGroup) {
  ProcessTable table({.kill_grace = 300ms});
  auto id = table.Add(Start("trap '' TERM; sleep 60 & sleep 60"), "sleepers", false);
  ASSERT_TRUE(id);
  auto waited = table.Wait(*id, 100ms, {});
  ASSERT_TRUE(waited);
  EXPECT_TRUE(waited->running);
  const pid_t pid = waited->pid;
  auto killed = table.Kill(*id);
  ASSERT_TRUE(killed);
  EXPECT_FALSE(killed->running);
  EXPECT_TRUE(WaitUntil([&] { return ::kill(-pid, 0) != 0; }, 10s))
      << "a member of the group survived";
}

// The wait has an hour to go and the process half a minute: only the cancellation can end it
// within the 10 s this test waits for it.
TEST(ProcessTable, WaitReturnsEarlyOnCancellation) {
  ProcessTable table;
  auto id = table.Add(Start("sleep 30"), "sleep", false);
  ASSERT_TRUE(id);
  std::stop_source stop;
  std::optional<Result<ProcessSnapshot>> waited;
  std::atomic<bool> returned{false};
  std::jthread waiter([&] {
    waited.emplace(table.Wait(*id, 1h, stop.get_token()));
    returned = true;
  });
  stop.request_stop();
  const bool early = WaitUntil([&] { return returned.load(); }, 10s);
  if (!early) (void)table.Kill(*id);  // ends the wait, so the test fails instead of hanging
  waiter.join();
  ASSERT_TRUE(early) << "Wait did not return on cancellation";
  ASSERT_TRUE(*waited);
  EXPECT_TRUE((*waited)->running);
}

TEST(ProcessTable, WriteFeedsStdinAndCloseSendsEof) {
  ProcessTable table;
  auto id = table.Add(Start("while read -r line; do echo \"got:$line\"; done; echo bye", true),
                      "reader", false);
  ASSERT_TRUE(id);
  ASSERT_TRUE(table.Write(*id, "a\nb\n").ok());
  ASSERT_TRUE(table.CloseStdin(*id).ok());
  auto done = table.Wait(*id, 10s, {});
  ASSERT_TRUE(done);
  EXPECT_EQ(done->exit_code, 0);
  WaitUntil([&] { return table.Get(*id, true)->output.find("bye") != std::string::npos; }, 10s);
  EXPECT_EQ(table.Get(*id, true)->output, "got:a\ngot:b\nbye\n");
  EXPECT_FALSE(table.Write(*id, "late\n").ok());
}

TEST(ProcessTable, WriteToAProcessThatNeverReadsGivesUpWithAClearError) {
  ProcessTable table;
  auto id = table.Add(Start("sleep 60", true), "deaf", false);
  ASSERT_TRUE(id);
  // More than a pipe holds: the write must wait for room, then give up at its deadline.
  const Status written = table.Write(*id, std::string(1 << 20, 'x') + "\n");
  EXPECT_EQ(written.code(), StatusCode::kDeadlineExceeded) << written.message();
  EXPECT_EQ(written.message(), "the process is not reading its input");
  EXPECT_TRUE(table.Get(*id, false)->running);  // the write never hurt the process
  EXPECT_TRUE(table.Kill(*id));
}

// What the guard judges for the next write: the line earlier writes left unfinished.
TEST(ProcessTable, RemembersTheLineWritesLeaveUnfinished) {
  ProcessTable table;
  auto id = table.Add(Start("cat >/dev/null", true), "sink", false);
  ASSERT_TRUE(id);
  EXPECT_EQ(*table.UnfinishedInput(*id), "");
  ASSERT_TRUE(table.Write(*id, "r").ok());
  ASSERT_TRUE(table.Write(*id, "m -r").ok());
  EXPECT_EQ(*table.UnfinishedInput(*id), "rm -r");
  ASSERT_TRUE(table.Write(*id, "f x\necho ").ok());
  EXPECT_EQ(*table.UnfinishedInput(*id), "echo ");
  ASSERT_TRUE(table.Write(*id, "hi\n").ok());
  EXPECT_EQ(*table.UnfinishedInput(*id), "");
  // A line that never ends is refused before it grows without bound.
  const Status huge = table.Write(*id, std::string(70 << 10, 'y'));
  EXPECT_EQ(huge.code(), StatusCode::kInvalidArgument) << huge.message();
  EXPECT_EQ(*table.UnfinishedInput(*id), "");
  EXPECT_TRUE(table.Kill(*id));
}

TEST(ProcessTable, PtyProcessesSeeATerminal) {
  ProcessTable table;
  auto id = table.Add(Start("read -r x; [ -t 0 ] && echo \"tty:$x\"", false, true), "pty", true);
  ASSERT_TRUE(id);
  ASSERT_TRUE(table.Write(*id, "hi\n").ok());
  auto done = table.Wait(*id, 10s, {});
  ASSERT_TRUE(done);
  WaitUntil([&] { return table.Get(*id, true)->output.find("tty:hi") != std::string::npos; }, 10s);
  EXPECT_NE(table.Get(*id, true)->output.find("tty:hi"), std::string::npos)
      << table.Get(*id, true)->output;
}

TEST(ProcessTable, OutputWindowStaysBounded) {
  ProcessTable table({.max_output_bytes = 1000});
  auto id = table.Add(Start("head -c 5000000 /dev/zero | tr '\\0' y; echo; echo tail-end"),
                      "chatty", false);
  ASSERT_TRUE(id);
  ASSERT_TRUE(table.Wait(*id, 20s, {}));
  WaitUntil([&] { return table.Get(*id, true)->output.find("tail-end") != std::string::npos; },
            10s);
  auto snap = table.Get(*id, true);
  EXPECT_EQ(snap->output.size(), 1000u);
  EXPECT_EQ(snap->output.substr(snap->output.size() - 9), "tail-end\n");
  EXPECT_EQ(snap->output_total_bytes, 5'000'000u + 1 + 9);
}

TEST(ProcessTable, IdsResolveFromUniquePrefixesOfFourOrMore) {
  ProcessTable table;
  auto id = table.Add(Start("true"), "t", false);
  ASSERT_TRUE(id);
  const std::string hex = id->substr(5);
  EXPECT_EQ(*table.Resolve(hex.substr(0, 4)), *id);
  EXPECT_EQ(*table.Resolve("proc_" + hex.substr(0, 6)), *id);
  EXPECT_EQ(table.Resolve(hex.substr(0, 3)).error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(table.Resolve("ffffffffffff").error().code(), StatusCode::kNotFound);
}

// Polls TakeNotices until `count` notices came or 10 s passed.
std::vector<ProcessNotice> AwaitNotices(ProcessTable& table, size_t count) {
  std::vector<ProcessNotice> got;
  WaitUntil(
      [&] {
        for (auto& n : table.TakeNotices()) got.push_back(std::move(n));
        return got.size() >= count;
      },
      10s, 10ms);
  return got;
}

TEST(ProcessTable, LimitDropsTheOldestFinishedAndRefusesWhenAllRun) {
  ProcessTable table({.max_processes = 2});
  // Its slot is free once it exited and its output reached EOF; the completion notice is queued
  // right then, so it says when.
  auto first =
      table.Add(Start("true"), "first", false, {.notify_on_complete = true, .patterns = {}});
  ASSERT_TRUE(first);
  ASSERT_EQ(AwaitNotices(table, 1).size(), 1u) << "the first process never completed";
  auto second = table.Add(Start("sleep 30"), "second", false);
  auto third = table.Add(Start("sleep 30"), "third", false);
  ASSERT_TRUE(second);
  ASSERT_TRUE(third) << third.error().ToString();
  EXPECT_EQ(table.Get(*first, false).error().code(), StatusCode::kNotFound);
  auto fourth = table.Add(Start("sleep 30"), "fourth", false);
  ASSERT_FALSE(fourth);
  EXPECT_EQ(fourth.error().code(), StatusCode::kResourceExhausted);
}

TEST(ProcessTable, NotifyOnCompleteQueuesOneNoticeWithTheTail) {
  ProcessTable table({.notice_tail_bytes = 8});
  std::atomic<int> told{0};
  table.SetNoticeListener([&] { ++told; });
  auto id = table.Add(Start("echo start; echo 0123456789; exit 3"), "job", false,
                      {.notify_on_complete = true, .patterns = {}});
  ASSERT_TRUE(id);
  auto notices = AwaitNotices(table, 1);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].kind, ProcessNotice::Kind::kCompleted);
  EXPECT_EQ(notices[0].id, *id);
  EXPECT_EQ(notices[0].command, "job");
  EXPECT_EQ(notices[0].exit_code, 3);
  EXPECT_EQ(notices[0].output, "3456789\n");
  EXPECT_EQ(told.load(), 1);
  EXPECT_TRUE(table.TakeNotices().empty()) << "taken notices are gone";
}

TEST(ProcessTable, AKilledProcessSendsNoCompletionNotice) {
  ProcessTable table({.kill_grace = 300ms});
  auto id =
      table.Add(Start("sleep 30"), "sleeper", false, {.notify_on_complete = true, .patterns = {}});
  ASSERT_TRUE(id);
  ASSERT_TRUE(table.Kill(*id));
  // An absence: nothing says when a notice that should not exist would have come, so the test
  // gives it a moment (a wrongly queued notice comes within milliseconds of the exit).
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(table.TakeNotices().empty());
  auto plain = table.Add(Start("true"), "quiet", false);
  ASSERT_TRUE(plain);
  ASSERT_TRUE(table.Wait(*plain, 10s, {}));
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(table.TakeNotices().empty()) << "no notice was asked for";
}

TEST(ProcessTable, WatchPatternsReportMatchingLinesRateLimited) {
  ProcessTable table;
  auto id =
      table.Add(Start("echo booting; echo 'READY on :8080'; sleep 0.2; echo READY again; sleep 30"),
                "server", false, {.notify_on_complete = false, .patterns = {"READY"}});
  ASSERT_TRUE(id);
  auto notices = AwaitNotices(table, 1);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].kind, ProcessNotice::Kind::kMatched);
  EXPECT_EQ(notices[0].output, "READY on :8080");
  // The watch judges each chunk under the lock that appends it to the output: once the second
  // line is in the output, its notice would already be queued.
  ASSERT_TRUE(WaitUntil(
      [&] { return table.Get(*id, true)->output.find("READY again") != std::string::npos; }, 10s));
  EXPECT_TRUE(table.TakeNotices().empty()) << "a second match within 15 s is dropped";
  ASSERT_TRUE(table.Kill(*id));
}

TEST(ProcessTable, ANoisyWatchTurnsIntoACompletionNotice) {
  ProcessTable table({.watch_interval = std::chrono::seconds(15), .watch_max_strikes = 1});
  auto id = table.Add(Start("echo hit; sleep 0.2; echo hit; sleep 0.2; exit 0"), "noisy", false,
                      {.notify_on_complete = false, .patterns = {"hit"}});
  ASSERT_TRUE(id);
  auto notices = AwaitNotices(table, 3);
  ASSERT_EQ(notices.size(), 3u);
  EXPECT_EQ(notices[0].kind, ProcessNotice::Kind::kMatched);
  EXPECT_EQ(notices[1].kind, ProcessNotice::Kind::kWatchDisabled);
  EXPECT_EQ(notices[2].kind, ProcessNotice::Kind::kCompleted);
  EXPECT_EQ(notices[2].exit_code, 0);
}

TEST(ProcessTable, DestroyingTheTableEndsEveryGroup) {
  pid_t pid;
  {
    ProcessTable table;
    auto id = table.Add(Start("sleep 60 & sleep 60"), "bg", false);
    ASSERT_TRUE(id);
    pid = table.Get(*id, false)->pid;
  }
  EXPECT_TRUE(WaitUntil([&] { return ::kill(-pid, 0) != 0; }, 10s))
      << "a member of the group survived";
}

}  // namespace
}  // namespace talaria::env
