// Standard base64 (RFC 4648, with padding): screenshots arrive base64 in CDP replies and leave
// base64 in image content blocks.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace talaria::browser {

std::string Base64Encode(std::string_view bytes);
// nullopt for a character outside the alphabet (whitespace is skipped).
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace talaria::browser
