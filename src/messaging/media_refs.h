// The attachments a message names: `MEDIA:<path>` (up to the next whitespace) anywhere in the
// text, and `[[as_document]]` to send images as files. Both are taken out of the text.
// Thread-safety: pure function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace talaria::messaging {

struct MediaRefs {
  std::string text;                // the message without the markers, trimmed
  std::vector<std::string> paths;  // in order of appearance
  bool as_document = false;
};

MediaRefs ExtractMedia(std::string_view message);

}  // namespace talaria::messaging
