// The FAL model catalogue (the original's FAL_MODELS): how each model spells the three aspect
// ratios image_generate offers, its default arguments, and the whitelist of argument names it
// accepts (FAL models reject unknown keys, each in its own way, so the payload is filtered).
// A model not in the catalogue gets the flux family's preset sizes and only prompt and
// image_size.
// Thread-safety: immutable data.
#pragma once

#include <string>
#include <string_view>

#include "talaria/base/json.h"

namespace talaria::media {

enum class SizeStyle : unsigned char {
  kImageSizePreset,  // image_size: "landscape_16_9", "square_hd", ...
  kAspectRatio,      // aspect_ratio: "16:9", "1:1", "9:16"
  kGptLiteral,       // image_size: "1536x1024", ...
};

struct FalModel {
  std::string_view id;
  SizeStyle size_style;
  std::string_view landscape, square, portrait;
  std::string_view defaults_json;  // default arguments
  std::string_view supports_csv;   // accepted argument names, comma-separated
  bool upscale;                    // chain the Clarity upscaler after generating
};

const FalModel& FindFalModel(std::string_view id);

// The arguments for `model`: defaults, prompt, the size for `aspect_ratio` ("landscape",
// "square", "portrait"), filtered to what it supports.
Json FalArguments(const FalModel& model, std::string_view prompt, std::string_view aspect_ratio);

// The Clarity upscaler's arguments for an image URL (x2, creativity 0.35, resemblance 0.6,
// guidance 4, 18 steps).
inline constexpr std::string_view kFalUpscalerModel = "fal-ai/clarity-upscaler";
Json FalUpscalerArguments(std::string_view image_url);

}  // namespace talaria::media
