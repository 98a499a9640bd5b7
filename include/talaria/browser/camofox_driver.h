// Camofox (a local anti-detection Firefox behind a REST API, hermes-wave2.md e.3) as a
// PageDriver: its REST calls replace CDP. One driver is one Camofox user (random per driver)
// with one tab, made by the first Navigate; Close deletes the user's session.
//
//   auto driver = talaria::browser::MakeCamofoxDriver({.url = "http://localhost:9377",
//                                                      .session_key = task_id, .guard = guard});
//   auto snap = (*driver)->Navigate("https://example.org", limits);
//
// The network guard judges the URL before Camofox is asked and the URL Camofox landed on (after
// its redirects); a refused landing sends the tab to about:blank. Camofox fetches subresources
// itself, out of talaria's sight. Snapshots come back in talaria's line format
// ("- link \"More\" [ref=e1]") whatever Camofox's ("[link e1] More"); pages are followed across
// Camofox's 80,000-character pagination up to 2 MB. Camofox has no console API: Console is
// FailedPrecondition. Type relies on Camofox's fill (it replaces the field's value).
// Thread-safety: as PageDriver (calls serialized by the caller; Close from any thread).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "talaria/base/status.h"
#include "talaria/browser/page_driver.h"
#include "talaria/web/network_guard.h"

namespace talaria::browser {

struct CamofoxOptions {
  std::string url;          // Camofox's base URL (CAMOFOX_URL)
  std::string api_key;      // sent as Bearer (Camofox's evaluate requires it when configured)
  std::string user_id;      // empty: "talaria-<random>"
  std::string session_key;  // groups the tab (the task id); empty: "talaria"
  std::shared_ptr<const web::NetworkGuard> guard;  // null: URLs are not judged
  std::chrono::milliseconds request_timeout{30'000};
};

// A driver for the Camofox at options.url, after a GET /health answered. InvalidArgument for an
// empty URL; Unavailable when Camofox does not answer (the message names the URL).
Result<std::unique_ptr<PageDriver>> MakeCamofoxDriver(CamofoxOptions options);

}  // namespace talaria::browser
