#include "tools/files/read_output_guard.h"

#include <cctype>
#include <cstdint>

namespace talaria::tools {

bool LooksLikeReadFileOutput(std::string_view content) {
  size_t lines = 0, numbered = 0, consecutive = 0;
  int64_t previous = -1;
  size_t start = 0;
  while (start < content.size()) {
    size_t end = content.find('\n', start);
    if (end == std::string_view::npos) end = content.size();
    std::string_view line = content.substr(start, end - start);
    start = end + 1;
    if (line.empty() || line == "\r") continue;
    ++lines;
    size_t i = 0;
    int64_t n = 0;
    while (i < line.size() && i < 10 && std::isdigit(static_cast<unsigned char>(line[i])))
      n = n * 10 + (line[i++] - '0');
    if (i == 0 || i >= line.size() || line[i] != '|') continue;
    ++numbered;
    if (previous >= 0 && n == previous + 1) ++consecutive;
    previous = n;
  }
  return numbered >= 2 && numbered * 10 >= lines * 6 && consecutive + 1 >= numbered * 6 / 10;
}

}  // namespace talaria::tools
