// Test-only helpers for the safety module's tests: fresh temp directories and small file
// utilities on the real file system. Not thread-safe; caller synchronises.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/file_text.h"
#include "support/temp_dir.h"

namespace talaria::safety::testing {

using test_support::TempDir;  // a fresh directory under $TMPDIR (or /tmp, or `base`)

inline void WriteFile(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

inline std::string ReadFile(const std::string& path) { return test_support::ReadWholeFile(path); }

// A tmpfs directory (fsync is nearly free there) when one is usable, else "" ($TMPDIR).
inline std::string FastTempBase() {
  return ::access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "";
}

inline bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// Names in `dir` (non-recursive), sorted.
inline std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace talaria::safety::testing
