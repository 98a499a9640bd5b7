// The whole content of a file as bytes ("" when it cannot be read): what tests compare files by.
// Header-only: any test target that links talaria_test_support can include "support/file_text.h".
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace talaria::test_support {

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace talaria::test_support
