// Write-side tests of the Workspace: atomic replacement, crash safety (a child process killed
// at random points), the directory-swap race, Rename/Remove and LockPaths.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "support/safety_test_util.h"
#include "support/wait_until.h"
#include "talaria/confinement/workspace.h"

extern char** environ;

namespace talaria::safety {
namespace {

using testing::Exists;
using testing::ListDir;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

std::shared_ptr<Workspace> OpenWs(const std::string& root,
                                  Durability durability = Durability::kFsync) {
  WorkspaceOptions o;
  o.roots = {root};
  o.home = root + "/.no_home";
  o.talaria_home = root + "/.no_talaria_home";
  o.durability = durability;
  auto ws = Workspace::Open(o);
  EXPECT_TRUE(ws) << ws.error().ToString();
  return ws ? *ws : nullptr;
}

bool HasTempFiles(const std::string& dir) {
  for (const std::string& name : ListDir(dir)) {
    if (name.find(".talaria-tmp-") != std::string::npos) return true;
  }
  return false;
}

mode_t CurrentUmask() {
  mode_t m = ::umask(022);
  ::umask(m);
  return m;
}

TEST(WorkspaceWrite, CreatesParentsAndFile) {
  TempDir tmp;
  auto ws = OpenWs(tmp.path());
  auto r = ws->WriteAtomic("a/b/c.txt", "hello");
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->bytes_written, 5u);
  EXPECT_TRUE(r->created);
  EXPECT_EQ(r->resolved_path, tmp / "a/b/c.txt");
  EXPECT_EQ(r->dirs_created, (std::vector<std::string>{tmp / "a", tmp / "a/b"}));
  EXPECT_EQ(r->after.size, 5u);
  EXPECT_EQ(ReadFile(tmp / "a/b/c.txt"), "hello");
  EXPECT_EQ(r->after.mode & 07777, 0644 & ~CurrentUmask());
  EXPECT_FALSE(HasTempFiles(tmp / "a/b"));
  // Second write into the same place creates nothing.
  auto again = ws->WriteAtomic("a/b/d.txt", "x");
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->dirs_created.empty());
}

TEST(WorkspaceWrite, ReplacesContentKeepsModeLeavesNoTemp) {
  TempDir tmp;
  WriteFile(tmp / "f.sh", "old old old old\n");
  ASSERT_EQ(::chmod((tmp / "f.sh").c_str(), 0751), 0);
  struct stat before {};
  ASSERT_EQ(::stat((tmp / "f.sh").c_str(), &before), 0);
  auto ws = OpenWs(tmp.path());
  auto r = ws->WriteAtomic("f.sh", "new");
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_FALSE(r->created);
  struct stat after {};
  ASSERT_EQ(::stat((tmp / "f.sh").c_str(), &after), 0);
  EXPECT_EQ(after.st_mode & 07777, 0751u);
  EXPECT_NE(after.st_ino, before.st_ino);  // replaced by rename, not rewritten in place
  EXPECT_EQ(r->after.ino, after.st_ino);
  EXPECT_EQ(ReadFile(tmp / "f.sh"), "new");
  EXPECT_EQ(ListDir(tmp.path()), std::vector<std::string>{"f.sh"});
}

TEST(WorkspaceWrite, ModeForNewFile) {
  TempDir tmp;
  auto ws = OpenWs(tmp.path());
  auto r = ws->WriteAtomic("secret.txt", "s", mode_t{0600});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->after.mode & 07777, 0600u);
  auto empty = ws->WriteAtomic("empty.txt", "");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->after.size, 0u);
  EXPECT_TRUE(Exists(tmp / "empty.txt"));
}

TEST(WorkspaceWrite, FailedWriteLeavesNoTemp) {
  TempDir tmp;
  std::filesystem::create_directories(tmp / "d/target_is_dir");
  auto ws = OpenWs(tmp.path());
  EXPECT_FALSE(ws->WriteAtomic("d/target_is_dir", "x"));
  EXPECT_EQ(ListDir(tmp / "d"), std::vector<std::string>{"target_is_dir"});
}

TEST(WorkspaceWrite, CheckWritableCreatesNothing) {
  TempDir tmp;
  auto ws = OpenWs(tmp.path());
  EXPECT_TRUE(ws->CheckWritable("x/y/z.txt").ok());
  EXPECT_TRUE(ListDir(tmp.path()).empty());
  std::filesystem::create_directories(tmp / "d");
  EXPECT_EQ(ws->CheckWritable("d").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ws->CheckWritable("../x").code(), StatusCode::kPermissionDenied);
}

TEST(WorkspaceWrite, RenameRefusesExistingDestination) {
  TempDir tmp;
  WriteFile(tmp / "a.txt", "a");
  WriteFile(tmp / "b.txt", "b");
  auto ws = OpenWs(tmp.path());
  EXPECT_EQ(ws->Rename("a.txt", "b.txt").code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(ReadFile(tmp / "a.txt"), "a");
  EXPECT_EQ(ReadFile(tmp / "b.txt"), "b");
  ASSERT_TRUE(ws->Rename("a.txt", "moved/deep/a.txt").ok());
  EXPECT_FALSE(Exists(tmp / "a.txt"));
  EXPECT_EQ(ReadFile(tmp / "moved/deep/a.txt"), "a");
  EXPECT_EQ(ws->Rename("missing", "x").code(), StatusCode::kNotFound);
  EXPECT_EQ(ws->Rename("moved", "moved2").code(), StatusCode::kInvalidArgument);  // a directory
  EXPECT_EQ(ws->Rename("b.txt", "../escaped").code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(Exists(tmp / "b.txt"));
}

TEST(WorkspaceWrite, RemoveFilesAndLinksOnly) {
  TempDir tmp;
  WriteFile(tmp / "ws/a.txt", "a");
  WriteFile(tmp / "outside/keep", "k");
  std::filesystem::create_directories(tmp / "ws/dir");
  ASSERT_EQ(::symlink((tmp / "outside/keep").c_str(), (tmp / "ws/link").c_str()), 0);
  auto ws = OpenWs(tmp / "ws");
  ASSERT_TRUE(ws->Remove("a.txt").ok());
  EXPECT_FALSE(Exists(tmp / "ws/a.txt"));
  EXPECT_EQ(ws->Remove("a.txt").code(), StatusCode::kNotFound);
  EXPECT_EQ(ws->Remove("dir").code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(ws->Remove("link").ok());  // the link itself, never its target
  EXPECT_EQ(ReadFile(tmp / "outside/keep"), "k");
  EXPECT_EQ(ws->Remove(tmp / "outside/keep").code(), StatusCode::kPermissionDenied);
}

// ---------------------------------------------------------------------------------------------
// Crash safety: a child process (this test binary, re-executed with a filter and an env var)
// rewrites one large file in a loop through WriteAtomic and is SIGKILLed at a random moment.
// Whatever the moment, the file must hold one complete version.

constexpr size_t kCrashFileSize = 256u << 10;
constexpr const char* kCrashEnv = "TALARIA_WS_CRASH_CHILD_DIR";
constexpr int kCrashSignalFd = 3;  // the child reports each completed write here
constexpr int kCrashGoFd = 4;      // the child starts writing when a byte arrives here

// Every version is one repeated letter; 'A' is the parent's initial content.
bool IsCompleteVersion(const std::string& content) {
  if (content.size() != kCrashFileSize) return false;
  return content.find_first_not_of(content[0]) == std::string::npos;
}

// Reads one byte from `fd` within `timeout`; false on timeout/EOF.
bool ReadByte(int fd, std::chrono::milliseconds timeout) {
  struct pollfd p {
    fd, POLLIN, 0
  };
  if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return false;
  char c;
  return ::read(fd, &c, 1) == 1;
}

// The child: once a byte arrives on fd 4, rewrites big.bin forever (alternating 'B' and 'C'
// versions) and reports each completed write with one byte on fd 3 (stdout carries gtest's own
// output).
TEST(WorkspaceCrashChild, WriterLoop) {
  const char* dir = std::getenv(kCrashEnv);
  if (dir == nullptr) GTEST_SKIP() << "helper for WorkspaceCrash.KilledWriterLeavesOldOrNew";
  auto ws = OpenWs(dir);
  ASSERT_TRUE(ws);
  const std::string b(kCrashFileSize, 'B'), c(kCrashFileSize, 'C');
  char go;
  if (::read(kCrashGoFd, &go, 1) != 1) std::_Exit(5);
  for (uint64_t i = 0;; ++i) {
    auto r = ws->WriteAtomic("big.bin", (i % 2 == 0) ? b : c);
    if (!r) {
      std::fprintf(stderr, "write failed: %s\n", r.error().ToString().c_str());
      std::_Exit(3);
    }
    if (::write(kCrashSignalFd, "w", 1) != 1) std::_Exit(4);
  }
}

class CrashChild {
 public:
  // Spawns this test binary running only WorkspaceCrashChild.WriterLoop on `dir`, its fd 3
  // on a pipe.
  static CrashChild Spawn(const std::string& dir) {
    CrashChild c;
    char exe[4096];
    ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) return c;
    exe[n] = '\0';
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
    env_strings.push_back(std::string(kCrashEnv) + "=" + dir);
    std::vector<char*> envp;
    for (std::string& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string filter = "--gtest_filter=WorkspaceCrashChild.WriterLoop";
    char* argv[] = {exe, filter.data(), nullptr};
    int out[2], go[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return c;
    if (::pipe2(go, O_CLOEXEC) != 0) return c;
    // Keep the ends the child needs above fds 3 and 4, so one dup2 cannot clobber the other.
    for (int* fd : {&out[1], &go[0]}) {
      int high = ::fcntl(*fd, F_DUPFD_CLOEXEC, 10);
      ::close(*fd);
      *fd = high;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], kCrashSignalFd);
    posix_spawn_file_actions_adddup2(&fa, go[0], kCrashGoFd);
    if (::posix_spawn(&c.pid, exe, &fa, nullptr, argv, envp.data()) != 0) c.pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    ::close(go[0]);
    c.out.reset(out[0]);
    c.go.reset(go[1]);
    return c;
  }
  // SIGKILL and reap; returns the wait status.
  int Kill() {
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    pid = -1;
    return status;
  }
  CrashChild() = default;
  CrashChild(CrashChild&& o) noexcept
      : pid(std::exchange(o.pid, -1)), out(std::move(o.out)), go(std::move(o.go)) {}
  CrashChild& operator=(CrashChild&& o) noexcept {
    if (this != &o) {
      if (pid > 0) Kill();
      pid = std::exchange(o.pid, -1);
      out = std::move(o.out);
      go = std::move(o.go);
    }
    return *this;
  }
  ~CrashChild() {
    if (pid > 0) Kill();
  }
  // Lets the child start writing. MSG_NOSIGNAL is not available for pipes, so a dead child
  // would raise SIGPIPE; the child only dies when we kill it, after Go.
  bool Go() { return ::write(go.get(), "g", 1) == 1; }
  pid_t pid = -1;
  UniqueFd out;
  UniqueFd go;
};

TEST(WorkspaceCrash, KilledWriterLeavesOldOrNew) {
  // On tmpfs when possible: durable writes cost ~30 ms each on this kind of disk, and a
  // process kill (unlike a power cut) does not depend on the device.
  TempDir tmp(testing::FastTempBase());
  std::chrono::microseconds per_write{0};
  // Calibrate: how long one durable WriteAtomic of this size takes here (best of 5).
  {
    WriteFile(tmp / "calibrate/big.bin", "");
    auto ws = OpenWs(tmp / "calibrate");
    const std::string a(kCrashFileSize, 'A');
    per_write = std::chrono::seconds(1);
    for (int i = 0; i < 5; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      ASSERT_TRUE(ws->WriteAtomic("big.bin", a));
      per_write = std::min(per_write, std::chrono::duration_cast<std::chrono::microseconds>(
                                          std::chrono::steady_clock::now() - t0));
    }
  }

  // 50 kills. Process start-up dominates on a loaded machine, so all children are spawned up
  // front (from several threads) and wait on their go pipe; then, one at a time, a child is
  // released, and once it reports a completed write it is SIGKILLed after a random delay of up
  // to three write durations (at most 5 ms), so kills land in every phase (temp creation,
  // write, fsync, rename, directory fsync). Children are reaped before any file is checked.
  constexpr int kChildren = 50, kSpawners = 5;
  std::vector<std::string> dirs;
  for (int k = 0; k < kChildren; ++k) {
    dirs.push_back(tmp / ("c" + std::to_string(k)));
    WriteFile(dirs.back() + "/big.bin", std::string(kCrashFileSize, 'A'));
  }
  std::vector<CrashChild> children(kChildren);
  {
    std::vector<std::jthread> spawners;
    for (int t = 0; t < kSpawners; ++t) {
      spawners.emplace_back([&, t] {
        for (int k = t; k < kChildren; k += kSpawners) {
          children[static_cast<size_t>(k)] = CrashChild::Spawn(dirs[static_cast<size_t>(k)]);
        }
      });
    }
  }
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int64_t> delay_us(
      0, std::min<int64_t>(per_write.count() * 3 + 1, 5000));
  for (CrashChild& child : children) {
    ASSERT_GT(child.pid, 0);
    ASSERT_TRUE(child.Go());
    // Generous: a child under a loaded sanitizer run starts slowly.
    ASSERT_TRUE(ReadByte(child.out.get(), std::chrono::seconds(60))) << "child never wrote";
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    ASSERT_EQ(::kill(child.pid, SIGKILL), 0);
  }
  std::set<char> versions;
  int leftover_temps = 0;
  for (size_t k = 0; k < children.size(); ++k) {
    int status = children[k].Kill();  // already killed: this reaps
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited on its own with status " << status;
    const std::string content = ReadFile(dirs[k] + "/big.bin");
    ASSERT_TRUE(IsCompleteVersion(content))
        << dirs[k] << ": torn file of " << content.size() << " bytes";
    versions.insert(content[0]);
    // Killed writers may leave hidden temp files beside the target; never anything else.
    for (const std::string& name : ListDir(dirs[k])) {
      if (name == "big.bin") continue;
      EXPECT_EQ(name.find(".big.bin.talaria-tmp-"), 0u) << name;
      ++leftover_temps;
    }
  }
  EXPECT_EQ(versions.count('A'), 0u);  // every child completed at least one write
  EXPECT_EQ(versions.size(), 2u) << "kills did not land at varied points";
  std::printf("[crash] one write takes %lld us; %d of 50 kills left a temp file (mid-write)\n",
              static_cast<long long>(per_write.count()), leftover_temps);
}

// ---------------------------------------------------------------------------------------------
// The swap race: a second thread keeps replacing a directory inside the root with a symlink to
// an outside directory while the main thread writes into that directory. Nothing may land
// outside.

TEST(WorkspaceRace, DirectorySwappedForSymlinkNeverEscapes) {
  TempDir tmp;
  const std::string root = tmp / "ws";
  const std::string outside = tmp / "outside";
  std::filesystem::create_directories(root + "/d");
  std::filesystem::create_directories(outside);
  // Durability::kNone: fsync costs ~10 ms here and is irrelevant to containment.
  auto ws = OpenWs(root, Durability::kNone);
  ASSERT_TRUE(ws);
  int root_fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(root_fd, 0);
  UniqueFd root_guard(root_fd);
  // A ready-made absolute symlink for the RENAME_EXCHANGE variant (no window without "d").
  ASSERT_EQ(::symlinkat(outside.c_str(), root_fd, "d_link"), 0);

  std::atomic<uint64_t> swaps{0};
  std::jthread swapper([&](std::stop_token stop) {
    // Hold each state for a random 0-40 us (busy, so the scheduler does not park us for a
    // whole time slice), so writes meet every phase of the swap.
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> hold_us(0, 40), hold_dir_us(0, 300);
    auto hold = [&](bool is_dir = false) {
      const auto until = std::chrono::steady_clock::now() +
                         std::chrono::microseconds(is_dir ? hold_dir_us(rng) : hold_us(rng));
      while (std::chrono::steady_clock::now() < until) {
      }
    };
    uint64_t n = 0;
    while (!stop.stop_requested()) {
      if (n % 2 == 0) {
        // As described in the issue: move the directory aside, put a symlink in, move it back.
        (void)::renameat(root_fd, "d", root_fd, "d_aside");
        (void)::symlinkat("../outside", root_fd, "d");
        hold();
        if (::unlinkat(root_fd, "d", 0) != 0 && errno == EISDIR) {
          // The writer re-created "d" while it was missing; park that one inside the root.
          (void)::renameat(root_fd, "d", root_fd, ("d_recreated_" + std::to_string(n)).c_str());
        }
        (void)::renameat(root_fd, "d_aside", root_fd, "d");
      } else {
        // Atomic exchange: "d" is always present, alternately a directory and a symlink.
        (void)::renameat2(root_fd, "d", root_fd, "d_link", RENAME_EXCHANGE);
        hold();
        (void)::renameat2(root_fd, "d", root_fd, "d_link", RENAME_EXCHANGE);
      }
      hold(/*is_dir=*/true);
      ++n;
      swaps.store(n, std::memory_order_relaxed);
    }
  });

  int ok = 0, refused = 0;
  std::map<std::string, int> kinds;
  const auto start = std::chrono::steady_clock::now();
  // At least 10,000 writes; continue (bounded) until a swap has also been caught between a
  // write and its rename and the swapper has swapped 100 times: on a loaded machine the
  // swapper thread may get little of the CPU while the writes run.
  for (int i = 0;
       i < 10000 ||
       ((kinds["swapped-before-rename"] == 0 || swaps.load(std::memory_order_relaxed) <= 100) &&
        std::chrono::steady_clock::now() - start < std::chrono::seconds(15));
       ++i) {
    const std::string p = (i % 4 == 3) ? "d/n" + std::to_string(i % 16) + "/f.txt"
                                       : "d/f" + std::to_string(i % 8) + ".txt";
    auto r = ws->WriteAtomic(p, "payload " + std::to_string(i));
    if (r) {
      ++ok;
    } else {
      ++refused;
      const std::string& m = r.error().message();
      ++kinds[m.find("was replaced") != std::string::npos            ? "swapped-before-rename"
              : m.find("outside the workspace") != std::string::npos ? "symlink-refused"
              : r.error().code() == StatusCode::kNotFound            ? "vanished"
                                                                     : m];
      ASSERT_NE(r.error().code(), StatusCode::kInternal) << r.error().ToString();
    }
    if ((i & 255) == 0) {
      ASSERT_TRUE(ListDir(outside).empty()) << "write " << i << " escaped";
    }
  }
  swapper.request_stop();
  swapper.join();
  const auto elapsed = std::chrono::steady_clock::now() - start;

  EXPECT_TRUE(ListDir(outside).empty());
  // The tree outside the root is exactly as created.
  EXPECT_EQ(ListDir(tmp.path()), (std::vector<std::string>{"outside", "ws"}));
  EXPECT_GT(ok, 0);
  EXPECT_GT(refused, 0) << "the race never hit; the test proves nothing";
  EXPECT_GT(swaps.load(), 100u);
  std::printf("[race] %d written, %d refused, %llu swaps, %.2f s;", ok, refused,
              static_cast<unsigned long long>(swaps.load()),
              std::chrono::duration<double>(elapsed).count());
  for (const auto& [kind, count] : kinds) std::printf(" %s=%d", kind.c_str(), count);
  std::printf("\n");
  // The check that matters most must have been exercised: a swap caught between the write
  // and the rename.
  EXPECT_GT(kinds["swapped-before-rename"], 0);
}

// ---------------------------------------------------------------------------------------------
// The same swaps, placed deterministically at the worst moment (after the temp file is written,
// before the rename) through the testing seam.

std::shared_ptr<Workspace> OpenWithHook(const std::string& root,
                                        std::function<void(std::string_view)> hook) {
  WorkspaceOptions o;
  o.roots = {root};
  o.home = root + "/.no_home";
  o.talaria_home = root + "/.no_talaria_home";
  o.before_commit_for_testing = std::move(hook);
  auto ws = Workspace::Open(o);
  EXPECT_TRUE(ws) << ws.error().ToString();
  return ws ? *ws : nullptr;
}

TEST(WorkspaceSwap, DirectoryReplacedBySymlinkBeforeCommitIsRefused) {
  TempDir tmp;
  const std::string root = tmp / "ws";
  std::filesystem::create_directories(root + "/d");
  std::filesystem::create_directories(tmp / "outside");
  WriteFile(root + "/d/f.txt", "old");
  auto ws = OpenWithHook(root, [&](std::string_view) {
    ASSERT_EQ(::rename((root + "/d").c_str(), (root + "/d_aside").c_str()), 0);
    ASSERT_EQ(::symlink("../outside", (root + "/d").c_str()), 0);
  });
  auto r = ws->WriteAtomic("d/f.txt", "new");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(r.error().message().find("replaced during the operation"), std::string::npos);
  EXPECT_EQ(r.error().message().find(root), std::string::npos);
  EXPECT_TRUE(ListDir(tmp / "outside").empty());
  // The held directory (now moved aside) has the old file and no temp file.
  EXPECT_EQ(ListDir(root + "/d_aside"), std::vector<std::string>{"f.txt"});
  EXPECT_EQ(ReadFile(root + "/d_aside/f.txt"), "old");
}

TEST(WorkspaceSwap, DirectoryReplacedByAnotherDirectoryBeforeCommitIsRefused) {
  TempDir tmp;
  std::filesystem::create_directories(tmp / "d");
  std::filesystem::create_directories(tmp / "other");
  auto ws = OpenWithHook(tmp.path(), [&](std::string_view) {
    ASSERT_EQ(::renameat2(AT_FDCWD, (tmp / "d").c_str(), AT_FDCWD, (tmp / "other").c_str(),
                          RENAME_EXCHANGE),
              0);
  });
  EXPECT_EQ(ws->WriteAtomic("d/new/f.txt", "x").error().code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(ListDir(tmp / "d").empty());
  EXPECT_EQ(ListDir(tmp / "other"), std::vector<std::string>{"new"});  // created, then held
  EXPECT_TRUE(ListDir(tmp / "other/new").empty());                     // but nothing written
}

TEST(WorkspaceSwap, LeafReplacedBySymlinkBeforeCommitIsReplacedNotFollowed) {
  TempDir tmp;
  const std::string root = tmp / "ws";
  std::filesystem::create_directories(root);
  WriteFile(tmp / "outside/secret", "secret");
  auto ws = OpenWithHook(root, [&](std::string_view) {
    ASSERT_EQ(::symlink((tmp / "outside/secret").c_str(), (root + "/x.txt").c_str()), 0);
  });
  auto r = ws->WriteAtomic("x.txt", "mine");
  ASSERT_TRUE(r) << r.error().ToString();
  struct stat st {};
  ASSERT_EQ(::lstat((root + "/x.txt").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(ReadFile(root + "/x.txt"), "mine");
  EXPECT_EQ(ReadFile(tmp / "outside/secret"), "secret");
}

// ---------------------------------------------------------------------------------------------
// LockPaths

TEST(WorkspaceLocks, OppositeOrdersNeverDeadlock) {
  TempDir tmp;
  auto ws = OpenWs(tmp.path());
  int shared_a = 0, shared_b = 0;  // protected by the path locks only
  auto worker = [&](std::vector<std::string> paths) {
    for (int i = 0; i < 20000; ++i) {
      PathLock lock = ws->LockPaths(paths);
      ++shared_a;
      ++shared_b;
    }
  };
  auto done = std::async(std::launch::async, [&] {
    std::jthread t1(worker, std::vector<std::string>{"a.txt", "b.txt"});
    std::jthread t2(worker, std::vector<std::string>{"b.txt", "a.txt"});
    std::jthread t3(worker, std::vector<std::string>{tmp / "b.txt", "./a.txt", "a.txt"});
  });
  if (done.wait_for(std::chrono::seconds(15)) != std::future_status::ready) {
    std::fprintf(stderr, "LockPaths deadlocked\n");
    std::abort();
  }
  EXPECT_EQ(shared_a, 60000);
  EXPECT_EQ(shared_b, 60000);
}

TEST(WorkspaceLocks, KeysAreResolvedSortedAndUnique) {
  TempDir tmp;
  auto ws = OpenWs(tmp.path());
  PathLock lock = ws->LockPaths({"b", "a", tmp / "a", "sub/../b"});
  EXPECT_EQ(lock.keys(), (std::vector<std::string>{tmp / "a", tmp / "b"}));
  // Disjoint paths do not block each other; the same path does until released.
  std::atomic<bool> got{false};
  std::atomic<pid_t> other_tid{0};
  std::jthread other([&] {
    other_tid = ::gettid();
    PathLock l2 = ws->LockPaths({"c"});
    PathLock l3 = ws->LockPaths({"a"});
    got = true;
  });
  // Until it either took "a" (wrongly) or sleeps waiting for it.
  test_support::WaitUntil(
      [&] { return got || (other_tid != 0 && test_support::ThreadAsleep(other_tid)); },
      std::chrono::seconds(10));
  EXPECT_FALSE(got.load());
  PathLock moved = std::move(lock);
  moved.Unlock();
  other.join();
  EXPECT_TRUE(got.load());
}

}  // namespace
}  // namespace talaria::safety
