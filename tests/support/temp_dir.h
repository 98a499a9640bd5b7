// A fresh directory for one test, removed with everything in it. Its path is the real path
// (the temp directory itself may sit behind a symlink), so tests can compare canonical paths.
// Header-only: any test target that links talaria_test_support can include "support/temp_dir.h".
// Not thread-safe; caller synchronises.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace talaria::test_support {

class TempDir {
 public:
  // Under `base`, or $TMPDIR, or /tmp. Aborts when no directory can be made: nothing a test
  // could check would mean anything then.
  explicit TempDir(std::string base = "") {
    if (base.empty()) {
      const char* t = std::getenv("TMPDIR");
      base = t != nullptr && *t != '\0' ? t : "/tmp";
    }
    std::string tmpl = base + "/talaria-test-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = std::filesystem::canonical(tmpl).string();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(std::string_view rel) const {
    std::string out = path_;
    out += '/';
    out += rel;
    return out;
  }

 private:
  std::string path_;
};

}  // namespace talaria::test_support
