#include "media/gif_webp_decode.h"

#include <gif_lib.h>
#include <webp/decode.h>
#include <webp/demux.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

namespace talaria::media {
namespace {

Status TooLarge(std::string_view format, uint64_t width, uint64_t height) {
  return ResourceExhaustedError("the " + std::string(format) + " has " + std::to_string(width) +
                                "x" + std::to_string(height) +
                                " pixels, more than talaria decodes");
}

// giflib reads through a callback; this is its cursor over the bytes.
struct GifSource {
  std::string_view bytes;
  size_t at = 0;
};

int ReadGifBytes(GifFileType* gif, GifByteType* out, int wanted) {
  auto* src = static_cast<GifSource*>(gif->UserData);
  const size_t n = std::min(static_cast<size_t>(std::max(wanted, 0)), src->bytes.size() - src->at);
  std::memcpy(out, src->bytes.data() + src->at, n);
  src->at += n;
  return static_cast<int>(n);
}

struct GifCloser {
  void operator()(GifFileType* gif) const {
    int error = 0;
    (void)DGifCloseFile(gif, &error);
  }
};
using GifPtr = std::unique_ptr<GifFileType, GifCloser>;

Status GifError(const char* what, int code) {
  const char* text = GifErrorString(code);
  return InvalidArgumentError(std::string("the GIF cannot be ") + what + ": " +
                              (text != nullptr ? text : "unknown error"));
}

// The transparent colour index a Graphics Control Extension names; -1 without one.
int TransparentIndex(const GifByteType* extension) {
  GraphicsControlBlock gcb;
  if (extension == nullptr || extension[0] < 4) return -1;
  if (DGifExtensionToGCB(extension[0], extension + 1, &gcb) != GIF_OK) return -1;
  return gcb.TransparentColor;
}

// Reads the first image's rows onto `out` (the screen, transparent already).
Status ReadFirstImage(GifFileType* gif, int transparent, RgbaImage& out, uint64_t max_pixels) {
  if (DGifGetImageDesc(gif) != GIF_OK) return GifError("read", gif->Error);
  const GifImageDesc& desc = gif->Image;
  const ColorMapObject* map = desc.ColorMap != nullptr ? desc.ColorMap : gif->SColorMap;
  if (map == nullptr || map->Colors == nullptr || map->ColorCount <= 0) {
    return InvalidArgumentError("the GIF has no colour table");
  }
  if (desc.Width <= 0 || desc.Height <= 0) return InvalidArgumentError("the GIF frame is empty");
  if (uint64_t(desc.Width) * uint64_t(desc.Height) > max_pixels) {
    return TooLarge("GIF frame", desc.Width, desc.Height);
  }
  // The screen's pixels only now that a frame is there to fill them: a few bytes claiming a
  // large screen and holding nothing more cost nothing.
  out.pixels.assign(size_t{out.width} * out.height * 4, 0);
  std::vector<GifByteType> row(static_cast<size_t>(desc.Width));
  // Interlaced rows arrive in four passes: every 8th from 0, every 8th from 4, every 4th from
  // 2, every 2nd from 1.
  static constexpr int kStart[4] = {0, 4, 2, 1};
  static constexpr int kStep[4] = {8, 8, 4, 2};
  const int passes = desc.Interlace ? 4 : 1;
  for (int pass = 0; pass < passes; ++pass) {
    const int start = desc.Interlace ? kStart[pass] : 0;
    const int step = desc.Interlace ? kStep[pass] : 1;
    for (int y = start; y < desc.Height; y += step) {
      if (DGifGetLine(gif, row.data(), desc.Width) != GIF_OK)
        return GifError("decoded", gif->Error);
      const int64_t sy = int64_t{desc.Top} + y;
      if (sy < 0 || sy >= int64_t{out.height}) continue;  // past the screen: clipped
      for (int x = 0; x < desc.Width; ++x) {
        const int64_t sx = int64_t{desc.Left} + x;
        if (sx < 0 || sx >= int64_t{out.width}) continue;
        const int index = row[static_cast<size_t>(x)];
        if (index == transparent || index >= map->ColorCount) continue;
        const GifColorType& c = map->Colors[index];
        uint8_t* p =
            &out.pixels[(static_cast<size_t>(sy) * out.width + static_cast<size_t>(sx)) * 4];
        p[0] = c.Red;
        p[1] = c.Green;
        p[2] = c.Blue;
        p[3] = 255;
      }
    }
  }
  return Status::Ok();
}

struct AnimDecoderFree {
  void operator()(WebPAnimDecoder* d) const { WebPAnimDecoderDelete(d); }
};

}  // namespace

Result<RgbaImage> DecodeGifFirstFrame(std::string_view bytes, uint64_t max_pixels) {
  GifSource source{bytes, 0};
  int error = 0;
  GifPtr gif(DGifOpen(&source, ReadGifBytes, &error));
  if (!gif) return Err(GifError("opened", error));
  if (gif->SWidth <= 0 || gif->SHeight <= 0) return Err(InvalidArgumentError("the GIF is empty"));
  if (uint64_t(gif->SWidth) * uint64_t(gif->SHeight) > max_pixels) {
    return Err(TooLarge("GIF", gif->SWidth, gif->SHeight));
  }
  RgbaImage out;
  out.width = static_cast<uint32_t>(gif->SWidth);
  out.height = static_cast<uint32_t>(gif->SHeight);
  int transparent = -1;
  for (;;) {
    GifRecordType type = UNDEFINED_RECORD_TYPE;
    if (DGifGetRecordType(gif.get(), &type) != GIF_OK) return Err(GifError("read", gif->Error));
    if (type == TERMINATE_RECORD_TYPE) return Err(InvalidArgumentError("the GIF has no image"));
    if (type == IMAGE_DESC_RECORD_TYPE) {
      TALARIA_RETURN_IF_ERROR(ReadFirstImage(gif.get(), transparent, out, max_pixels));
      return out;
    }
    if (type == EXTENSION_RECORD_TYPE) {
      int code = 0;
      GifByteType* ext = nullptr;
      if (DGifGetExtension(gif.get(), &code, &ext) != GIF_OK) {
        return Err(GifError("read", gif->Error));
      }
      if (code == GRAPHICS_EXT_FUNC_CODE) transparent = TransparentIndex(ext);
      while (ext != nullptr) {
        if (DGifGetExtensionNext(gif.get(), &ext) != GIF_OK) {
          return Err(GifError("read", gif->Error));
        }
      }
    }
  }
}

Result<RgbaImage> DecodeWebpFirstFrame(std::string_view bytes, uint64_t max_pixels) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  WebPBitstreamFeatures features;
  if (WebPGetFeatures(data, bytes.size(), &features) != VP8_STATUS_OK || features.width <= 0 ||
      features.height <= 0) {
    return Err(InvalidArgumentError("the WebP cannot be read"));
  }
  if (uint64_t(features.width) * uint64_t(features.height) > max_pixels) {
    return Err(TooLarge("WebP", features.width, features.height));
  }
  RgbaImage out;
  out.width = static_cast<uint32_t>(features.width);
  out.height = static_cast<uint32_t>(features.height);
  const size_t stride = size_t{out.width} * 4;
  out.pixels.resize(stride * out.height);
  if (features.has_animation == 0) {
    if (WebPDecodeRGBAInto(data, bytes.size(), out.pixels.data(), out.pixels.size(),
                           static_cast<int>(stride)) == nullptr) {
      return Err(InvalidArgumentError("the WebP cannot be decoded"));
    }
    return out;
  }
  WebPData whole{data, bytes.size()};
  WebPAnimDecoderOptions options;
  if (WebPAnimDecoderOptionsInit(&options) == 0) {
    return Err(InternalError("libwebp's animation decoder cannot be set up"));
  }
  options.color_mode = MODE_RGBA;
  options.use_threads = 0;
  std::unique_ptr<WebPAnimDecoder, AnimDecoderFree> decoder(WebPAnimDecoderNew(&whole, &options));
  WebPAnimInfo info;
  if (!decoder || WebPAnimDecoderGetInfo(decoder.get(), &info) == 0) {
    return Err(InvalidArgumentError("the animated WebP cannot be read"));
  }
  if (info.canvas_width != out.width || info.canvas_height != out.height) {
    return Err(InvalidArgumentError("the animated WebP's canvas disagrees with its header"));
  }
  uint8_t* frame = nullptr;
  int timestamp = 0;
  if (WebPAnimDecoderGetNext(decoder.get(), &frame, &timestamp) == 0 || frame == nullptr) {
    return Err(InvalidArgumentError("the animated WebP's first frame cannot be decoded"));
  }
  std::memcpy(out.pixels.data(), frame, out.pixels.size());
  return out;
}

}  // namespace talaria::media
