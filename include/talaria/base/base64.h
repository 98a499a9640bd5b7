// Standard base64 (RFC 4648 section 4, with padding): Basic auth, MIME bodies and encoded
// words, data: URIs, CDP screenshots, sandbox APIs' output, the webhook's attachments. The one
// encoder and decoder of the project; what arrives to be decoded comes from the network or a
// sandbox, so the decoder refuses anything malformed with an error instead of guessing.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "talaria/base/status.h"

namespace talaria {

// `bytes` in base64, padded with '=' to a multiple of four characters; no line breaks.
std::string Base64Encode(std::string_view bytes);

enum class Base64Alphabet {
  kStandard,           // '+' and '/' (RFC 4648 section 4)
  kStandardOrUrlSafe,  // also '-' and '_' (section 5), as some image APIs answer
};

// The bytes `text` encodes. ASCII whitespace (space, tab, CR, LF) anywhere is skipped, as MIME
// and `base64` wrap lines; padding may be left off. Errors (InvalidArgument, saying where):
// a character outside the alphabet, '=' anywhere but at the end or more than two of them,
// padding that does not complete a group of four, anything after the padding, and a lone
// character at the end (six bits are no byte). Leftover bits in the last character are not
// checked (what some encoders leave there).
Result<std::string> Base64Decode(std::string_view text,
                                 Base64Alphabet alphabet = Base64Alphabet::kStandard);

}  // namespace talaria
