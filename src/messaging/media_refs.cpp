// MEDIA: and [[as_document]] markers (media_refs.h).
#include "messaging/media_refs.h"

#include "talaria/base/strings.h"

namespace talaria::messaging {

MediaRefs ExtractMedia(std::string_view message) {
  MediaRefs out;
  constexpr std::string_view kDocument = "[[as_document]]";
  constexpr std::string_view kMedia = "MEDIA:";
  std::string text;
  size_t i = 0;
  while (i < message.size()) {
    if (message.substr(i).starts_with(kDocument)) {
      out.as_document = true;
      i += kDocument.size();
      continue;
    }
    const bool word_start = i == 0 || kAsciiSpace.find(message[i - 1]) != std::string_view::npos;
    if (word_start && message.substr(i).starts_with(kMedia)) {
      size_t end = message.find_first_of(kAsciiSpace, i + kMedia.size());
      if (end == std::string_view::npos) end = message.size();
      std::string_view path = message.substr(i + kMedia.size(), end - i - kMedia.size());
      if (!path.empty()) {
        out.paths.emplace_back(path);
        i = end;
        continue;
      }
    }
    text += message[i++];
  }
  out.text = std::string(Trim(text));
  return out;
}

}  // namespace talaria::messaging
