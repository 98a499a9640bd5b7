// Image sniffing, header dimensions, decoding with scaling, and encoding (image_codec.h).
// PNG through libpng's simplified API (it catches its own errors); JPEG through libjpeg, whose
// errors longjmp back to the one function that set the jump, which holds no C++ object with a
// destructor across it.
#include "media/image_codec.h"

// clang-format off
#include <csetjmp>
#include <cstdio>
#include <jpeglib.h>
#include <png.h>
// clang-format on

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "media/gif_webp_decode.h"

namespace talaria::media {
namespace {

uint32_t Be32(std::string_view b, size_t at) {
  return (uint32_t{static_cast<uint8_t>(b[at])} << 24) |
         (uint32_t{static_cast<uint8_t>(b[at + 1])} << 16) |
         (uint32_t{static_cast<uint8_t>(b[at + 2])} << 8) |
         uint32_t{static_cast<uint8_t>(b[at + 3])};
}
uint32_t Le16(std::string_view b, size_t at) {
  return uint32_t{static_cast<uint8_t>(b[at])} | (uint32_t{static_cast<uint8_t>(b[at + 1])} << 8);
}
uint32_t Le24(std::string_view b, size_t at) {
  return Le16(b, at) | (uint32_t{static_cast<uint8_t>(b[at + 2])} << 16);
}

Status Broken(std::string_view what) {
  return InvalidArgumentError("the image is not a readable " + std::string(what) +
                              " (its header is broken or cut short)");
}

// JPEG dimensions from the first start-of-frame marker.
Result<ImageInfo> JpegInfo(std::string_view b) {
  size_t i = 2;
  while (i + 4 <= b.size()) {
    if (static_cast<uint8_t>(b[i]) != 0xFF) return Err(Broken("JPEG"));
    const auto marker = static_cast<uint8_t>(b[i + 1]);
    if (marker == 0xFF) {  // fill byte
      ++i;
      continue;
    }
    if (marker == 0xD8 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {
      i += 2;
      continue;
    }
    const uint32_t len =
        (uint32_t{static_cast<uint8_t>(b[i + 2])} << 8) | static_cast<uint8_t>(b[i + 3]);
    if (len < 2) return Err(Broken("JPEG"));
    const bool sof =
        marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (sof) {
      if (i + 9 > b.size()) return Err(Broken("JPEG"));
      ImageInfo info{
          ImageFormat::kJpeg,
          (uint32_t{static_cast<uint8_t>(b[i + 7])} << 8) | static_cast<uint8_t>(b[i + 8]),
          (uint32_t{static_cast<uint8_t>(b[i + 5])} << 8) | static_cast<uint8_t>(b[i + 6])};
      return info;
    }
    i += 2 + len;
  }
  return Err(Broken("JPEG"));
}

Result<ImageInfo> WebpInfo(std::string_view b) {
  if (b.size() < 30) return Err(Broken("WebP"));
  const std::string_view chunk = b.substr(12, 4);
  if (chunk == "VP8 ") {
    return ImageInfo{ImageFormat::kWebp, Le16(b, 26) & 0x3FFF, Le16(b, 28) & 0x3FFF};
  }
  if (chunk == "VP8L") {
    const uint32_t bits = Le16(b, 21) | (Le16(b, 23) << 16);
    return ImageInfo{ImageFormat::kWebp, (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1};
  }
  if (chunk == "VP8X") return ImageInfo{ImageFormat::kWebp, Le24(b, 24) + 1, Le24(b, 27) + 1};
  return Err(Broken("WebP"));
}

// Area average of `src` (RGBA, over white) into a width x height RGB image.
Rgb8Image Downscale(const uint8_t* src, uint32_t sw, uint32_t sh, uint32_t dw, uint32_t dh) {
  Rgb8Image out;
  out.width = dw;
  out.height = dh;
  out.pixels.resize(size_t{dw} * dh * 3);
  for (uint32_t dy = 0; dy < dh; ++dy) {
    const uint32_t y0 = static_cast<uint32_t>(uint64_t{dy} * sh / dh);
    const uint32_t y1 = std::max(y0 + 1, static_cast<uint32_t>(uint64_t{dy + 1} * sh / dh));
    for (uint32_t dx = 0; dx < dw; ++dx) {
      const uint32_t x0 = static_cast<uint32_t>(uint64_t{dx} * sw / dw);
      const uint32_t x1 = std::max(x0 + 1, static_cast<uint32_t>(uint64_t{dx + 1} * sw / dw));
      uint64_t sum[3] = {0, 0, 0};
      for (uint32_t y = y0; y < y1; ++y) {
        const uint8_t* p = src + (size_t{y} * sw + x0) * 4;
        for (uint32_t x = x0; x < x1; ++x, p += 4) {
          const uint32_t a = p[3];
          for (int c = 0; c < 3; ++c) sum[c] += (p[c] * a + 255 * (255 - a)) / 255;
        }
      }
      const uint64_t n = uint64_t{y1 - y0} * (x1 - x0);
      char* d = &out.pixels[(size_t{dy} * dw + dx) * 3];
      for (int c = 0; c < 3; ++c) d[c] = static_cast<char>((sum[c] + n / 2) / n);
    }
  }
  return out;
}

void TargetSize(uint32_t w, uint32_t h, uint32_t max_dimension, uint32_t& dw, uint32_t& dh) {
  const uint32_t longer = std::max(w, h);
  if (longer <= max_dimension) {
    dw = w;
    dh = h;
    return;
  }
  dw = std::max<uint32_t>(1, static_cast<uint32_t>(uint64_t{w} * max_dimension / longer));
  dh = std::max<uint32_t>(1, static_cast<uint32_t>(uint64_t{h} * max_dimension / longer));
}

Result<Rgb8Image> DecodePng(std::string_view bytes, uint32_t max_dimension) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_memory(&image, bytes.data(), bytes.size()) == 0) {
    return Err(InvalidArgumentError(std::string("the PNG cannot be read: ") + image.message));
  }
  if (uint64_t{image.width} * image.height > kMaxDecodePixels) {
    png_image_free(&image);
    return Err(ResourceExhaustedError("the PNG has " + std::to_string(image.width) + "x" +
                                      std::to_string(image.height) +
                                      " pixels, more than talaria decodes"));
  }
  image.format = PNG_FORMAT_RGBA;
  std::vector<uint8_t> rgba(PNG_IMAGE_SIZE(image));
  if (png_image_finish_read(&image, nullptr, rgba.data(), 0, nullptr) == 0) {
    return Err(InvalidArgumentError(std::string("the PNG cannot be decoded: ") + image.message));
  }
  uint32_t dw = 0;
  uint32_t dh = 0;
  TargetSize(image.width, image.height, max_dimension, dw, dh);
  return Downscale(rgba.data(), image.width, image.height, dw, dh);
}

struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void JpegErrorExit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}
void JpegSilence(j_common_ptr /*cinfo*/) {}

// Decodes into `rgba` (sized here, before the jump is set, so nothing is allocated by C++ code
// between setjmp and longjmp). 0 on success; else `err.message` says why.
int DecodeJpegRaw(const std::string_view bytes, uint32_t max_dimension, JpegError& err,
                  std::vector<uint8_t>& rgba, uint32_t& width, uint32_t& height,
                  uint64_t max_pixels) {
  jpeg_decompress_struct cinfo;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = JpegErrorExit;
  err.mgr.output_message = JpegSilence;
  err.message[0] = '\0';
  if (setjmp(err.jump) != 0) {  // NOLINT(cert-err52-cpp): libjpeg reports errors only this way
    jpeg_destroy_decompress(&cinfo);
    return 1;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(bytes.data()),
               static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, TRUE);
  if (uint64_t{cinfo.image_width} * cinfo.image_height > max_pixels * 64) {
    std::snprintf(err.message, sizeof err.message, "%ux%u pixels, more than talaria decodes",
                  cinfo.image_width, cinfo.image_height);
    jpeg_destroy_decompress(&cinfo);
    return 2;
  }
  // libjpeg scales by 1/2, 1/4 or 1/8 while decoding: pick the strongest that stays at or
  // above the target, so the area average below has the detail it needs.
  const uint32_t longer = std::max(cinfo.image_width, cinfo.image_height);
  cinfo.scale_num = 1;
  cinfo.scale_denom = 1;
  while (cinfo.scale_denom < 8 && longer / (cinfo.scale_denom * 2) >= max_dimension) {
    cinfo.scale_denom *= 2;
  }
  cinfo.out_color_space = JCS_RGB;
  jpeg_calc_output_dimensions(&cinfo);
  if (uint64_t{cinfo.output_width} * cinfo.output_height > max_pixels) {
    std::snprintf(err.message, sizeof err.message, "%ux%u pixels, more than talaria decodes",
                  cinfo.output_width, cinfo.output_height);
    jpeg_destroy_decompress(&cinfo);
    return 2;
  }
  width = cinfo.output_width;
  height = cinfo.output_height;
  // Sized before decoding starts; a longjmp from here on leaves it merely partly written.
  rgba.assign(size_t{width} * height * 4, 255);
  jpeg_start_decompress(&cinfo);
  while (cinfo.output_scanline < cinfo.output_height) {
    unsigned char* row = rgba.data() + size_t{cinfo.output_scanline} * width * 4;
    JSAMPROW rows[1] = {row};
    if (jpeg_read_scanlines(&cinfo, rows, 1) != 1) break;
    // RGB -> RGBA in place, from the right end so nothing is overwritten before it is read.
    for (uint32_t x = width; x-- > 0;) {
      row[x * 4 + 3] = 255;
      row[x * 4 + 2] = row[x * 3 + 2];
      row[x * 4 + 1] = row[x * 3 + 1];
      row[x * 4 + 0] = row[x * 3 + 0];
    }
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return 0;
}

}  // namespace

ImageFormat SniffImageFormat(std::string_view b) {
  if (b.size() >= 8 && b.substr(0, 8) == std::string_view("\x89PNG\r\n\x1a\n", 8)) {
    return ImageFormat::kPng;
  }
  if (b.size() >= 3 && b.substr(0, 3) == "\xFF\xD8\xFF") return ImageFormat::kJpeg;
  if (b.size() >= 6 && (b.substr(0, 6) == "GIF87a" || b.substr(0, 6) == "GIF89a")) {
    return ImageFormat::kGif;
  }
  if (b.size() >= 12 && b.substr(0, 4) == "RIFF" && b.substr(8, 4) == "WEBP") {
    return ImageFormat::kWebp;
  }
  return ImageFormat::kUnknown;
}

std::string_view MimeType(ImageFormat f) {
  switch (f) {
    case ImageFormat::kPng:
      return "image/png";
    case ImageFormat::kJpeg:
      return "image/jpeg";
    case ImageFormat::kGif:
      return "image/gif";
    case ImageFormat::kWebp:
      return "image/webp";
    case ImageFormat::kUnknown:
      break;
  }
  return "";
}

std::string_view Extension(ImageFormat f) {
  switch (f) {
    case ImageFormat::kPng:
      return "png";
    case ImageFormat::kJpeg:
      return "jpg";
    case ImageFormat::kGif:
      return "gif";
    case ImageFormat::kWebp:
      return "webp";
    case ImageFormat::kUnknown:
      break;
  }
  return "";
}

Result<ImageInfo> ReadImageInfo(std::string_view b) {
  switch (SniffImageFormat(b)) {
    case ImageFormat::kPng:
      if (b.size() < 24 || b.substr(12, 4) != "IHDR") return Err(Broken("PNG"));
      return ImageInfo{ImageFormat::kPng, Be32(b, 16), Be32(b, 20)};
    case ImageFormat::kJpeg:
      return JpegInfo(b);
    case ImageFormat::kGif:
      if (b.size() < 10) return Err(Broken("GIF"));
      return ImageInfo{ImageFormat::kGif, Le16(b, 6), Le16(b, 8)};
    case ImageFormat::kWebp:
      return WebpInfo(b);
    case ImageFormat::kUnknown:
      break;
  }
  return Err(InvalidArgumentError("not an image talaria can read (PNG, JPEG, GIF or WebP)"));
}

Result<Rgb8Image> DecodeScaled(std::string_view bytes, uint32_t max_dimension) {
  max_dimension = std::max<uint32_t>(max_dimension, 1);
  const ImageFormat format = SniffImageFormat(bytes);
  if (format == ImageFormat::kPng) {
    // Judged from the header before libpng sees more than it: a few bytes claiming 10^10
    // pixels are refused as such, whatever follows them.
    const ImageInfo info = TALARIA_TRY(ReadImageInfo(bytes));
    if (uint64_t{info.width} * info.height > kMaxDecodePixels) {
      return Err(ResourceExhaustedError("the PNG has " + std::to_string(info.width) + "x" +
                                        std::to_string(info.height) +
                                        " pixels, more than talaria decodes"));
    }
    return DecodePng(bytes, max_dimension);
  }
  if (format == ImageFormat::kGif || format == ImageFormat::kWebp) {
    const RgbaImage rgba =
        TALARIA_TRY(format == ImageFormat::kGif ? DecodeGifFirstFrame(bytes, kMaxDecodePixels)
                                                : DecodeWebpFirstFrame(bytes, kMaxDecodePixels));
    uint32_t dw = 0;
    uint32_t dh = 0;
    TargetSize(rgba.width, rgba.height, max_dimension, dw, dh);
    return Downscale(rgba.pixels.data(), rgba.width, rgba.height, dw, dh);
  }
  if (format != ImageFormat::kJpeg) {
    return Err(InvalidArgumentError("not an image talaria can scale (PNG, JPEG, GIF or WebP)"));
  }
  JpegError err;
  std::vector<uint8_t> rgba;
  uint32_t width = 0;
  uint32_t height = 0;
  const int rc = DecodeJpegRaw(bytes, max_dimension, err, rgba, width, height, kMaxDecodePixels);
  if (rc == 2) return Err(ResourceExhaustedError(std::string("the JPEG has ") + err.message));
  if (rc != 0) {
    return Err(InvalidArgumentError(std::string("the JPEG cannot be decoded: ") + err.message));
  }
  uint32_t dw = 0;
  uint32_t dh = 0;
  TargetSize(width, height, max_dimension, dw, dh);
  return Downscale(rgba.data(), width, height, dw, dh);
}

namespace {

int EncodeJpegRaw(const Rgb8Image& image, int quality, JpegError& err, unsigned char*& out,
                  unsigned long& out_size) {
  jpeg_compress_struct cinfo;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = JpegErrorExit;
  err.mgr.output_message = JpegSilence;
  if (setjmp(err.jump) != 0) {  // NOLINT(cert-err52-cpp): libjpeg reports errors only this way
    jpeg_destroy_compress(&cinfo);
    return 1;
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, &out, &out_size);
  cinfo.image_width = image.width;
  cinfo.image_height = image.height;
  cinfo.input_components = 3;
  cinfo.in_color_space = JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    auto* row = reinterpret_cast<unsigned char*>(const_cast<char*>(image.pixels.data()) +
                                                 size_t{cinfo.next_scanline} * image.width * 3);
    JSAMPROW rows[1] = {row};
    jpeg_write_scanlines(&cinfo, rows, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  return 0;
}

}  // namespace

Result<std::string> EncodeJpeg(const Rgb8Image& image, int quality) {
  if (image.width == 0 || image.height == 0 ||
      image.pixels.size() != size_t{image.width} * image.height * 3) {
    return Err(InternalError("EncodeJpeg: the pixel buffer does not match the size"));
  }
  JpegError err;
  unsigned char* out = nullptr;
  unsigned long out_size = 0;
  const int rc = EncodeJpegRaw(image, std::clamp(quality, 1, 100), err, out, out_size);
  std::string bytes;
  if (rc == 0 && out != nullptr) bytes.assign(reinterpret_cast<char*>(out), out_size);
  std::free(out);  // NOLINT(cppcoreguidelines-no-malloc): libjpeg's mem destination mallocs
  if (rc != 0) return Err(InternalError(std::string("JPEG encoding failed: ") + err.message));
  return bytes;
}

Result<std::string> EncodePng(const Rgb8Image& image) {
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  png.width = image.width;
  png.height = image.height;
  png.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  if (png_image_write_to_memory(&png, nullptr, &size, 0, image.pixels.data(), 0, nullptr) == 0) {
    return Err(InternalError(std::string("PNG encoding failed: ") + png.message));
  }
  std::string bytes(size, '\0');
  if (png_image_write_to_memory(&png, bytes.data(), &size, 0, image.pixels.data(), 0, nullptr) ==
      0) {
    return Err(InternalError(std::string("PNG encoding failed: ") + png.message));
  }
  bytes.resize(size);
  return bytes;
}

Result<FittedImage> FitImage(std::string_view bytes, uint32_t max_dimension, size_t max_bytes) {
  const ImageInfo info = TALARIA_TRY(ReadImageInfo(bytes));
  if (std::max(info.width, info.height) <= max_dimension && bytes.size() <= max_bytes) {
    return FittedImage{std::string(bytes), info.format, info.width, info.height, false};
  }
  uint32_t dimension = std::min(max_dimension, std::max(info.width, info.height));
  for (int attempt = 0; attempt < 8; ++attempt) {
    Rgb8Image scaled = TALARIA_TRY(DecodeScaled(bytes, dimension));
    std::string jpeg = TALARIA_TRY(EncodeJpeg(scaled, 85));
    if (jpeg.size() <= max_bytes || dimension <= 64) {
      return FittedImage{std::move(jpeg), ImageFormat::kJpeg, scaled.width, scaled.height, true};
    }
    dimension /= 2;
  }
  return Err(
      ResourceExhaustedError("the image does not fit in " + std::to_string(max_bytes) + " bytes"));
}

}  // namespace talaria::media
