// image_generate (toolset image_gen): a prompt and an aspect ratio to an image saved under
// $TALARIA_HOME/cache/images/, through FAL's queue API (directly with FAL_KEY or through the
// managed tool gateway) or OpenAI's images API. The agent picks neither backend nor model: the
// user's config does (media_settings.h). The original's result shapes:
//   {"success": true, "image": "<absolute path>"}
//   {"success": false, "image": null, "error": "...", "error_type": "..."}
#include <chrono>
#include <filesystem>
#include <string>
#include <system_error>

#include <nlohmann/json.hpp>

#include "media/fal_models.h"
#include "media/fal_queue.h"
#include "media/image_codec.h"
#include "media/media_http.h"
#include "media/media_settings.h"
#include "talaria/base/base64.h"
#include "talaria/base/file_io.h"
#include "talaria/base/random.h"
#include "talaria/core/tool_registration.h"
#include "talaria/net/tool_gateway.h"

namespace talaria::media {
namespace {

constexpr std::string_view kSchema = R"json({
  "name": "image_generate",
  "description": "Generate an image from a text prompt. The image is saved locally and its path returned; show it to the user or pass the path to other tools. The backend and model are chosen by the user's configuration.",
  "parameters": {
    "type": "object",
    "properties": {
      "prompt": {"type": "string", "description": "What the image should show: subject, style, composition, lighting."},
      "aspect_ratio": {"type": "string", "enum": ["landscape", "square", "portrait"], "default": "landscape", "description": "The image's shape."}
    },
    "required": ["prompt"]
  }
})json";

constexpr size_t kMaxImageBytes = size_t{50} << 20;

ToolResult Failure(const Status& s) {
  std::string type;
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
      type = "invalid_argument";
      break;
    case StatusCode::kNotFound:
    case StatusCode::kFailedPrecondition:
      type = "not_configured";
      break;
    case StatusCode::kPermissionDenied:
      type = "permission_denied";
      break;
    case StatusCode::kDeadlineExceeded:
      type = "timeout";
      break;
    case StatusCode::kCancelled:
      type = "cancelled";
      break;
    default:
      type = "backend_error";
      break;
  }
  ToolResult r = ToolResult::Text(DumpJson(
      Json{{"success", false}, {"image", nullptr}, {"error", s.message()}, {"error_type", type}}));
  r.status = CallStatus::kError;
  return r;
}

std::string FalKey() { return MediaEnv("FAL_KEY"); }
std::string OpenAiKey() { return MediaEnv("OPENAI_API_KEY"); }
bool FalUsable() { return !FalKey().empty() || net::ToolGatewayConfigured("fal"); }

// The provider to use: image_gen.provider when set, else FAL when it has a key or a gateway
// token, else OpenAI when it has a key. NotFound naming what to set.
Result<std::string> ChooseProvider(const ImageGenSettings& s) {
  if (!s.provider.empty()) return s.provider;
  if (FalUsable()) return std::string("fal");
  if (!OpenAiKey().empty()) return std::string("openai");
  return Err(NotFoundError(
      "no image generation backend is configured: set FAL_KEY (or a tool gateway token: "
      "TOOL_GATEWAY_USER_TOKEN) or OPENAI_API_KEY"));
}

// Saves `bytes` as cache/images/<prefix>_<random>.<ext>; the absolute path.
Result<std::string> SaveImage(std::string_view bytes, std::string_view prefix) {
  const ImageFormat format = SniffImageFormat(bytes);
  if (format == ImageFormat::kUnknown) {
    return Err(UnavailableError("the backend's image is not a PNG, JPEG, GIF or WebP"));
  }
  const std::string dir = ImageCacheDir();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Err(UnavailableError("cannot create " + dir + ": " + ec.message()));
  const std::string path =
      dir + "/" + std::string(prefix) + "_" + RandomHex(8) + "." + std::string(Extension(format));
  TALARIA_RETURN_IF_ERROR(WriteFileAtomic(path, bytes, {.mode = 0644, .sync = false}));
  return path;
}

// The first image's URL in a FAL result.
Result<std::string> FirstFalImage(const Json& result) {
  if (result.contains("images") && result["images"].is_array() && !result["images"].empty()) {
    const Json& first = result["images"][0];
    if (std::string url = first.is_object() ? JsonStringField(first, "url") : ""; !url.empty()) {
      return url;
    }
  }
  if (result.contains("image") && result["image"].is_object()) {
    if (std::string url = JsonStringField(result["image"], "url"); !url.empty()) return url;
  }
  return Err(UnavailableError("FAL answered without images[0].url"));
}

FalPolling PollingFromEnv() {
  FalPolling p;
  // Tests and impatient users: TALARIA_FAL_POLL_MS sets the first poll interval.
  if (std::string ms = MediaEnv("TALARIA_FAL_POLL_MS"); !ms.empty()) {
    const long v = std::strtol(ms.c_str(), nullptr, 10);
    if (v > 0 && v < 60'000) p.first = std::chrono::milliseconds(v);
  }
  return p;
}

Result<std::string> GenerateWithFal(const ImageGenSettings& s, std::string_view prompt,
                                    std::string_view aspect, ToolContext& ctx,
                                    std::chrono::steady_clock::time_point deadline) {
  const std::string key = FalKey();
  auto gateway = TALARIA_TRY(net::PickToolGateway(
      "fal", !key.empty(),
      s.use_gateway ? net::GatewayPreference::kGatewayFirst : net::GatewayPreference::kDirectFirst,
      ctx.cancel));
  FalTarget target;
  if (gateway) {
    target = {gateway->origin, gateway->auth_header, true};
  } else {
    std::string origin = MediaEnv("FAL_QUEUE_URL");
    if (origin.empty()) origin = "https://queue.fal.run";
    while (!origin.empty() && origin.back() == '/') origin.pop_back();
    target = {origin, {"Authorization", "Key " + key}, false};
  }
  const FalModel& model = FindFalModel(s.model);
  const FalPolling polling = PollingFromEnv();
  const Json result = TALARIA_TRY(RunFalQueue(target, s.model, FalArguments(model, prompt, aspect),
                                              polling, ctx.cancel, deadline));
  std::string url = TALARIA_TRY(FirstFalImage(result));
  if (model.upscale && url.rfind("data:", 0) != 0) {
    // The upscaled image when the upscaler works; the original one when it does not.
    auto upscaled = RunFalQueue(target, kFalUpscalerModel, FalUpscalerArguments(url), polling,
                                ctx.cancel, deadline);
    if (upscaled) {
      if (auto better = FirstFalImage(*upscaled)) url = std::move(*better);
    }
  }
  const std::string bytes = TALARIA_TRY(FetchBytes(url, kMaxImageBytes, ctx.cancel, deadline));
  return SaveImage(bytes, "fal");
}

// OpenAI's images API: POST {OPENAI_BASE_URL}/images/generations.
Result<std::string> GenerateWithOpenAi(const ImageGenSettings& s, std::string_view prompt,
                                       std::string_view aspect, ToolContext& ctx,
                                       std::chrono::steady_clock::time_point deadline) {
  const std::string key = OpenAiKey();
  if (key.empty())
    return Err(NotFoundError("image_gen.provider is openai but OPENAI_API_KEY is not set"));
  std::string base = MediaEnv("OPENAI_BASE_URL");
  if (base.empty()) base = "https://api.openai.com/v1";
  while (!base.empty() && base.back() == '/') base.pop_back();
  const bool dalle3 = s.openai_model == "dall-e-3";
  const std::string size = aspect == "square"     ? "1024x1024"
                           : aspect == "portrait" ? (dalle3 ? "1024x1792" : "1024x1536")
                                                  : (dalle3 ? "1792x1024" : "1536x1024");
  Json body = {{"model", s.openai_model}, {"prompt", prompt}, {"n", 1}, {"size", size}};
  if (s.openai_model.rfind("dall-e", 0) == 0) body["response_format"] = "b64_json";
  net::HttpRequest req;
  req.method = "POST";
  req.url = base + "/images/generations";
  req.headers = {{"Authorization", "Bearer " + key}};
  req.body = DumpJson(body);
  req.total_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::max<std::chrono::steady_clock::duration>(deadline - std::chrono::steady_clock::now(),
                                                    std::chrono::seconds(1)));
  const JsonAnswer answer = TALARIA_TRY(SendJson("OpenAI images", std::move(req), ctx.cancel));
  if (answer.status < 200 || answer.status > 299) {
    std::string message = "OpenAI images answered HTTP " + std::to_string(answer.status) + ": " +
                          ServiceError(answer);
    if (answer.status == 401 || answer.status == 403) return Err(PermissionDeniedError(message));
    if (answer.status == 400) return Err(InvalidArgumentError(message));
    return Err(UnavailableError(message));
  }
  const Json& data =
      answer.body.is_object() && answer.body.contains("data") ? answer.body["data"] : Json();
  if (!data.is_array() || data.empty() || !data[0].is_object()) {
    return Err(UnavailableError("OpenAI images answered without data[0]"));
  }
  std::string bytes;
  if (std::string b64 = JsonStringField(data[0], "b64_json"); !b64.empty()) {
    bytes = TALARIA_TRY(Base64Decode(b64, Base64Alphabet::kStandardOrUrlSafe));
  } else if (std::string url = JsonStringField(data[0], "url"); !url.empty()) {
    bytes = TALARIA_TRY(FetchBytes(url, kMaxImageBytes, ctx.cancel, deadline));
  } else {
    return Err(UnavailableError("OpenAI images answered without b64_json or url"));
  }
  return SaveImage(bytes, "openai");
}

ToolResult ImageGenerate(const Json& args, ToolContext& ctx) {
  const std::string prompt = JsonStringField(args, "prompt");
  if (prompt.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Failure(InvalidArgumentError("prompt is empty"));
  }
  std::string aspect = JsonStringField(args, "aspect_ratio");
  if (aspect.empty()) aspect = "landscape";
  if (aspect != "landscape" && aspect != "square" && aspect != "portrait") {
    return Failure(InvalidArgumentError("aspect_ratio must be landscape, square or portrait"));
  }
  auto settings = LoadImageGenSettings();
  if (!settings) return Failure(settings.error());
  auto provider = ChooseProvider(*settings);
  if (!provider) return Failure(provider.error());
  const auto deadline = std::min(ctx.deadline, std::chrono::steady_clock::now() +
                                                   std::chrono::seconds(settings->timeout_seconds));
  auto path = *provider == "openai" ? GenerateWithOpenAi(*settings, prompt, aspect, ctx, deadline)
                                    : GenerateWithFal(*settings, prompt, aspect, ctx, deadline);
  if (!path) return Failure(path.error());
  return ToolResult::Text(DumpJson(Json{{"success", true}, {"image", *path}}));
}

// What `talaria tools` says when no backend is configured ("" when one is).
std::string WhatToSet() {
  auto s = LoadImageGenSettings();
  if (!s) return s.error().message();
  auto p = ChooseProvider(*s);
  return p ? std::string() : p.error().message();
}

ToolSpec MakeSpec() {
  ToolSpec spec;
  spec.name = "image_generate";
  spec.toolset = "image_gen";
  spec.schema = kSchema;
  spec.handler = ImageGenerate;
  spec.check_fn = [] {
    auto s = LoadImageGenSettings();
    return s.has_value() && ChooseProvider(*s).has_value();
  };
  spec.unavailable_reason = WhatToSet;
  spec.emoji = "\xF0\x9F\x8E\xA8";  // "🎨"
  spec.parallel = ParallelClass::kSafe;
  spec.annotations.open_world = true;
  return spec;
}

}  // namespace
}  // namespace talaria::media

TALARIA_TOOL(ImageGenerate, talaria::media::MakeSpec());
