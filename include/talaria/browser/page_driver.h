// What the browser tools ask of a browser, whatever drives it: Chromium over CDP (local or a
// cloud provider's) or Camofox's REST API. One PageDriver is one task's browser with one
// current page. Refs are the snapshot's "eN" (the tools strip the model's "@").
//
// Thread-safety: calls on one driver are serialized by the caller (one task); Close may be
// called from any thread and makes a blocked call return Cancelled or Unavailable.
#pragma once

#include <chrono>
#include <cstdint>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

// Evaluation holds a Json by value: the complete type, not json_fwd.hpp.
#include <nlohmann/json.hpp>

#include "talaria/base/json.h"
#include "talaria/base/status.h"

namespace talaria::browser {

struct CallLimits {
  std::chrono::steady_clock::time_point deadline;
  std::stop_token cancel;
};

struct Snapshot {
  std::string text;  // "- heading \"Example\" [ref=e1]\n- link \"More\" [ref=e2]\n..."
  int element_count = 0;
  std::string url;
  std::string title;
  // Names the document the refs belong to: two snapshots with the same non-empty value can be
  // compared line by line (their refs name the same elements). "" when the driver cannot say.
  std::string document;
};

struct SnapshotOptions {
  bool full = false;  // every node, not only the interesting ones
  std::string scope;  // a ref ("e12") or CSS selector to snapshot under; empty: the page
};

struct PageImage {
  std::string src, alt;
  int64_t width = 0, height = 0;
};

struct ConsoleEntry {
  std::string type;  // "log", "warning", "error", ... or "exception" for a JS error
  std::string text;
};

class PageDriver {
 public:
  virtual ~PageDriver() = default;
  virtual std::string_view backend() const = 0;  // "chromium", "browserbase", "camofox", ...

  // Navigation is judged by the network guard; a refused URL (or a redirect to one) leaves the
  // page on about:blank and returns PermissionDenied naming the rule.
  virtual Result<Snapshot> Navigate(std::string_view url, const CallLimits& limits) = 0;
  virtual Result<Snapshot> TakeSnapshot(const SnapshotOptions& options,
                                        const CallLimits& limits) = 0;
  // Click, Type and Press return once the page has settled after them: what the action started
  // (a navigation's load, timers, requests, DOM changes) has ended, within a bound of the
  // driver's, so a snapshot taken next shows its outcome.
  virtual Status Click(std::string_view ref, const CallLimits& limits) = 0;
  // Clears the field first.
  virtual Status Type(std::string_view ref, std::string_view text, const CallLimits& limits) = 0;
  virtual Status Scroll(bool down, const CallLimits& limits) = 0;  // 500 px
  virtual Result<std::string> Back(const CallLimits& limits) = 0;  // the URL landed on
  virtual Status Press(std::string_view key, const CallLimits& limits) = 0;
  virtual Result<std::vector<PageImage>> Images(const CallLimits& limits) = 0;
  // PNG bytes; with `annotate`, ref labels drawn on the interactive elements.
  virtual Result<std::string> Screenshot(bool annotate, const CallLimits& limits) = 0;
  // The expression's value as JSON (undefined -> null) and its JS type.
  struct Evaluation {
    Json value;
    std::string type;
  };
  virtual Result<Evaluation> Evaluate(std::string_view expression, const CallLimits& limits) = 0;
  // Messages and JS errors since the last clear.
  virtual Result<std::vector<ConsoleEntry>> Console(bool clear, const CallLimits& limits) = 0;
  virtual void Close() = 0;
};

}  // namespace talaria::browser
