// Test helper shared by the browser tests: reading refs back out of a snapshot's text.
#pragma once

#include <istream>
#include <regex>
#include <sstream>
#include <string>

namespace talaria::browser::test_util {

// The ref (e3, or f1e3 inside a frame) on the first snapshot line containing `needle`, or "".
inline std::string SnapshotRefOf(const std::string& snapshot, const std::string& needle) {
  std::istringstream lines(snapshot);
  static const std::regex kRef(R"(\[ref=((?:f[0-9]+)?e[0-9]+)\])");
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (line.find(needle) != std::string::npos && std::regex_search(line, m, kRef)) return m[1];
  }
  return "";
}

// The same ref as the tools take it ("@e3"), or "".
inline std::string SnapshotToolRefOf(const std::string& snapshot, const std::string& needle) {
  const std::string ref = SnapshotRefOf(snapshot, needle);
  return ref.empty() ? ref : "@" + ref;
}

}  // namespace talaria::browser::test_util
