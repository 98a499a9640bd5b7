#include "talaria/base/file_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "support/file_text.h"
#include "support/temp_dir.h"

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
  Status s = WriteFileAtomic(target, "x", {.mode = 0600, .sync = false});  // rename over a non-empty dir
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

}  // namespace
}  // namespace talaria
