#include "talaria/base/file_io.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "support/file_text.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace talaria {
namespace {

using test_support::ReadWholeFile;

size_t EntriesIn(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(WriteFileAtomic, ReplacesTheFileWholeWithTheRequestedMode) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/store.json";
  std::ofstream(path) << "old content that is longer than the new one\n";
  ASSERT_TRUE(WriteFileAtomic(path, "new\n", {.mode = 0640, .sync = true}).ok());
  EXPECT_EQ(ReadWholeFile(path), "new\n");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(EntriesIn(dir.path()), 1u) << "no temp file left behind";
}

TEST(WriteFileAtomic, ReplacesAPlantedLinkInsteadOfWritingThroughIt) {
  test_support::TempDir dir;
  const std::string victim = dir.path() + "/victim";
  std::ofstream(victim) << "precious\n";
  const std::string path = dir.path() + "/trust.json";
  ASSERT_EQ(::symlink(victim.c_str(), path.c_str()), 0);
  ASSERT_TRUE(WriteFileAtomic(path, "{}\n").ok());
  EXPECT_EQ(ReadWholeFile(victim), "precious\n");
  EXPECT_FALSE(std::filesystem::is_symlink(path));
  EXPECT_EQ(ReadWholeFile(path), "{}\n");
}

TEST(WriteFileAtomic, AFailureLeavesTheOldFileAndNoTempFile) {
  test_support::TempDir dir;
  const std::string target = dir.path() + "/a-directory";
  std::filesystem::create_directories(target + "/inside");
  Status s =
      WriteFileAtomic(target, "x", {.mode = 0600, .sync = false});  // rename over a non-empty dir
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(target), std::string::npos) << s.message();
  EXPECT_TRUE(std::filesystem::is_directory(target + "/inside"));
  EXPECT_EQ(EntriesIn(dir.path()), 1u);
  EXPECT_FALSE(WriteFileAtomic(dir.path() + "/missing/dir/file", "x").ok());
}

TEST(WriteAll, WritesEveryByteThroughAPipeInPieces) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string data(1 << 20, 'q');  // more than a pipe holds: needs a reader meanwhile
  std::string got;
  std::thread reader([&] {
    char buf[65536];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  });
  EXPECT_TRUE(WriteAll(fds[1], data).ok());
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  EXPECT_EQ(got, data);
}

// A pipe whose write end does not block: a full pipe is EAGAIN, which WriteAllUntil waits out.
struct NonBlockingPipe {
  int read_end = -1;
  int write_end = -1;
  NonBlockingPipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    read_end = fds[0];
    write_end = fds[1];
    ::fcntl(write_end, F_SETFL, O_NONBLOCK);
  }
  ~NonBlockingPipe() {
    if (read_end >= 0) ::close(read_end);
    if (write_end >= 0) ::close(write_end);
  }
};

TEST(WriteAllUntil, WaitsForRoomWhileTheReaderIsSlow) {
  NonBlockingPipe pipe;
  ASSERT_GE(pipe.write_end, 0);
  const std::string data(1 << 20, 'q');
  std::string got;
  std::thread reader([&] {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(pipe.read_end, buf, sizeof buf)) > 0)
      got.append(buf, static_cast<size_t>(n));
  });
  WriteWait wait;
  wait.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  EXPECT_TRUE(WriteAllUntil(pipe.write_end, data, wait).ok());
  ::close(pipe.write_end);
  pipe.write_end = -1;
  reader.join();
  EXPECT_EQ(got, data);
}

TEST(WriteAllUntil, GivesUpAtTheDeadlineWhenNobodyReads) {
  NonBlockingPipe pipe;
  ASSERT_GE(pipe.write_end, 0);
  WriteWait wait;
  wait.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  const Status status = WriteAllUntil(pipe.write_end, std::string(1 << 20, 'q'), wait);
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded) << status.message();
  EXPECT_GE(std::chrono::steady_clock::now(), wait.deadline);
}

TEST(WriteAllUntil, AStopRequestEndsTheWaitBeforeTheDeadline) {
  NonBlockingPipe pipe;
  ASSERT_GE(pipe.write_end, 0);
  std::stop_source stop;
  WriteWait wait;
  wait.deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  wait.stop = stop.get_token();
  wait.slice = std::chrono::milliseconds(20);
  // Stops once the pipe is full, that is once the write waits for room.
  const int capacity = ::fcntl(pipe.write_end, F_GETPIPE_SZ);
  ASSERT_GT(capacity, 0);
  std::thread stopper([&] {
    test_support::WaitUntil(
        [&] {
          int queued = 0;
          return ::ioctl(pipe.read_end, FIONREAD, &queued) == 0 && queued >= capacity;
        },
        std::chrono::seconds(10));
    stop.request_stop();
  });
  const Status status = WriteAllUntil(pipe.write_end, std::string(1 << 20, 'q'), wait);
  stopper.join();
  EXPECT_EQ(status.code(), StatusCode::kCancelled) << status.message();
}

TEST(WriteAllUntil, AClosedSocketPeerIsAnErrorNotSigpipe) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  ::close(fds[1]);
  WriteWait wait;
  wait.socket = true;
  const Status status = WriteAllUntil(fds[0], "to nobody", wait);  // SIGPIPE would end the test
  ::close(fds[0]);
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("Broken pipe"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace talaria
