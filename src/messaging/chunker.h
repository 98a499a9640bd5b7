// Splitting a long message into the parts a platform accepts, each within its limit as that
// platform counts (Telegram counts UTF-16 code units, ntfy bytes, the others characters).
// Splits fall on a paragraph break, else a line break, else a space, else between characters;
// a code fence open at a split is closed and reopened in the next part; each part of several
// ends with " (i/n)".
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace talaria::messaging {

enum class LengthUnit : unsigned char { kCodePoints, kUtf16, kBytes };

// The length of UTF-8 `text` in `unit` (an invalid byte counts as one code point).
size_t MeasureLength(std::string_view text, LengthUnit unit);

// `text` in parts of at most `limit` units each. limit 0: no limit (one part). An empty text is
// one empty part. REQUIRES: limit == 0 or limit >= 64.
std::vector<std::string> SplitMessage(std::string_view text, size_t limit, LengthUnit unit);

}  // namespace talaria::messaging
