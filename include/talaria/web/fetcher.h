// Fetcher: talaria's own GET of a web page behind the network guard. Every hop is admitted by
// the guard (resolved by talaria, every address judged) and its connection pinned to the
// judged addresses; redirects are followed here, not by libcurl: at most 10, http and https
// only, never from https down to http. The body is streamed into a size cap; text comes back as
// UTF-8 whatever charset the page was in. Connections are kept alive in one pool shared by all
// fetches of the Fetcher (parallel fetches reuse each other's).
//
//   auto fetcher = talaria::web::Fetcher::Create(guard, {});
//   auto page = (*fetcher)->Fetch("https://example.org", ctx.cancel, ctx.deadline);
//
// Proxies come from the usual variables (http_proxy, https_proxy, all_proxy, no_proxy and their
// upper-case forms, as libcurl reads them). Through a proxy the proxy resolves the name; the
// guard still judges what talaria resolves.
// Thread-safety: Fetch is thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/net/http_client.h"
#include "talaria/web/network_guard.h"

namespace talaria::web {

struct FetchOptions {
  size_t max_bytes = size_t{10} << 20;        // decoded body bytes kept; the rest is not read
  std::chrono::milliseconds timeout{30'000};  // the whole fetch, redirects included
  int max_redirects = 10;
  std::string user_agent = "Mozilla/5.0 (compatible; talaria-web/1.0)";
  std::string accept =
      "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5";
  std::string ca_file;  // HTTPS trust anchors instead of the system's (tests, private CAs)
};

struct FetchedPage {
  std::string url;  // the final URL, after redirects
  int status = 0;
  std::string content_type;            // the header as sent
  std::string media_type;              // lower case, no parameters
  std::string body;                    // the bytes as received (decompressed)
  bool truncated = false;              // the body passed max_bytes and was cut there
  std::vector<std::string> redirects;  // the URLs redirected from, in order
};

// The proxy libcurl would use for `scheme`://`host` from the environment; "" for none.
std::string ProxyFromEnvironment(std::string_view scheme, std::string_view host);

class Fetcher {
 public:
  static Result<std::shared_ptr<Fetcher>> Create(std::shared_ptr<const NetworkGuard> guard,
                                                 FetchOptions options = {});

  // GETs `url`. Errors: PermissionDenied from the guard (the message names the rule) for the
  // URL or any redirect hop; InvalidArgument for a bad URL or redirect; Unavailable (no
  // connection, TLS), DeadlineExceeded, Cancelled as HttpClient::Send; FailedPrecondition for
  // too many redirects. Any HTTP status comes back as a page (the caller judges 4xx/5xx).
  Result<FetchedPage> Fetch(std::string_view url, const std::stop_token& stop = {},
                            std::chrono::steady_clock::time_point deadline =
                                std::chrono::steady_clock::time_point::max()) const;

  const NetworkGuard& guard() const { return *guard_; }

 private:
  Fetcher() = default;
  Result<std::unique_ptr<net::HttpClient>> TakeClient() const;
  void ReturnClient(std::unique_ptr<net::HttpClient> client) const;

  std::shared_ptr<const NetworkGuard> guard_;
  FetchOptions options_;
  std::shared_ptr<net::ConnectionPool> pool_;
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<net::HttpClient>> idle_;  // Guarded by mu_.
};

}  // namespace talaria::web
