// Standard base64 (RFC 4648, padded) for Basic auth, MIME bodies and encoded mail headers.
// Thread-safety: pure function.
#pragma once

#include <string>
#include <string_view>

namespace talaria::messaging {

std::string Base64(std::string_view bytes);

}  // namespace talaria::messaging
