#include "messaging/media_types.h"

#include <array>
#include <string>
#include <utility>

namespace talaria::messaging {
namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 22> kTypes = {{
    {"png", "image/png"},
    {"jpg", "image/jpeg"},
    {"jpeg", "image/jpeg"},
    {"gif", "image/gif"},
    {"webp", "image/webp"},
    {"svg", "image/svg+xml"},
    {"pdf", "application/pdf"},
    {"zip", "application/zip"},
    {"json", "application/json"},
    {"txt", "text/plain"},
    {"md", "text/markdown"},
    {"csv", "text/csv"},
    {"html", "text/html"},
    {"log", "text/plain"},
    {"mp3", "audio/mpeg"},
    {"ogg", "audio/ogg"},
    {"wav", "audio/wav"},
    {"m4a", "audio/mp4"},
    {"mp4", "video/mp4"},
    {"webm", "video/webm"},
    {"mov", "video/quicktime"},
    {"xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
}};

std::string Extension(std::string_view file_name) {
  const size_t dot = file_name.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == file_name.size()) return "";
  std::string ext(file_name.substr(dot + 1));
  for (char& c : ext) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return ext;
}

}  // namespace

std::string_view MimeTypeFor(std::string_view file_name) {
  const std::string ext = Extension(file_name);
  for (const auto& [e, type] : kTypes) {
    if (e == ext) return type;
  }
  return "application/octet-stream";
}

bool IsImageFile(std::string_view file_name) {
  const std::string ext = Extension(file_name);
  return ext == "png" || ext == "jpg" || ext == "jpeg" || ext == "gif" || ext == "webp";
}

}  // namespace talaria::messaging
