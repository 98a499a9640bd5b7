// The analyzer slot of talaria/browser/screenshot_analyzer.h.
#include "talaria/browser/screenshot_analyzer.h"

#include <atomic>

namespace talaria::browser {
namespace {

std::atomic<ScreenshotAnalyzer> g_analyzer{nullptr};

}  // namespace

void SetScreenshotAnalyzer(ScreenshotAnalyzer analyzer) { g_analyzer.store(analyzer); }

ScreenshotAnalyzer CurrentScreenshotAnalyzer() { return g_analyzer.load(); }

}  // namespace talaria::browser
