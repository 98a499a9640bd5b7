// What every benchmark program shares: the spec's splitmix64 generator, the median, and the
// `METRIC <name> <value> <unit>` line (up to 3 decimals, trailing zeros dropped).
// Thread-safety: free functions; SplitMix64 is a value type.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace talaria_bench {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    state_ += 0x9E3779B97F4A7C15ULL;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  uint64_t Below(uint64_t n) { return Next() % n; }  // plain modulo, bias accepted

 private:
  uint64_t state_;
};

// The mean of the two middle values for an even count (Python's statistics.median); 0 if empty.
inline double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

inline void PrintMetric(std::string_view name, double value, std::string_view unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", value);
  std::string text = buf;
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  std::printf("METRIC %.*s %s %.*s\n", static_cast<int>(name.size()), name.data(), text.c_str(),
              static_cast<int>(unit.size()), unit.data());
  std::fflush(stdout);
}

}  // namespace talaria_bench
