// Fills browser_vision's analyzer slot (talaria/browser/screenshot_analyzer.h) with the
// auxiliary vision model: when `auxiliary.vision.model` is set, the screenshot goes to that
// model with the question (the original's aux `vision` path); otherwise the answer is "none
// configured" and browser_vision hands the image to the model that asked.
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "media/media_settings.h"
#include "media/vision_model.h"
#include "talaria/browser/screenshot_analyzer.h"

namespace talaria::media {
namespace {

Result<std::optional<std::string>> AnalyzeScreenshot(std::string_view png,
                                                     std::string_view question, ToolContext& ctx) {
  VisionSettings s = TALARIA_TRY(LoadVisionSettings());
  if (!s.own_model) return std::optional<std::string>();
  const auto deadline = std::min(
      ctx.deadline, std::chrono::steady_clock::now() + std::chrono::seconds(s.timeout_seconds));
  const std::string prompt =
      "This is a screenshot of a web page in a browser. Describe what it shows that bears on "
      "the question, then answer it.\n\nQuestion: " +
      std::string(question);
  std::string answer = TALARIA_TRY(AskVisionModel(s, png, prompt, ctx.cancel, deadline));
  return std::optional<std::string>(std::move(answer));
}

[[maybe_unused]] const bool kInstalled = (browser::SetScreenshotAnalyzer(AnalyzeScreenshot), true);

}  // namespace
}  // namespace talaria::media
