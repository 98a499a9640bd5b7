// GIF and WebP scaling on images made here with giflib's and libwebp's encoders: colours and
// transparency kept (over white), interlaced GIFs, an animation's first frame, FitImage turning
// an oversized GIF or WebP into a JPEG, and hostile bytes (cut short, a screen of billions of
// pixels, a frame reaching past the screen) refused or clipped, never a crash.
#include "media/gif_webp_decode.h"

#include <gif_lib.h>
#include <gtest/gtest.h>
#include <webp/encode.h>
#include <webp/mux.h>

#include <cstdint>
#include <string>
#include <vector>

#include "media/image_codec.h"

namespace talaria::media {
namespace {

struct Colour {
  uint8_t r, g, b;
};
constexpr Colour kRed{220, 20, 20};
constexpr Colour kBlue{20, 20, 220};
constexpr Colour kGreen{20, 200, 20};

int AppendGifBytes(GifFileType* gif, const GifByteType* data, int n) {
  static_cast<std::string*>(gif->UserData)->append(reinterpret_cast<const char*>(data), n);
  return n;
}

// A width x height GIF: palette index 0 red (left half), 1 blue (right half), 2 white; the
// top-left `hole` x `hole` square uses index 3, transparent. `left`/`top` place the frame on a
// screen of `screen_w` x `screen_h` (0: the frame's size).
std::string MakeGif(int width, int height, int hole, bool interlace, int left = 0, int top = 0,
                    int screen_w = 0, int screen_h = 0) {
  std::string out;
  int error = 0;
  GifFileType* gif = EGifOpen(&out, AppendGifBytes, &error);
  if (gif == nullptr) return "";
  GifColorType colours[4] = {
      {kRed.r, kRed.g, kRed.b}, {kBlue.r, kBlue.g, kBlue.b}, {255, 255, 255}, {0, 0, 0}};
  ColorMapObject* map = GifMakeMapObject(4, colours);
  EGifSetGifVersion(gif, true);
  bool ok = EGifPutScreenDesc(gif, screen_w != 0 ? screen_w : width,
                              screen_h != 0 ? screen_h : height, 2, 0, map) == GIF_OK;
  GraphicsControlBlock gcb{};
  gcb.TransparentColor = 3;
  GifByteType ext[4];
  const size_t len = EGifGCBToExtension(&gcb, ext);
  ok = ok && EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, static_cast<int>(len), ext) == GIF_OK;
  ok = ok && EGifPutImageDesc(gif, left, top, width, height, interlace, nullptr) == GIF_OK;
  std::vector<int> order;
  if (interlace) {
    for (int y = 0; y < height; y += 8) order.push_back(y);
    for (int y = 4; y < height; y += 8) order.push_back(y);
    for (int y = 2; y < height; y += 4) order.push_back(y);
    for (int y = 1; y < height; y += 2) order.push_back(y);
  } else {
    for (int y = 0; y < height; ++y) order.push_back(y);
  }
  std::vector<GifPixelType> row(static_cast<size_t>(width));
  for (int y : order) {
    for (int x = 0; x < width; ++x) {
      row[static_cast<size_t>(x)] = (x < hole && y < hole) ? 3 : (x < width / 2 ? 0 : 1);
    }
    ok = ok && EGifPutLine(gif, row.data(), width) == GIF_OK;
  }
  GifFreeMapObject(map);
  ok = EGifCloseFile(gif, &error) == GIF_OK && ok;
  return ok ? out : "";
}

std::vector<uint8_t> Halves(int width, int height, Colour left, Colour right) {
  std::vector<uint8_t> rgb;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const Colour c = x < width / 2 ? left : right;
      rgb.insert(rgb.end(), {c.r, c.g, c.b});
    }
  }
  return rgb;
}

std::string MakeWebp(int width, int height, Colour left, Colour right) {
  const std::vector<uint8_t> rgb = Halves(width, height, left, right);
  uint8_t* out = nullptr;
  const size_t size = WebPEncodeLosslessRGB(rgb.data(), width, height, width * 3, &out);
  std::string bytes(reinterpret_cast<const char*>(out), size);
  WebPFree(out);
  return bytes;
}

// Two frames: green first, then blue.
std::string MakeAnimatedWebp(int width, int height) {
  WebPAnimEncoderOptions options;
  if (WebPAnimEncoderOptionsInit(&options) == 0) return "";
  WebPAnimEncoder* encoder = WebPAnimEncoderNew(width, height, &options);
  WebPConfig config;
  WebPConfigInit(&config);
  config.lossless = 1;
  int timestamp = 0;
  for (Colour c : {kGreen, kBlue}) {
    const std::vector<uint8_t> rgb = Halves(width, height, c, c);
    WebPPicture picture;
    WebPPictureInit(&picture);
    picture.width = width;
    picture.height = height;
    picture.use_argb = 1;
    WebPPictureImportRGB(&picture, rgb.data(), width * 3);
    WebPAnimEncoderAdd(encoder, &picture, timestamp, &config);
    WebPPictureFree(&picture);
    timestamp += 100;
  }
  WebPAnimEncoderAdd(encoder, nullptr, timestamp, nullptr);
  WebPData data;
  WebPDataInit(&data);
  WebPAnimEncoderAssemble(encoder, &data);
  std::string bytes(reinterpret_cast<const char*>(data.bytes), data.size);
  WebPDataClear(&data);
  WebPAnimEncoderDelete(encoder);
  return bytes;
}

Colour At(const Rgb8Image& img, uint32_t x, uint32_t y) {
  const char* p = &img.pixels[(size_t{y} * img.width + x) * 3];
  return {static_cast<uint8_t>(p[0]), static_cast<uint8_t>(p[1]), static_cast<uint8_t>(p[2])};
}

void ExpectNear(Colour got, Colour want, const std::string& where) {
  EXPECT_NEAR(got.r, want.r, 6) << where;
  EXPECT_NEAR(got.g, want.g, 6) << where;
  EXPECT_NEAR(got.b, want.b, 6) << where;
}

TEST(GifWebpDecode, GifsAreScaledWithTransparencyOnWhiteInterlacedOrNot) {
  for (bool interlace : {false, true}) {
    const std::string gif = MakeGif(200, 100, 40, interlace);
    ASSERT_FALSE(gif.empty());
    auto scaled = DecodeScaled(gif, 50);
    ASSERT_TRUE(scaled.has_value()) << scaled.error().ToString();
    EXPECT_EQ(scaled->width, 50U);
    EXPECT_EQ(scaled->height, 25U);
    const std::string what = interlace ? "interlaced" : "progressive";
    ExpectNear(At(*scaled, 2, 2), {255, 255, 255}, what + ": the transparent hole");
    ExpectNear(At(*scaled, 15, 20), kRed, what + ": left half");
    ExpectNear(At(*scaled, 40, 20), kBlue, what + ": right half");
  }
}

TEST(GifWebpDecode, WebpsAndAnAnimationsFirstFrameAreScaled) {
  const std::string still = MakeWebp(300, 120, kRed, kBlue);
  ASSERT_FALSE(still.empty());
  auto scaled = DecodeScaled(still, 100);
  ASSERT_TRUE(scaled.has_value()) << scaled.error().ToString();
  EXPECT_EQ(scaled->width, 100U);
  EXPECT_EQ(scaled->height, 40U);
  ExpectNear(At(*scaled, 10, 20), kRed, "left half");
  ExpectNear(At(*scaled, 90, 20), kBlue, "right half");

  const std::string animated = MakeAnimatedWebp(160, 80);
  ASSERT_FALSE(animated.empty());
  auto frame = DecodeScaled(animated, 80);
  ASSERT_TRUE(frame.has_value()) << frame.error().ToString();
  EXPECT_EQ(frame->width, 80U);
  EXPECT_EQ(frame->height, 40U);
  ExpectNear(At(*frame, 40, 20), kGreen, "the first frame, not the last");
}

TEST(GifWebpDecode, FitImageTurnsOversizedGifsAndWebpsIntoJpegs) {
  for (const std::string& image :
       {MakeGif(1200, 600, 0, false), MakeWebp(1200, 600, kRed, kBlue)}) {
    ASSERT_FALSE(image.empty());
    auto fitted = FitImage(image, 300, 1 << 20);
    ASSERT_TRUE(fitted.has_value()) << fitted.error().ToString();
    EXPECT_TRUE(fitted->resized);
    EXPECT_EQ(fitted->format, ImageFormat::kJpeg);
    EXPECT_EQ(fitted->width, 300U);
    EXPECT_EQ(fitted->height, 150U);
    auto info = ReadImageInfo(fitted->bytes);
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->format, ImageFormat::kJpeg);
    // Within the limits, the bytes are kept as they are.
    auto kept = FitImage(image, 2000, 16 << 20);
    ASSERT_TRUE(kept.has_value());
    EXPECT_FALSE(kept->resized);
    EXPECT_EQ(kept->bytes, image);
  }
}

TEST(GifWebpDecode, HostileBytesAreErrorsOrClippedNeverCrashes) {
  const std::string gif = MakeGif(64, 64, 8, true);
  ASSERT_FALSE(gif.empty());
  for (size_t cut : {size_t{6}, size_t{13}, size_t{40}, gif.size() / 2, gif.size() - 2}) {
    (void)DecodeScaled(gif.substr(0, cut), 16);  // an error or a partial picture
  }
  EXPECT_FALSE(DecodeScaled(gif.substr(0, 13), 16).has_value());
  // A screen of 65535 x 65535 in a few bytes: judged before anything is allocated.
  const std::string bomb = std::string("GIF89a\xFF\xFF\xFF\xFF\x00\x00\x00", 13) + "\x3B";
  auto refused = DecodeScaled(bomb, 16);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), StatusCode::kResourceExhausted) << refused.error().ToString();
  // A frame placed partly past the screen is clipped to it.
  const std::string off = MakeGif(64, 64, 0, false, 32, 32, 80, 80);
  ASSERT_FALSE(off.empty());
  auto clipped = DecodeGifFirstFrame(off, kMaxDecodePixels);
  ASSERT_TRUE(clipped.has_value()) << clipped.error().ToString();
  EXPECT_EQ(clipped->width, 80U);
  EXPECT_EQ(clipped->pixels[3], 0) << "outside the frame: transparent";
  EXPECT_EQ(clipped->pixels[(size_t{40} * 80 + 40) * 4 + 3], 255);

  const std::string webp = MakeWebp(64, 64, kRed, kBlue);
  for (size_t cut : {size_t{12}, size_t{30}, webp.size() / 2}) {
    EXPECT_FALSE(DecodeScaled(webp.substr(0, cut), 16).has_value()) << cut;
  }
  std::string garbage = webp.substr(0, 30) + std::string(200, '\x5a');
  EXPECT_FALSE(DecodeScaled(garbage, 16).has_value());
}

}  // namespace
}  // namespace talaria::media
