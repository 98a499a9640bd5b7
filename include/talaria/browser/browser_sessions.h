// One browser per task: the browser tools ask for the PageDriver of their call's task_id; the
// first call starts it (the local Chromium by default, or the provider `browser.provider`
// names), later calls reuse it, and it is closed by browser_close, after
// `browser.inactivity_timeout` seconds idle, or when talaria exits. Calls on one task's browser
// run one at a time.
//
//   talaria::browser::RegisterDriverFactory("browserbase", [](const DriverRequest& r) {...});
//
// Thread-safety: every function is thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>  // page_driver.h holds a Json by value

#include "talaria/base/status.h"
#include "talaria/browser/page_driver.h"
#include "talaria/web/network_guard.h"

namespace talaria::browser {

struct DriverRequest {
  std::string task_id;
  std::shared_ptr<const web::NetworkGuard> guard;  // what every page request is judged by
  CallLimits limits;
};
using DriverFactory =
    std::function<Result<std::unique_ptr<PageDriver>>(const DriverRequest& request)>;

// Makes `name` selectable as `browser.provider` ("local" is built in). Replaces an earlier
// factory of that name.
void RegisterDriverFactory(std::string name, DriverFactory factory);

// Closes the task's browser; false when it had none.
bool CloseBrowserSession(std::string_view task_id);
// Closes every browser (talaria's exit does this too).
void CloseAllBrowserSessions();
int BrowserSessionCount();

}  // namespace talaria::browser
