// What the media tools need to know about image bytes: their format and size, and a smaller
// copy of a large one (libpng, libjpeg, giflib and libwebp from Debian). Input is hostile: a file
// or a download may claim any size or be cut short, so dimensions are read and judged before any
// pixel is decoded, and a decoder error is an error, never a crash. Thread-safety: free functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "talaria/base/status.h"

namespace talaria::media {

enum class ImageFormat : unsigned char { kUnknown, kPng, kJpeg, kGif, kWebp };

ImageFormat SniffImageFormat(std::string_view bytes);
std::string_view MimeType(ImageFormat format);   // "image/png"; "" for kUnknown
std::string_view Extension(ImageFormat format);  // "png"; "" for kUnknown

struct ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  uint32_t width = 0;
  uint32_t height = 0;
};

// Format and dimensions from the headers. InvalidArgument for bytes that are not a PNG, JPEG,
// GIF or WebP, or whose header is cut short or broken.
Result<ImageInfo> ReadImageInfo(std::string_view bytes);

// The most pixels decoded to make a smaller copy (a 100 MB "image" of 60,000 x 60,000 pixels
// is refused, not decoded into 14 GB).
inline constexpr uint64_t kMaxDecodePixels = uint64_t{40} << 20;

struct Rgb8Image {
  uint32_t width = 0;
  uint32_t height = 0;
  std::string pixels;  // width * height * 3 bytes, rows top to bottom
};

// A PNG, JPEG, GIF or WebP decoded and scaled down (area average, transparency over white) so
// that its longer side is at most `max_dimension`; never scaled up. Of an animated GIF or WebP,
// the first frame. InvalidArgument for another format or broken data; ResourceExhausted over
// kMaxDecodePixels.
Result<Rgb8Image> DecodeScaled(std::string_view bytes, uint32_t max_dimension);

// Errors: Internal when the encoder fails.
Result<std::string> EncodeJpeg(const Rgb8Image& image, int quality);
Result<std::string> EncodePng(const Rgb8Image& image);

struct FittedImage {
  std::string bytes;
  ImageFormat format = ImageFormat::kUnknown;
  uint32_t width = 0;
  uint32_t height = 0;
  bool resized = false;
};

// `bytes` as they are when within both limits; else a JPEG copy scaled to `max_dimension`
// (and further, halving, until it fits `max_bytes`); an animated GIF or WebP over the limits
// becomes a JPEG of its first frame. Errors: InvalidArgument (not an image), and DecodeScaled's.
Result<FittedImage> FitImage(std::string_view bytes, uint32_t max_dimension, size_t max_bytes);

}  // namespace talaria::media
