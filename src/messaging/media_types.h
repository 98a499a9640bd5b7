// The MIME type of an attachment, from its file name's extension: what an upload's
// Content-Type, a Matrix event's info.mimetype, a Signal data URI and an e-mail part declare.
// Thread-safety: pure functions.
#pragma once

#include <string_view>

namespace talaria::messaging {

// "image/png", "application/pdf", ...; "application/octet-stream" for anything unknown.
std::string_view MimeTypeFor(std::string_view file_name);

// Whether platforms show the file inline as a picture (png, jpeg, gif, webp).
bool IsImageFile(std::string_view file_name);

}  // namespace talaria::messaging
