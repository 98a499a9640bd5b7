// The FAL model catalogue (fal_models.h); entries follow the original's catalogue.
#include "media/fal_models.h"

#include <array>
#include <string>

#include <nlohmann/json.hpp>

namespace talaria::media {
namespace {

constexpr std::string_view kPresets[] = {"landscape_16_9", "square_hd", "portrait_16_9"};

constexpr std::array<FalModel, 9> kModels = {{
    {"fal-ai/flux-2/klein/9b", SizeStyle::kImageSizePreset, kPresets[0], kPresets[1], kPresets[2],
     R"({"num_inference_steps":4,"output_format":"png","enable_safety_checker":false})",
     "prompt,image_size,num_inference_steps,seed,output_format,enable_safety_checker", false},
    {"fal-ai/flux-2-pro", SizeStyle::kImageSizePreset, kPresets[0], kPresets[1], kPresets[2],
     R"({"num_inference_steps":50,"guidance_scale":4.5,"num_images":1,"output_format":"png",)"
     R"("enable_safety_checker":false,"safety_tolerance":"5","sync_mode":true})",
     "prompt,image_size,num_inference_steps,guidance_scale,num_images,output_format,"
     "enable_safety_checker,safety_tolerance,sync_mode,seed",
     true},
    {"fal-ai/z-image/turbo", SizeStyle::kImageSizePreset, kPresets[0], kPresets[1], kPresets[2],
     R"({"num_inference_steps":8,"num_images":1,"output_format":"png",)"
     R"("enable_safety_checker":false,"enable_prompt_expansion":false})",
     "prompt,image_size,num_inference_steps,num_images,seed,output_format,enable_safety_checker,"
     "enable_prompt_expansion",
     false},
    {"fal-ai/nano-banana-pro", SizeStyle::kAspectRatio, "16:9", "1:1", "9:16",
     R"({"num_images":1,"output_format":"png","safety_tolerance":"5","resolution":"1K"})",
     "prompt,aspect_ratio,num_images,output_format,safety_tolerance,seed,sync_mode,resolution,"
     "enable_web_search,limit_generations",
     false},
    {"fal-ai/gpt-image-1.5", SizeStyle::kGptLiteral, "1536x1024", "1024x1024", "1024x1536",
     R"({"quality":"medium","num_images":1,"output_format":"png"})",
     "prompt,image_size,quality,num_images,output_format,background,sync_mode", false},
    {"fal-ai/gpt-image-2", SizeStyle::kImageSizePreset, "landscape_4_3", "square_hd",
     "portrait_4_3", R"({"quality":"medium","num_images":1,"output_format":"png"})",
     "prompt,image_size,quality,num_images,output_format,sync_mode", false},
    {"fal-ai/ideogram/v3", SizeStyle::kImageSizePreset, kPresets[0], kPresets[1], kPresets[2],
     R"({"rendering_speed":"BALANCED","expand_prompt":true,"style":"AUTO"})",
     "prompt,image_size,rendering_speed,expand_prompt,style,seed", false},
    {"fal-ai/recraft/v4/pro/text-to-image", SizeStyle::kImageSizePreset, kPresets[0], kPresets[1],
     kPresets[2], R"({"enable_safety_checker":false})",
     "prompt,image_size,enable_safety_checker,colors,background_color", false},
    {"fal-ai/qwen-image", SizeStyle::kImageSizePreset, kPresets[0], kPresets[1], kPresets[2],
     R"({"num_inference_steps":30,"guidance_scale":2.5,"num_images":1,"output_format":"png",)"
     R"("acceleration":"regular"})",
     "prompt,image_size,num_inference_steps,guidance_scale,num_images,output_format,"
     "acceleration,seed,sync_mode",
     false},
}};

constexpr FalModel kUnknown = {
    "",   SizeStyle::kImageSizePreset, kPresets[0], kPresets[1], kPresets[2],
    "{}", "prompt,image_size",         false};

bool Supports(const FalModel& m, std::string_view key) {
  std::string_view rest = m.supports_csv;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    if (rest.substr(0, comma) == key) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

const FalModel& FindFalModel(std::string_view id) {
  for (const FalModel& m : kModels) {
    if (m.id == id) return m;
  }
  return kUnknown;
}

Json FalArguments(const FalModel& model, std::string_view prompt, std::string_view aspect_ratio) {
  Json args = ParseJson(model.defaults_json).value_or(Json::object());
  args["prompt"] = prompt;
  const std::string_view size = aspect_ratio == "square"     ? model.square
                                : aspect_ratio == "portrait" ? model.portrait
                                                             : model.landscape;
  args[model.size_style == SizeStyle::kAspectRatio ? "aspect_ratio" : "image_size"] = size;
  Json filtered = Json::object();
  for (auto it = args.begin(); it != args.end(); ++it) {
    if (Supports(model, it.key())) filtered[it.key()] = it.value();
  }
  return filtered;
}

Json FalUpscalerArguments(std::string_view image_url) {
  return Json{{"image_url", image_url},
              {"prompt", "masterpiece, best quality, highres"},
              {"negative_prompt", "(worst quality, low quality, normal quality:2)"},
              {"upscale_factor", 2},
              {"creativity", 0.35},
              {"resemblance", 0.6},
              {"guidance_scale", 4},
              {"num_inference_steps", 18},
              {"enable_safety_checker", false}};
}

}  // namespace talaria::media
