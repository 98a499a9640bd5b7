// The image codec on images made here: headers read without decoding, scaling that keeps the
// picture (colour, transparency over white, aspect), and hostile bytes (cut short, garbage,
// a header claiming billions of pixels) refused cleanly.
#include "media/image_codec.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace talaria::media {
namespace {

Rgb8Image Solid(uint32_t w, uint32_t h, uint8_t r, uint8_t g, uint8_t b) {
  Rgb8Image img;
  img.width = w;
  img.height = h;
  img.pixels.reserve(size_t{w} * h * 3);
  for (size_t i = 0; i < size_t{w} * h; ++i) {
    img.pixels += static_cast<char>(r);
    img.pixels += static_cast<char>(g);
    img.pixels += static_cast<char>(b);
  }
  return img;
}

uint32_t Crc32(std::string_view data) {
  uint32_t crc = 0xFFFFFFFFU;
  for (char c : data) {
    crc ^= static_cast<uint8_t>(c);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320U & (0U - (crc & 1U)));
  }
  return ~crc;
}

void PutBe32(std::string& s, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s += static_cast<char>((v >> shift) & 0xFF);
}

// A PNG signature and a valid IHDR claiming width x height, then nothing.
std::string PngHeaderOnly(uint32_t width, uint32_t height) {
  std::string chunk = "IHDR";
  PutBe32(chunk, width);
  PutBe32(chunk, height);
  chunk += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit RGB
  std::string png("\x89PNG\r\n\x1a\n", 8);
  PutBe32(png, 13);
  png += chunk;
  PutBe32(png, Crc32(chunk));
  return png;
}

TEST(ImageCodec, ReadsFormatAndSizeFromHeaders) {
  auto png = EncodePng(Solid(40, 30, 1, 2, 3));
  ASSERT_TRUE(png.has_value());
  auto info = ReadImageInfo(*png);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->format, ImageFormat::kPng);
  EXPECT_EQ(info->width, 40U);
  EXPECT_EQ(info->height, 30U);

  auto jpeg = EncodeJpeg(Solid(64, 48, 9, 9, 9), 80);
  ASSERT_TRUE(jpeg.has_value());
  info = ReadImageInfo(*jpeg);
  ASSERT_TRUE(info.has_value()) << info.error().ToString();
  EXPECT_EQ(info->format, ImageFormat::kJpeg);
  EXPECT_EQ(info->width, 64U);
  EXPECT_EQ(info->height, 48U);
  EXPECT_EQ(MimeType(info->format), "image/jpeg");

  info = ReadImageInfo(std::string("GIF89a\x20\x01\x10\x00", 10));
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->format, ImageFormat::kGif);
  EXPECT_EQ(info->width, 288U);
  EXPECT_EQ(info->height, 16U);

  EXPECT_FALSE(ReadImageInfo("<html>not an image</html>").has_value());
  EXPECT_FALSE(ReadImageInfo(png->substr(0, 16)).has_value()) << "IHDR cut short";
}

TEST(ImageCodec, ScalingKeepsColourAspectAndPutsTransparencyOnWhite) {
  auto png = EncodePng(Solid(300, 200, 200, 10, 10));
  ASSERT_TRUE(png.has_value());
  auto scaled = DecodeScaled(*png, 100);
  ASSERT_TRUE(scaled.has_value()) << scaled.error().ToString();
  EXPECT_EQ(scaled->width, 100U);
  EXPECT_EQ(scaled->height, 66U);
  EXPECT_EQ(static_cast<uint8_t>(scaled->pixels[0]), 200);
  EXPECT_EQ(static_cast<uint8_t>(scaled->pixels[1]), 10);

  auto small = DecodeScaled(*png, 1000);
  ASSERT_TRUE(small.has_value());
  EXPECT_EQ(small->width, 300U) << "never scaled up";

  auto jpeg = EncodeJpeg(Solid(1600, 800, 0, 0, 255), 90);
  ASSERT_TRUE(jpeg.has_value());
  auto from_jpeg = DecodeScaled(*jpeg, 200);
  ASSERT_TRUE(from_jpeg.has_value()) << from_jpeg.error().ToString();
  EXPECT_EQ(from_jpeg->width, 200U);
  EXPECT_EQ(from_jpeg->height, 100U);
  EXPECT_GT(static_cast<uint8_t>(from_jpeg->pixels[2]), 240);
  EXPECT_LT(static_cast<uint8_t>(from_jpeg->pixels[0]), 15);
}

TEST(ImageCodec, HostileBytesAreErrorsNotCrashes) {
  auto png = EncodePng(Solid(50, 50, 5, 5, 5));
  ASSERT_TRUE(png.has_value());
  EXPECT_FALSE(DecodeScaled(png->substr(0, png->size() / 2), 10).has_value());
  std::string garbage = png->substr(0, 33) + std::string(500, '\x7f');
  EXPECT_FALSE(DecodeScaled(garbage, 10).has_value());

  auto jpeg = EncodeJpeg(Solid(300, 300, 5, 5, 5), 90);
  ASSERT_TRUE(jpeg.has_value());
  // A JPEG cut short decodes (libjpeg fills the rest) or fails; it never crashes.
  (void)DecodeScaled(jpeg->substr(0, jpeg->size() / 2), 50);
  EXPECT_FALSE(DecodeScaled(jpeg->substr(0, 20), 50).has_value());

  auto bomb = DecodeScaled(PngHeaderOnly(100000, 100000), 100);
  ASSERT_FALSE(bomb.has_value());
  EXPECT_EQ(bomb.error().code(), StatusCode::kResourceExhausted) << bomb.error().ToString();
  EXPECT_FALSE(DecodeScaled("GIF89a\x01\x00\x01\x00", 10).has_value()) << "a GIF cut short";
}

TEST(ImageCodec, FitImageKeepsSmallImagesAndShrinksLargeOnes) {
  auto png = EncodePng(Solid(64, 64, 1, 2, 3));
  ASSERT_TRUE(png.has_value());
  auto kept = FitImage(*png, 100, 1 << 20);
  ASSERT_TRUE(kept.has_value());
  EXPECT_FALSE(kept->resized);
  EXPECT_EQ(kept->bytes, *png);

  auto big = EncodePng(Solid(2000, 1000, 1, 200, 3));
  ASSERT_TRUE(big.has_value());
  auto fitted = FitImage(*big, 512, 1 << 20);
  ASSERT_TRUE(fitted.has_value()) << fitted.error().ToString();
  EXPECT_TRUE(fitted->resized);
  EXPECT_EQ(fitted->format, ImageFormat::kJpeg);
  EXPECT_EQ(fitted->width, 512U);
  EXPECT_EQ(fitted->height, 256U);
  auto info = ReadImageInfo(fitted->bytes);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->width, 512U);

  const std::string huge_gif = std::string("GIF89a\x00\x10\x00\x10", 10) + std::string(1000, 'x');
  auto gif = FitImage(huge_gif, 512, 1 << 20);  // scaled now, but this one is broken
  ASSERT_FALSE(gif.has_value());
  EXPECT_EQ(gif.error().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace talaria::media
