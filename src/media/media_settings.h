// The config.yaml sections and environment the media tools read (the original's keys where it
// had them):
//
//   image_gen:
//     provider: fal                  # fal or openai; default: fal when FAL_KEY or a gateway
//                                    #   token is set, else openai when OPENAI_API_KEY is
//     model: fal-ai/flux-2/klein/9b  # FAL model (env FAL_IMAGE_MODEL wins); see fal_models.h
//     openai_model: gpt-image-1      # the OpenAI images model
//     use_gateway: false             # prefer the managed gateway over FAL_KEY
//     timeout: 300                   # seconds for one generation (queue wait included)
//   auxiliary:
//     vision:
//       model: gpt-4o-mini           # default: the main model (model.name, TALARIA_MODEL)
//       base_url: https://api.openai.com/v1   # default: model.base_url, TALARIA_BASE_URL
//       api_key_env: OPENAI_API_KEY  # default: model.api_key_env, then TALARIA_API_KEY,
//                                    #   OPENAI_API_KEY
//       temperature: 0.1
//       timeout: 120                 # seconds
//       max_dimension: 2048          # longer side, pixels; larger images are scaled down
//       max_image_bytes: 5242880     # larger images are re-encoded (JPEG) smaller
//
// Keys: FAL_KEY, OPENAI_API_KEY; endpoints FAL_QUEUE_URL (default https://queue.fal.run) and
// OPENAI_BASE_URL (default https://api.openai.com/v1) for a proxy or a test's fake.
// Thread-safety: value types; the loaders read the process's config (ToolCallConfig) on each
// call.
#pragma once

#include <cstdint>
#include <string>

#include "talaria/base/status.h"
#include "talaria/core/config.h"

namespace talaria::media {

struct ImageGenSettings {
  std::string provider;  // "", "fal", "openai"
  std::string model = "fal-ai/flux-2/klein/9b";
  std::string openai_model = "gpt-image-1";
  bool use_gateway = false;
  int64_t timeout_seconds = 300;
};

struct VisionSettings {
  std::string model;
  bool own_model = false;  // auxiliary.vision.model was set (not the main model's name)
  std::string base_url;
  std::string api_key_env;  // the variable the key came from
  std::string api_key;
  double temperature = 0.1;
  int64_t timeout_seconds = 120;
  int64_t max_dimension = 2048;
  int64_t max_image_bytes = int64_t{5} << 20;
};

std::string MediaEnv(const char* name);

Result<ImageGenSettings> ImageGenSettingsFromConfig(const Config& config);
Result<ImageGenSettings> LoadImageGenSettings();
Result<VisionSettings> VisionSettingsFromConfig(const Config& config);
Result<VisionSettings> LoadVisionSettings();

// $TALARIA_HOME/cache/images
std::string ImageCacheDir();

}  // namespace talaria::media
