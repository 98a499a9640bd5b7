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

namespace talaria::safety::testing {

// A fresh directory under $TMPDIR (or /tmp, or `base`), removed recursively on destruction.
class TempDir {
 public:
  // `base` empty = $TMPDIR or /tmp.
  explicit TempDir(std::string base = "") {
    if (base.empty()) {
      const char* t = std::getenv("TMPDIR");
      base = t != nullptr && *t != '\0' ? t : "/tmp";
    }
    std::string tmpl = base + "/talaria_safety_XXXXXX";
    char* p = ::mkdtemp(tmpl.data());
    if (p == nullptr) std::abort();
    // Canonical, so tests can compare real paths.
    path_ = std::filesystem::canonical(p).string();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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
