// ConflictGate: calls that arrive one by one run together exactly when the batch planner would
// let them share a run; conflicting ones keep their arrival order; a stop ends a wait.
#include "talaria/core/conflict_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include "support/wait_until.h"

namespace talaria {
namespace {

using namespace std::chrono_literals;
using test_support::WaitUntil;

CallAdmission Scoped(std::string path, PathAccess access) {
  CallAdmission a;
  a.admission = Admission::kPathScoped;
  a.scopes.push_back(PathScope{std::move(path), access});
  return a;
}
CallAdmission Read(std::string path) { return Scoped(std::move(path), PathAccess::kRead); }
CallAdmission Write(std::string path) { return Scoped(std::move(path), PathAccess::kWrite); }
CallAdmission Safe() {
  CallAdmission a;
  a.admission = Admission::kSafe;
  return a;
}
CallAdmission Barrier() { return CallAdmission{}; }

// Enter only if the call may go in now: a stop token already fired makes Enter decide at once.
std::optional<ConflictGate::Pass> TryEnter(ConflictGate& gate, CallAdmission a) {
  std::stop_source stopped;
  stopped.request_stop();
  return gate.Enter(std::move(a), stopped.get_token());
}

TEST(ConflictGate, ReadersShareAndWritersOfOtherPathsGoStraightIn) {
  ConflictGate gate;
  auto r1 = TryEnter(gate, Read("/w/a.txt"));
  auto r2 = TryEnter(gate, Read("/w/a.txt"));
  ASSERT_TRUE(r1 && r2) << "two reads of one file run together";
  EXPECT_FALSE(TryEnter(gate, Write("/w/a.txt"))) << "a write waits for the reads of its file";
  EXPECT_FALSE(TryEnter(gate, Write("/w"))) << "a write of an enclosing directory too";
  auto w = TryEnter(gate, Write("/w/b.txt"));
  EXPECT_TRUE(w) << "a write of another file runs beside them";
  auto s = TryEnter(gate, Safe());
  EXPECT_TRUE(s) << "a safe call conflicts with no scoped call";
  EXPECT_EQ(gate.size(), 4u);
}

TEST(ConflictGate, ABarrierRunsAlone) {
  ConflictGate gate;
  {
    auto s = TryEnter(gate, Safe());
    ASSERT_TRUE(s);
    EXPECT_FALSE(TryEnter(gate, Barrier())) << "a barrier waits for every call ahead";
  }
  auto b = TryEnter(gate, Barrier());
  ASSERT_TRUE(b) << "alone, it goes in";
  EXPECT_FALSE(TryEnter(gate, Safe())) << "every call waits for a barrier ahead";
  EXPECT_FALSE(TryEnter(gate, Read("/x")));
  b->Leave();
  EXPECT_TRUE(TryEnter(gate, Read("/x")));
  EXPECT_EQ(gate.size(), 0u);
}

TEST(ConflictGate, AWaitingWriterIsNotStarvedByLaterReadersOfItsFile) {
  ConflictGate gate;
  auto r = TryEnter(gate, Read("/w/a.txt"));
  ASSERT_TRUE(r);
  std::atomic<bool> wrote{false};
  std::jthread writer([&] {
    auto w = gate.Enter(Write("/w/a.txt"), std::stop_token());
    ASSERT_TRUE(w);
    wrote = true;
  });
  ASSERT_TRUE(WaitUntil([&] { return gate.size() == 2; }, 10s));
  EXPECT_FALSE(TryEnter(gate, Read("/w/a.txt"))) << "a later read of the file queues behind it";
  EXPECT_TRUE(TryEnter(gate, Read("/w/other.txt"))) << "a read of another file does not";
  EXPECT_FALSE(wrote.load());
  r->Leave();
  EXPECT_TRUE(WaitUntil([&] { return wrote.load(); }, 10s))
      << "the writer goes in once the read ends";
}

TEST(ConflictGate, AStopEndsTheWaitAndFreesThoseBehind) {
  ConflictGate gate;
  auto running = TryEnter(gate, Write("/w/a.txt"));
  ASSERT_TRUE(running);
  std::stop_source stop;
  std::atomic<int> outcome{0};  // 0: waiting, 1: entered, 2: gave up
  std::jthread waiter([&] { outcome = gate.Enter(Write("/w/a.txt"), stop.get_token()) ? 1 : 2; });
  ASSERT_TRUE(WaitUntil([&] { return gate.size() == 2; }, 10s));
  EXPECT_FALSE(TryEnter(gate, Read("/w/a.txt")));
  stop.request_stop();
  ASSERT_TRUE(WaitUntil([&] { return outcome.load() != 0; }, 10s));
  EXPECT_EQ(outcome.load(), 2) << "stopped before the gate let it in: it holds nothing";
  EXPECT_EQ(gate.size(), 1u);
  running->Leave();
  EXPECT_TRUE(TryEnter(gate, Read("/w/a.txt")));
}

}  // namespace
}  // namespace talaria
