// Fetcher (fetcher.h): the redirect loop, each hop through the guard and pinned.
#include "talaria/web/fetcher.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include "talaria/base/ascii.h"
#include "talaria/base/strings.h"
#include "talaria/html/url_resolve.h"
#include "talaria/web/charset.h"

namespace talaria::web {
namespace {

using Clock = std::chrono::steady_clock;

std::string FetcherEnv(const char* name) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read-only use
  return v == nullptr ? "" : v;
}

bool IsRedirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

}  // namespace

std::string ProxyFromEnvironment(std::string_view scheme, std::string_view host) {
  std::string no_proxy = FetcherEnv("no_proxy");
  if (no_proxy.empty()) no_proxy = FetcherEnv("NO_PROXY");
  if (no_proxy == "*") return "";
  size_t start = 0;
  while (start <= no_proxy.size()) {
    size_t end = no_proxy.find(',', start);
    if (end == std::string::npos) end = no_proxy.size();
    std::string entry = AsciiLower(Trim(std::string_view(no_proxy).substr(start, end - start)));
    if (!entry.empty() && entry.front() == '.') entry.erase(0, 1);
    if (!entry.empty() && (host == entry || (host.size() > entry.size() && host.ends_with(entry) &&
                                             host[host.size() - entry.size() - 1] == '.'))) {
      return "";
    }
    start = end + 1;
  }
  // libcurl reads http_proxy only in lower case (HTTP_PROXY can be set by a CGI request).
  std::string proxy = scheme == "https" ? FetcherEnv("https_proxy") : FetcherEnv("http_proxy");
  if (proxy.empty() && scheme == "https") proxy = FetcherEnv("HTTPS_PROXY");
  if (proxy.empty()) proxy = FetcherEnv("all_proxy");
  if (proxy.empty()) proxy = FetcherEnv("ALL_PROXY");
  return proxy;
}

Result<std::shared_ptr<Fetcher>> Fetcher::Create(std::shared_ptr<const NetworkGuard> guard,
                                                 FetchOptions options) {
  std::shared_ptr<Fetcher> f(new Fetcher());
  f->guard_ = std::move(guard);
  f->options_ = std::move(options);
  f->pool_ = TALARIA_TRY(net::MakeConnectionPool());
  return f;
}

Result<std::unique_ptr<net::HttpClient>> Fetcher::TakeClient() const {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
  }
  return net::MakeHttpClient(pool_);
}

void Fetcher::ReturnClient(std::unique_ptr<net::HttpClient> client) const {
  std::lock_guard lock(mu_);
  if (idle_.size() < 8) idle_.push_back(std::move(client));
}

Result<FetchedPage> Fetcher::Fetch(std::string_view url, const std::stop_token& stop,
                                   Clock::time_point deadline) const {
  const Clock::time_point own = Clock::now() + options_.timeout;
  deadline = std::min(deadline, own);
  std::unique_ptr<net::HttpClient> client = TALARIA_TRY(TakeClient());
  FetchedPage page;
  std::string current(url);
  std::string scheme_before;
  for (int hop = 0;; ++hop) {
    const Admitted admitted = TALARIA_TRY(guard_->Admit(current, stop));
    if (scheme_before == "https" && admitted.url.scheme != "https") {
      return Err(PermissionDeniedError(std::string(kGuardRefusal) + "a redirect from https to " +
                                       admitted.url.origin() +
                                       " is not followed (rule: scheme-change)"));
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      return Err(DeadlineExceededError("GET " + admitted.url.origin() + ": out of time"));
    }
    net::HttpRequest req;
    req.url = admitted.url.normalized;
    req.headers = {{"User-Agent", options_.user_agent}, {"Accept", options_.accept}};
    req.decompress = true;
    req.connect_timeout = std::min(left, std::chrono::milliseconds(10'000));
    req.idle_timeout = left;
    req.total_timeout = left;
    req.ca_file = options_.ca_file;
    req.pinned_addresses = admitted.PinList();
    req.proxy = ProxyFromEnvironment(admitted.url.scheme, admitted.url.host);
    req.max_body_bytes = options_.max_bytes;
    page.body.clear();
    auto head = client->Send(
        req,
        [&](std::string_view chunk) {
          page.body.append(chunk);
          return true;
        },
        stop);
    // On an error the connection may be mid-transfer: the client is dropped, not reused.
    if (!head) return Err(head.error());
    page.truncated = head->truncated;
    if (!page.truncated) ReturnClient(std::move(client));
    page.status = head->status;
    page.content_type = head->Header("Content-Type");
    page.media_type = MediaType(page.content_type);
    page.url = admitted.url.normalized;
    if (!IsRedirect(head->status) || page.truncated) return page;
    const std::string location = head->Header("Location");
    if (location.empty()) return page;
    if (hop >= options_.max_redirects) {
      return Err(FailedPreconditionError("GET " + admitted.url.origin() + ": more than " +
                                         std::to_string(options_.max_redirects) + " redirects"));
    }
    page.redirects.push_back(page.url);
    scheme_before = admitted.url.scheme;
    current = html::ResolveUrl(page.url, location);
    client = TALARIA_TRY(TakeClient());
  }
}

}  // namespace talaria::web
