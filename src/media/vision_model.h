// One question about one image to the auxiliary vision model (auxiliary.vision in
// media_settings.h), as OpenAI-compatible image input: a text part and an image_url part with
// a data: URL. Images over max_dimension or max_image_bytes are scaled down first; when the
// endpoint still says the image is too large, it is halved and sent once more.
// Used by vision_analyze and by browser_vision (through talaria/browser/screenshot_analyzer.h).
// Thread-safety: a free function; thread-safe.
#pragma once

#include <chrono>
#include <stop_token>
#include <string>
#include <string_view>

#include "media/media_settings.h"
#include "talaria/base/status.h"

namespace talaria::media {

// The model's answer, trimmed. Errors: the image's (not an image, too large to shrink), the
// exchange's (with the endpoint named), an HTTP status outside 2xx with the service's words,
// or an answer with no text.
Result<std::string> AskVisionModel(const VisionSettings& settings, std::string_view image,
                                   const std::string& prompt, const std::stop_token& cancel,
                                   std::chrono::steady_clock::time_point deadline);

}  // namespace talaria::media
