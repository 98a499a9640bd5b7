// The `browser` section of config.yaml:
//
//   browser:
//     inactivity_timeout: 120     # seconds a task's browser may sit idle before it is closed
//     command_timeout: 30         # seconds per browser call (navigate: at least 60)
//     snapshot_threshold: 8000    # characters of snapshot the model sees; the rest goes to a file
//     allow_private: ["127.0.0.1:8080"]   # added to web.allow_private for the browser
//     executable: /usr/lib/chromium/chromium   # default: found (TALARIA_CHROMIUM, Debian's)
//     provider: local             # or a provider registered with RegisterDriverFactory
//
// Thread-safety: value types; LoadBrowserSettings reads the process's config (ToolCallConfig)
// each call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/core/config.h"

namespace talaria::browser {

struct BrowserSettings {
  int64_t inactivity_timeout_s = 120;
  int64_t command_timeout_s = 30;
  int64_t snapshot_threshold = 8'000;
  std::vector<std::string> allow_private;  // browser's own plus web's
  std::string executable;
  std::string provider = "local";
};

Result<BrowserSettings> BrowserSettingsFromConfig(const Config& config);
Result<BrowserSettings> LoadBrowserSettings();

}  // namespace talaria::browser
