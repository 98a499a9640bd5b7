// PageDriver over the Chrome DevTools Protocol: one page (a target of its own, attached as a
// flat session) in a browser reached over any CdpTransport. The local backend launches Debian's
// Chromium over --remote-debugging-pipe; a cloud provider's browser arrives as a WebSocket
// transport (ConnectWebSocket) and uses the same driver.
//
//   auto guard = talaria::web::NetworkGuard::Create({});
//   auto page = talaria::browser::LaunchLocalChromium({.guard = *guard}, limits);
//   auto snap = (*page)->Navigate("https://example.org/", limits);
//
// Every request the page makes (navigations, redirects, subresources, frames, script-started
// navigations) is paused with Fetch interception and judged by the network guard; a refused
// main-frame navigation leaves the page on about:blank and the next call (or the navigation that
// asked) returns PermissionDenied naming the rule.
// Thread-safety: as PageDriver.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>  // page_driver.h holds a Json by value

#include "talaria/base/status.h"
#include "talaria/browser/cdp_transport.h"
#include "talaria/browser/page_driver.h"
#include "talaria/web/network_guard.h"

namespace talaria::browser {

struct CdpDriverOptions {
  std::shared_ptr<const web::NetworkGuard> guard;  // required
  std::string backend = "chromium";                // what backend() says
  // Runs once when the driver closes, after the connection is gone (release a provider's
  // session, end a local browser).
  std::function<void()> on_close;
  // Connections the browser's egress proxy refused since the last call (the local Chromium's;
  // null for a remote browser): shown in the console list and given as a navigation's refusal.
  std::function<std::vector<std::string>()> egress_refusals;
};

// Opens a new page in the browser behind `transport` and attaches to it.
Result<std::unique_ptr<PageDriver>> OpenCdpPageDriver(std::unique_ptr<CdpTransport> transport,
                                                      CdpDriverOptions options,
                                                      const CallLimits& limits);

struct LocalChromiumOptions {
  std::shared_ptr<const web::NetworkGuard> guard;  // required
  std::string executable;                          // empty: found (TALARIA_CHROMIUM, Debian's)
  std::vector<std::string> extra_args;
};

// Starts a headless Chromium of its own (profile directory, process group) behind an egress
// proxy of its own (every connection it opens resolved and judged by `guard`, and made only to
// a judged address) and opens a page in it; closing the driver ends the browser and the proxy.
// FailedPrecondition when no Chromium is installed.
Result<std::unique_ptr<PageDriver>> LaunchLocalChromium(const LocalChromiumOptions& options,
                                                        const CallLimits& limits);

}  // namespace talaria::browser
