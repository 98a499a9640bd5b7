// Text as lines, without copying.
// Thread-safety: a pure function.
#pragma once

#include <string_view>
#include <vector>

namespace talaria {

// Splits on '\n' like the parsers count lines: "a\nb" and "a\nb\n" both have lines a, b; a
// trailing '\r' stays part of its line. Empty text has no lines. The views point into `text`.
std::vector<std::string_view> SplitLines(std::string_view text);

}  // namespace talaria
