// Private helpers of the safety module: lexical path handling (component-wise, never string
// prefixes) and the sensitive-path rules. Pure functions over strings; no file-system access.
// Thread-safety: thread-safe (SensitivePaths is immutable after construction).
#pragma once

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"

namespace talaria::safety::internal {

// Whether `s` is one of `set`: the deny lists here and the guard's name tables are short
// constant arrays.
template <size_t N>
bool OneOf(std::string_view s, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

// Refuses what must never reach the kernel: empty, NUL bytes, longer than PATH_MAX - 1, a
// component longer than NAME_MAX.
Status ValidatePathString(std::string_view path);

// Components of an absolute path after lexical normalization: empty and "." components are
// dropped, ".." removes the previous component (and is dropped at "/").
std::vector<std::string> NormalizedComponents(std::string_view absolute_path);

// "/" + join(components, "/").
std::string JoinAbsolute(const std::vector<std::string>& components);

// NormalizedComponents + JoinAbsolute. REQUIRES: absolute_path starts with '/'.
std::string NormalizeAbsolute(std::string_view absolute_path);

// When `path` equals or lies beneath `base` (both component lists), the number of matched
// components is base.size() and the remainder is returned joined with '/' ("" when equal).
std::optional<std::string> RelativeBeneath(const std::vector<std::string>& base,
                                           const std::vector<std::string>& path);

// The deny lists of workspace.h, for a set of home and talaria-home spellings (each given as
// normalized absolute paths; typically the path as configured plus its realpath).
class SensitivePaths {
 public:
  SensitivePaths(const std::vector<std::string>& homes,
                 const std::vector<std::string>& talaria_homes);

  // A readable reason when writing (creating, replacing, removing, renaming) the normalized
  // absolute path is denied; nullopt when allowed. `shown` is used in the message.
  std::optional<std::string> WriteDenial(std::string_view normalized_path,
                                         std::string_view shown) const;
  std::optional<std::string> ReadDenial(std::string_view normalized_path,
                                        std::string_view shown) const;

 private:
  std::vector<std::vector<std::string>> homes_;
  std::vector<std::vector<std::string>> talaria_homes_;
};

}  // namespace talaria::safety::internal
