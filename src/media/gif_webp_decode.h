// GIF (giflib) and WebP (libwebp, libwebpdemux for animations) to RGBA pixels, so oversized ones
// are scaled like PNG and JPEG rather than refused. Only the first frame of an animation is
// decoded: a picture for a model or a message, not a film. Input is hostile: the canvas and
// frame sizes are judged against `max_pixels` before any pixel buffer is allocated, colour
// indexes past the palette and frames reaching past the canvas are clipped, and a decoder error
// is an InvalidArgument, never a crash.
// Thread-safety: free functions; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"

namespace talaria::media {

struct RgbaImage {
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<uint8_t> pixels;  // width * height * 4, rows top to bottom, not premultiplied
};

// The GIF's first frame on its logical screen (transparent where the frame does not cover it
// or its transparent index is used). Errors: InvalidArgument (broken data, no frame, no
// palette), ResourceExhausted (a screen of more than max_pixels).
Result<RgbaImage> DecodeGifFirstFrame(std::string_view bytes, uint64_t max_pixels);

// A still WebP, or an animated one's first frame, as RGBA. Errors as DecodeGifFirstFrame.
Result<RgbaImage> DecodeWebpFirstFrame(std::string_view bytes, uint64_t max_pixels);

}  // namespace talaria::media
