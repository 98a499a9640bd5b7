// multipart/form-data (multipart.h). The boundary is random, so a file's bytes cannot end the
// part early except by a 1 in 2^128 chance; names and file names lose quotes and line breaks.
#include "messaging/multipart.h"

#include "talaria/base/random.h"

namespace talaria::messaging {
namespace {

std::string QuotedSafe(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\r' || c == '\n' || c == '\\') continue;
    out += c;
  }
  return out;
}

}  // namespace

MultipartBody::MultipartBody() : boundary_("talaria-" + RandomHex(16)) {}

void MultipartBody::AddField(std::string_view name, std::string_view value,
                             std::string_view content_type) {
  body_ += "--" + boundary_ + "\r\nContent-Disposition: form-data; name=\"" + QuotedSafe(name) +
           "\"\r\n";
  if (!content_type.empty()) body_ += "Content-Type: " + std::string(content_type) + "\r\n";
  body_ += "\r\n";
  body_.append(value);
  body_ += "\r\n";
}

void MultipartBody::AddFile(std::string_view name, std::string_view file_name,
                            std::string_view data) {
  body_ += "--" + boundary_ + "\r\nContent-Disposition: form-data; name=\"" + QuotedSafe(name) +
           "\"; filename=\"" + QuotedSafe(file_name) +
           "\"\r\nContent-Type: application/octet-stream\r\n\r\n";
  body_.append(data);
  body_ += "\r\n";
}

std::string MultipartBody::content_type() const {
  return "multipart/form-data; boundary=" + boundary_;
}

std::string MultipartBody::Finish() {
  body_ += "--" + boundary_ + "--\r\n";
  return std::move(body_);
}

}  // namespace talaria::messaging
