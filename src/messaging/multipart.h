// multipart/form-data bodies for the APIs that take a file upload (Telegram's sendDocument,
// Discord's message with files[0]).
// Thread-safety: value type.
#pragma once

#include <string>
#include <string_view>

namespace talaria::messaging {

class MultipartBody {
 public:
  MultipartBody();
  void AddField(std::string_view name, std::string_view value, std::string_view content_type = "");
  void AddFile(std::string_view name, std::string_view file_name, std::string_view data);
  // The Content-Type header's value (with the boundary).
  std::string content_type() const;
  // The body, closed; call once, after the last Add.
  std::string Finish();

 private:
  std::string boundary_;
  std::string body_;
};

}  // namespace talaria::messaging
