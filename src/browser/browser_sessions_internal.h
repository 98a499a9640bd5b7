// The tools' side of browser_sessions.h: a lease on a task's browser for one call.
// Thread-safety: AcquireBrowser is thread-safe; a lease belongs to one call.
#pragma once

#include <memory>
#include <mutex>
#include <string_view>

#include "browser/browser_settings.h"
#include "talaria/browser/browser_sessions.h"

namespace talaria::browser {

struct BrowserSlot;

// Holds the task's browser for one call (other calls of the task wait) and marks it used.
class BrowserLease {
 public:
  BrowserLease(std::shared_ptr<BrowserSlot> slot, std::unique_lock<std::mutex> lock);
  ~BrowserLease();
  BrowserLease(BrowserLease&&) noexcept;
  BrowserLease& operator=(BrowserLease&&) = delete;
  PageDriver& driver() const;
  // The last whole (unscoped, default) snapshot the tools returned from this browser: what an
  // action's result is diffed against. Empty until one was taken.
  Snapshot& last_snapshot() const;

 private:
  std::shared_ptr<BrowserSlot> slot_;
  std::unique_lock<std::mutex> lock_;
};

// The task's browser, started when it has none. Errors: no Chromium (FailedPrecondition), an
// unknown provider (InvalidArgument), a browser that does not start.
Result<BrowserLease> AcquireBrowser(std::string_view task_id, const BrowserSettings& settings,
                                    const CallLimits& limits);

}  // namespace talaria::browser
