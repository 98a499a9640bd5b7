// How browser_vision asks a vision model about a screenshot. The browser module sits below the
// modules that talk to models, so it holds only a slot: the media module, which owns the
// `auxiliary.vision` config and its client, fills it when it loads. With no analyzer, or one
// that says no vision model is configured, browser_vision returns the screenshot itself as an
// image block for a model that takes images.
// Thread-safety: the slot is an atomic pointer; set it at load, read it from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "talaria/base/status.h"
#include "talaria/core/tool_context.h"

namespace talaria::browser {

// The model's answer about `png` (PNG bytes), std::nullopt when no auxiliary vision model is
// configured, or the error of asking it.
using ScreenshotAnalyzer = Result<std::optional<std::string>> (*)(std::string_view png,
                                                                  std::string_view question,
                                                                  ToolContext& ctx);

void SetScreenshotAnalyzer(ScreenshotAnalyzer analyzer);
ScreenshotAnalyzer CurrentScreenshotAnalyzer();

}  // namespace talaria::browser
