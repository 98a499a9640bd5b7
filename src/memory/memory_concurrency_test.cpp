// Writes are never lost: two real processes (this test binary re-run as a child) each add 500
// entries to one MEMORY.md at the same time; every entry must be there at the end. Without the
// lock and the re-read under it, the two would overwrite each other's additions (the original's
// last-writer-wins, #85858).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/self_spawn.h"
#include "support/temp_dir.h"
#include "talaria/memory/memory_store.h"

extern char** environ;

namespace talaria::memory {
namespace {

constexpr const char* kDirEnv = "TALARIA_MEMORY_CHILD_DIR";
constexpr const char* kWriterEnv = "TALARIA_MEMORY_CHILD_WRITER";
constexpr int kWrites = 500;
constexpr size_t kBigLimit = 1'000'000;

// The race is the point here, not the disk: on tmpfs an fsync costs nothing, so 2 x 500 writes
// take well under a second instead of ~15 s of fsyncs on a busy VM disk (the benchmark measures
// the durable write). Falls back to $TMPDIR when there is no /dev/shm.
std::string RaceDir() {
  struct stat st {};
  return ::stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && ::access("/dev/shm", W_OK) == 0
             ? "/dev/shm"
             : "";
}

std::string EntryName(const std::string& writer, int i) {
  return "writer " + writer + " entry " + std::to_string(i);
}

MemoryStore BigStore(const std::string& dir) {
  MemorySettings s;
  s.dir = dir;
  s.memory_char_limit = kBigLimit;
  return MemoryStore(s);
}

// The child: adds its entries one call at a time; exits 0 when all succeeded.
TEST(MemoryWriterChild, Writes) {
  const char* dir = std::getenv(kDirEnv);
  const char* writer = std::getenv(kWriterEnv);
  if (dir == nullptr || writer == nullptr) GTEST_SKIP() << "helper for the concurrency test";
  MemoryStore store = BigStore(dir);
  for (int i = 0; i < kWrites; ++i) {
    WriteOutcome o = store.Call(
        Json{{"target", "memory"}, {"action", "add"}, {"content", EntryName(writer, i)}});
    if (!o.ok) std::_Exit(3);
  }
  std::_Exit(0);
}

pid_t SpawnWriter(const std::string& dir, const std::string& writer) {
  return test_support::SpawnSelf(
      {.test = "MemoryWriterChild.Writes", .env = {{kDirEnv, dir}, {kWriterEnv, writer}}});
}

// Waits for `pid` until `deadline`; kills it past that. The exit status, or -1.
int WaitBounded(pid_t pid, std::chrono::steady_clock::time_point deadline) {
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

std::set<std::string> Expected(std::initializer_list<std::string> writers) {
  std::set<std::string> out;
  for (const std::string& w : writers) {
    for (int i = 0; i < kWrites; ++i) out.insert(EntryName(w, i));
  }
  return out;
}

TEST(MemoryConcurrency, TwoProcessesWritingAtOnceLoseNothing) {
  test_support::TempDir dir(RaceDir());
  const std::string memories = dir.path() + "/memories";
  const pid_t a = SpawnWriter(memories, "A");
  const pid_t b = SpawnWriter(memories, "B");
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  EXPECT_EQ(WaitBounded(a, deadline), 0);
  EXPECT_EQ(WaitBounded(b, deadline), 0);

  auto entries = BigStore(memories).Read(Target::kMemory);
  ASSERT_TRUE(entries) << entries.error().message();
  const std::set<std::string> got(entries->begin(), entries->end());
  EXPECT_EQ(entries->size(), 2u * kWrites) << "an entry was lost or duplicated";
  EXPECT_EQ(got, Expected({"A", "B"}));
  EXPECT_TRUE(BigStore(memories).Check(Target::kMemory).ok());
}

// Threads of one process each with their own store: flock on separate open file descriptions
// excludes them from each other too.
TEST(MemoryConcurrency, TwoThreadsWritingAtOnceLoseNothing) {
  test_support::TempDir dir(RaceDir());
  const std::string memories = dir.path() + "/memories";
  auto write = [&](const std::string& writer) {
    MemoryStore store = BigStore(memories);
    for (int i = 0; i < kWrites; ++i) {
      (void)store.Call(
          Json{{"target", "memory"}, {"action", "add"}, {"content", EntryName(writer, i)}});
    }
  };
  {
    std::jthread t1(write, "C");
    std::jthread t2(write, "D");
  }
  auto entries = BigStore(memories).Read(Target::kMemory);
  ASSERT_TRUE(entries);
  EXPECT_EQ(std::set<std::string>(entries->begin(), entries->end()), Expected({"C", "D"}));
  EXPECT_EQ(entries->size(), 2u * kWrites);
}

}  // namespace
}  // namespace talaria::memory
