// vision_analyze (toolset vision): an image (a path in the workspace, or an http(s) URL fetched
// through the network guard) and a question, sent to the configured vision model as
// OpenAI-compatible image input (vision_model.h: scaled down when too large, halved and sent
// once more when the endpoint still says so). The original's result shapes:
//   {"success": true, "analysis": "..."}    {"success": false, "error": "..."}
#include <algorithm>
#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "media/media_http.h"
#include "media/media_settings.h"
#include "media/vision_model.h"
#include "talaria/base/strings.h"
#include "talaria/confinement/workspace.h"
#include "talaria/core/tool_registration.h"
#include "talaria/tools/session_services.h"

namespace talaria::media {
namespace {

constexpr std::string_view kVisionSchema = R"json({
  "name": "vision_analyze",
  "description": "Look at an image and answer a question about it with a vision model. The image is a path to an image file in the workspace or an http(s) URL. The answer describes the image fully, then answers the question.",
  "parameters": {
    "type": "object",
    "properties": {
      "image_url": {"type": "string", "description": "An http(s) URL of the image, or a path to an image file in the workspace (PNG, JPEG, GIF or WebP)."},
      "question": {"type": "string", "description": "What to find out about the image."}
    },
    "required": ["image_url", "question"]
  }
})json";

// Bytes read from a file or a URL before any check (a larger source is refused).
constexpr size_t kMaxSourceBytes = size_t{40} << 20;

ToolResult VisionFailure(const std::string& message) {
  ToolResult r = ToolResult::Text(DumpJson(Json{{"success", false}, {"error", message}}));
  r.status = CallStatus::kError;
  return r;
}

Result<std::string> ReadSource(const std::string& source, ToolContext& ctx,
                               std::chrono::steady_clock::time_point deadline) {
  if (source.rfind("http://", 0) == 0 || source.rfind("https://", 0) == 0) {
    return FetchBytes(source, kMaxSourceBytes, ctx.cancel, deadline);
  }
  if (source.find("://") != std::string::npos || source.rfind("data:", 0) == 0) {
    return Err(InvalidArgumentError("image_url must be an http(s) URL or a workspace path"));
  }
  const safety::Workspace* workspace = tools::WorkspaceOf(ctx);
  if (workspace == nullptr) {
    return Err(FailedPreconditionError("a local image needs a workspace; this call has none"));
  }
  return workspace->ReadAll(source, kMaxSourceBytes);
}

ToolResult VisionAnalyze(const Json& args, ToolContext& ctx) {
  const std::string source = JsonStringField(args, "image_url");
  const std::string question = JsonStringField(args, "question");
  if (source.empty()) return VisionFailure("image_url is empty");
  if (question.find_first_not_of(" \t\r\n") == std::string::npos) {
    return VisionFailure("question is empty");
  }
  auto settings = LoadVisionSettings();
  if (!settings) return VisionFailure(settings.error().message());
  if (settings->model.empty()) {
    return VisionFailure(
        "no vision model is configured: set auxiliary.vision.model in config.yaml");
  }
  const auto deadline = std::min(ctx.deadline, std::chrono::steady_clock::now() +
                                                   std::chrono::seconds(settings->timeout_seconds));
  auto bytes = ReadSource(source, ctx, deadline);
  if (!bytes) return VisionFailure("cannot read the image: " + bytes.error().message());
  const std::string prompt =
      "Fully describe and explain everything about this image, then answer the following "
      "question:\n\n" +
      question;
  auto answer = AskVisionModel(*settings, *bytes, prompt, ctx.cancel, deadline);
  if (!answer) return VisionFailure(answer.error().message());
  const std::string& analysis = *answer;
  ToolResult r = ToolResult::Text(DumpJson(Json{{"success", true}, {"analysis", analysis}}));
  // What a model says about an image from outside is data, not instructions.
  if (source.rfind("http", 0) == 0) r.untrusted_source = "vision_analyze";
  return r;
}

bool VisionConfigured() {
  auto s = LoadVisionSettings();
  return s.has_value() && !s->model.empty();
}

// What `talaria tools` says when no vision model is configured ("" when one is).
std::string VisionWhatToSet() {
  auto s = LoadVisionSettings();
  if (!s) return s.error().message();
  return s->model.empty() ? "no vision model: set auxiliary.vision.model (or model.name) in "
                            "config.yaml"
                          : "";
}

ToolSpec MakeVisionSpec() {
  ToolSpec spec;
  spec.name = "vision_analyze";
  spec.toolset = "vision";
  spec.schema = kVisionSchema;
  spec.handler = VisionAnalyze;
  spec.check_fn = VisionConfigured;
  spec.unavailable_reason = VisionWhatToSet;
  spec.emoji = "\xF0\x9F\x91\x81";  // "👁"
  spec.parallel = ParallelClass::kSafe;
  spec.counts_as_read = true;
  spec.annotations.read_only = true;
  spec.annotations.open_world = true;
  return spec;
}

}  // namespace
}  // namespace talaria::media

TALARIA_TOOL(VisionAnalyze, talaria::media::MakeVisionSpec());
