// HttpClient over libcurl (net_module.h): one easy handle inside one multi handle per client, so
// the connection cache (keep-alive, TLS sessions, DNS) lives as long as the client. The transfer
// runs in a curl_multi_poll loop rather than curl_easy_perform so that a stop request (woken
// through curl_multi_wakeup) and the idle timeout are noticed at once, not at libcurl's
// once-a-second progress callback.
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/net_module.h"
#include "talaria/base/strings.h"

namespace talaria::net {
namespace {

using Clock = std::chrono::steady_clock;

// scheme://host[:port] of `url`, without user info, path or query (which may carry secrets):
// what an error message may name.
std::string Origin(std::string_view url) {
  const size_t scheme_end = url.find("://");
  const size_t host_start = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  size_t host_end = url.find_first_of("/?#", host_start);
  if (host_end == std::string_view::npos) host_end = url.size();
  std::string_view authority = url.substr(host_start, host_end - host_start);
  const size_t at = authority.rfind('@');
  if (at != std::string_view::npos) authority.remove_prefix(at + 1);
  return std::string(url.substr(0, host_start)) + std::string(authority);
}

struct CurlSlist {
  curl_slist* list = nullptr;
  CurlSlist() = default;
  CurlSlist(const CurlSlist&) = delete;
  CurlSlist& operator=(const CurlSlist&) = delete;
  ~CurlSlist() { curl_slist_free_all(list); }
  bool Append(const std::string& line) {
    curl_slist* next = curl_slist_append(list, line.c_str());
    if (next == nullptr) return false;
    list = next;
    return true;
  }
};

// What one transfer's callbacks share with the loop that drives it.
struct Transfer {
  const BodySink* sink = nullptr;
  HttpResponseHead head;
  Clock::time_point last_activity;
  bool connected = false;     // the request went out on an established connection
  bool sink_refused = false;  // the sink returned false
  bool sink_threw = false;
  curl_off_t uploaded = 0;
  size_t max_body = 0;  // 0: no cap
  size_t body_seen = 0;
  // The pin (HttpRequest::pinned_addresses), parsed; checked when a socket is opened.
  std::vector<in_addr> pinned_v4;
  std::vector<in6_addr> pinned_v6;
  bool check_pins = false;
  bool pin_refused = false;  // a socket to an address outside the pin was refused
};

bool IsPinned(const Transfer& t, const sockaddr* addr) {
  if (addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    for (const in_addr& a : t.pinned_v4) {
      if (a.s_addr == in->sin_addr.s_addr) return true;
    }
  } else if (addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    for (const in6_addr& a : t.pinned_v6) {
      if (IN6_ARE_ADDR_EQUAL(&a, &in6->sin6_addr)) return true;
    }
  }
  return false;
}

// The last word on where a connection goes: libcurl asks here for every socket it opens, so an
// address outside the pin (a resolution the pin did not cover, a proxy from the environment)
// never gets a connection.
curl_socket_t OnOpenSocket(void* user, curlsocktype /*purpose*/, curl_sockaddr* address) {
  auto* t = static_cast<Transfer*>(user);
  if (t->check_pins && !IsPinned(*t, &address->addr)) {
    t->pin_refused = true;
    return CURL_SOCKET_BAD;
  }
  return ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  t->last_activity = Clock::now();
  std::string_view line(data, n);
  line = Trim(line, "\r\n");
  if (line.starts_with("HTTP/")) {
    // A new status line (after a 100 Continue or an interim response) starts the headers over.
    t->head.headers.clear();
    return n;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return n;
  t->head.headers.emplace_back(std::string(Trim(line.substr(0, colon))),
                               std::string(Trim(line.substr(colon + 1))));
  return n;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  t->last_activity = Clock::now();
  std::string_view chunk(data, n);
  bool cut = false;
  if (t->max_body > 0 && chunk.size() > t->max_body - t->body_seen) {
    chunk = chunk.substr(0, t->max_body - t->body_seen);
    cut = true;
  }
  t->body_seen += chunk.size();
  try {
    if (!chunk.empty() && !(*t->sink)(chunk)) {
      t->sink_refused = true;
      return CURL_WRITEFUNC_ERROR;
    }
  } catch (...) {
    t->sink_threw = true;
    return CURL_WRITEFUNC_ERROR;
  }
  if (cut) {
    t->head.truncated = true;
    return CURL_WRITEFUNC_ERROR;
  }
  return n;
}

// Called once the connection is up (TCP and TLS), just before the request is sent: the idle
// clock starts here, so a slow connect is judged by connect_timeout alone.
int OnConnected(void* user, char* /*conn_primary_ip*/, char* /*conn_local_ip*/,
                int /*conn_primary_port*/, int /*conn_local_port*/) {
  auto* t = static_cast<Transfer*>(user);
  t->connected = true;
  t->last_activity = Clock::now();
  return CURL_PREREQFUNC_OK;
}

// Uploading counts as activity: a large request body going out slowly is not silence.
int OnProgress(void* user, curl_off_t /*dltotal*/, curl_off_t /*dlnow*/, curl_off_t /*ultotal*/,
               curl_off_t ulnow) {
  auto* t = static_cast<Transfer*>(user);
  if (ulnow != t->uploaded) {
    t->uploaded = ulnow;
    t->last_activity = Clock::now();
  }
  return 0;
}

Status MapCurlError(CURLcode code, const Transfer& t, std::string_view method,
                    const std::string& origin, const char* detail) {
  const std::string cause = detail[0] != '\0' ? detail : curl_easy_strerror(code);
  const std::string what = std::string(method) + " " + origin + ": " + cause;
  const std::string no_connection =
      std::string(method) + " " + origin + net_internal::kConnectFailureMark + cause + ")";
  switch (code) {
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return InvalidArgumentError(what);
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
      return UnavailableError(no_connection);
    case CURLE_OPERATION_TIMEDOUT:
      if (!t.connected) return UnavailableError(no_connection);
      return DeadlineExceededError(what);
    default:
      return UnavailableError(what);
  }
}

// The shared connection cache (net::ConnectionPool): a libcurl share handle holding connections
// and TLS sessions, with one lock per kind of shared data.
class CurlConnectionPool final : public ConnectionPool {
 public:
  explicit CurlConnectionPool(CURLSH* share) : share_(share) {
    curl_share_setopt(share_, CURLSHOPT_LOCKFUNC, &Lock);
    curl_share_setopt(share_, CURLSHOPT_UNLOCKFUNC, &Unlock);
    curl_share_setopt(share_, CURLSHOPT_USERDATA, this);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  }
  CurlConnectionPool(const CurlConnectionPool&) = delete;
  CurlConnectionPool& operator=(const CurlConnectionPool&) = delete;
  ~CurlConnectionPool() override { curl_share_cleanup(share_); }
  CURLSH* share() const { return share_; }

 private:
  static void Lock(CURL* /*easy*/, curl_lock_data data, curl_lock_access /*access*/, void* user) {
    static_cast<CurlConnectionPool*>(user)->locks_[Slot(data)].lock();
  }
  static void Unlock(CURL* /*easy*/, curl_lock_data data, void* user) {
    static_cast<CurlConnectionPool*>(user)->locks_[Slot(data)].unlock();
  }
  static size_t Slot(curl_lock_data data) {
    const auto i = static_cast<size_t>(data);
    return i < kSlots ? i : 0;
  }
  static constexpr size_t kSlots = CURL_LOCK_DATA_LAST;
  CURLSH* share_;
  std::mutex locks_[kSlots];
};

// host:port:addr[,addr...] for CURLOPT_RESOLVE, from the URL's host and (default) port; empty
// when the host is already the one pinned address (nothing to resolve). A plain
// scheme://host[:port] is split here (parsing with curl_url cost as much as the rest of a local
// request); anything else goes through curl_url.
Result<std::string> ResolveEntry(const std::string& url, const std::vector<std::string>& addrs) {
  std::string host;
  std::string port;
  const size_t scheme_end = url.find("://");
  const size_t auth_start = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  const size_t auth_end = std::min(url.find_first_of("/?#", auth_start), url.size());
  const std::string_view authority(url.data() + auth_start, auth_end - auth_start);
  const std::string_view scheme(url.data(), scheme_end == std::string::npos ? 0 : scheme_end);
  if (scheme_end != std::string::npos && (scheme == "http" || scheme == "https") &&
      !authority.empty() && authority.find_first_of("@%\\") == std::string_view::npos) {
    size_t colon = std::string_view::npos;
    if (authority.front() == '[') {
      const size_t close = authority.find(']');
      if (close != std::string_view::npos) {
        host = std::string(authority.substr(0, close + 1));
        if (close + 1 < authority.size() && authority[close + 1] == ':') colon = close + 1;
      }
    } else {
      colon = authority.rfind(':');
      host = std::string(authority.substr(0, colon));
    }
    port = colon == std::string_view::npos ? (scheme == "https" ? "443" : "80")
                                           : std::string(authority.substr(colon + 1));
  }
  if (host.empty() || port.empty()) {
    CURLU* u = curl_url();
    if (u == nullptr) return Err(InternalError("out of memory parsing a URL"));
    struct Free {
      CURLU* u;
      ~Free() { curl_url_cleanup(u); }
    } free_url{u};
    char* h = nullptr;
    char* p = nullptr;
    if (curl_url_set(u, CURLUPART_URL, url.c_str(), 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &h, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PORT, &p, CURLU_DEFAULT_PORT) != CURLUE_OK) {
      curl_free(h);
      return Err(InvalidArgumentError("not a URL libcurl can pin: " + Origin(url)));
    }
    host = h;
    port = p;
    curl_free(h);
    curl_free(p);
  }
  const std::string bare_host =
      host.size() > 2 && host.front() == '[' ? host.substr(1, host.size() - 2) : host;
  if (addrs.size() == 1 && bare_host == addrs[0]) return std::string();
  std::string entry = host + ":" + port + ":";
  for (size_t i = 0; i < addrs.size(); ++i) {
    if (i > 0) entry += ',';
    entry += addrs[i].find(':') != std::string::npos ? "[" + addrs[i] + "]" : addrs[i];
  }
  return entry;
}

class CurlHttpClient final : public HttpClient {
 public:
  CurlHttpClient(CURLM* multi, CURL* easy, std::shared_ptr<ConnectionPool> pool = nullptr)
      : multi_(multi), easy_(easy), pool_(std::move(pool)) {}
  CurlHttpClient(const CurlHttpClient&) = delete;
  CurlHttpClient& operator=(const CurlHttpClient&) = delete;
  ~CurlHttpClient() override {
    curl_easy_cleanup(easy_);
    curl_multi_cleanup(multi_);
  }

  Result<HttpResponseHead> Send(const HttpRequest& request, const BodySink& on_body,
                                std::stop_token stop) override {
    const std::string origin = Origin(request.url);
    if (request.url.find("://") == std::string::npos) {
      return Err(InvalidArgumentError("not an absolute URL: " + origin));
    }
    Transfer t;
    t.sink = &on_body;
    t.max_body = request.max_body_bytes;
    CurlSlist headers;
    CurlSlist resolve;
    TALARIA_RETURN_IF_ERROR(Prepare(request, t, headers, resolve));

    char error_detail[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(easy_, CURLOPT_ERRORBUFFER, error_detail);
    if (curl_multi_add_handle(multi_, easy_) != CURLM_OK) {
      return Err(InternalError("curl_multi_add_handle failed"));
    }
    // Removes the handle however the loop ends; its connection stays in the multi's cache.
    struct Detach {
      CURLM* multi;
      CURL* easy;
      ~Detach() { curl_multi_remove_handle(multi, easy); }
    } detach{multi_, easy_};

    std::stop_callback wake(stop, [this] { curl_multi_wakeup(multi_); });
    const Clock::time_point start = Clock::now();
    t.last_activity = start;
    std::optional<CURLcode> done;
    while (!done) {
      int running = 0;
      const CURLMcode mc = curl_multi_perform(multi_, &running);
      if (mc != CURLM_OK) {
        return Err(InternalError(std::string("curl_multi_perform: ") + curl_multi_strerror(mc)));
      }
      int queued = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi_, &queued)) {
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy_) done = msg->data.result;
      }
      if (done) break;
      if (stop.stop_requested()) {
        return Err(CancelledError(request.method + " " + origin + ": cancelled"));
      }
      int wait_ms = 200;
      const Clock::time_point now = Clock::now();
      if (t.connected && request.idle_timeout.count() > 0) {
        const auto silent =
            std::chrono::duration_cast<std::chrono::milliseconds>(now - t.last_activity);
        if (silent >= request.idle_timeout) {
          return Err(DeadlineExceededError(request.method + " " + origin + ": no data for " +
                                           std::to_string(silent.count()) + " ms"));
        }
        wait_ms = std::min<int64_t>(wait_ms, (request.idle_timeout - silent).count() + 1);
      }
      if (request.total_timeout.count() > 0 && now - start >= request.total_timeout) {
        return Err(DeadlineExceededError(request.method + " " + origin + ": took longer than " +
                                         std::to_string(request.total_timeout.count()) + " ms"));
      }
      const CURLMcode pc = curl_multi_poll(multi_, nullptr, 0, std::max(wait_ms, 1), nullptr);
      if (pc != CURLM_OK) {
        return Err(InternalError(std::string("curl_multi_poll: ") + curl_multi_strerror(pc)));
      }
    }
    if (t.sink_threw) return Err(InternalError("the response body handler threw"));
    if (t.sink_refused) {
      return Err(CancelledError(request.method + " " + origin + ": stopped by the reader"));
    }
    if (t.head.truncated) *done = CURLE_OK;  // stopped on purpose at the cap
    if (t.pin_refused && *done != CURLE_OK) {
      return Err(PermissionDeniedError(request.method + " " + origin +
                                       ": refused a connection to an address outside the pin"));
    }
    if (*done != CURLE_OK) {
      return Err(MapCurlError(*done, t, request.method, origin, error_detail));
    }
    long status = 0;  // NOLINT(google-runtime-int): libcurl's type
    curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &status);
    t.head.status = static_cast<int>(status);
    return std::move(t.head);
  }

 private:
  Status Prepare(const HttpRequest& request, Transfer& t, CurlSlist& headers, CurlSlist& resolve) {
    curl_easy_reset(easy_);  // options only: connections, DNS and TLS sessions are kept
    if (pool_ != nullptr) {
      curl_easy_setopt(easy_, CURLOPT_SHARE,
                       static_cast<CurlConnectionPool*>(pool_.get())->share());
    }
    if (request.proxy) curl_easy_setopt(easy_, CURLOPT_PROXY, request.proxy->c_str());
    if (request.decompress) curl_easy_setopt(easy_, CURLOPT_ACCEPT_ENCODING, "");
    if (!request.pinned_addresses.empty()) {
      for (const std::string& a : request.pinned_addresses) {
        in_addr v4{};
        in6_addr v6{};
        if (inet_pton(AF_INET, a.c_str(), &v4) == 1) {
          t.pinned_v4.push_back(v4);
        } else if (inet_pton(AF_INET6, a.c_str(), &v6) == 1) {
          t.pinned_v6.push_back(v6);
        } else {
          return InvalidArgumentError("a pinned address is not an IP literal: " + a);
        }
      }
      const std::string entry = TALARIA_TRY(ResolveEntry(request.url, request.pinned_addresses));
      if (!entry.empty()) {
        if (!resolve.Append(entry)) return InternalError("out of memory building the pin");
        curl_easy_setopt(easy_, CURLOPT_RESOLVE, resolve.list);
      }
      // Through a proxy named here the socket goes to the proxy; otherwise only to the pin.
      t.check_pins = !request.proxy || request.proxy->empty();
    }
    curl_easy_setopt(easy_, CURLOPT_OPENSOCKETFUNCTION, &OnOpenSocket);
    curl_easy_setopt(easy_, CURLOPT_OPENSOCKETDATA, &t);
    curl_easy_setopt(easy_, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(easy_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy_, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(easy_, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(easy_, CURLOPT_PROTOCOLS_STR, "http,https");
    // Verification stays on whatever the environment says (libcurl's defaults, spelled out).
    curl_easy_setopt(easy_, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(easy_, CURLOPT_SSL_VERIFYHOST, 2L);
    if (!request.ca_file.empty()) curl_easy_setopt(easy_, CURLOPT_CAINFO, request.ca_file.c_str());
    // Blobs are copied by libcurl (CURL_BLOB_COPY); libcurl matches a kept connection's TLS
    // settings, these among them, before it reuses the connection.
    const auto blob = [this](CURLoption option, const std::string& pem) {
      if (pem.empty()) return;
      curl_blob b{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
      curl_easy_setopt(easy_, option, &b);
    };
    blob(CURLOPT_CAINFO_BLOB, request.ca_pem);
    blob(CURLOPT_SSLCERT_BLOB, request.client_cert_pem);
    blob(CURLOPT_SSLKEY_BLOB, request.client_key_pem);
    if (!request.client_cert_pem.empty()) curl_easy_setopt(easy_, CURLOPT_SSLCERTTYPE, "PEM");
    if (!request.client_key_pem.empty()) curl_easy_setopt(easy_, CURLOPT_SSLKEYTYPE, "PEM");
    // No Accept-Encoding: a compressing server (or proxy) holds back small pieces of an event
    // stream until its compressor's buffer fills, and a model's stream is mostly small pieces.
    curl_easy_setopt(easy_, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(request.connect_timeout.count()));  // NOLINT
    curl_easy_setopt(easy_, CURLOPT_HEADERFUNCTION, &OnHeader);
    curl_easy_setopt(easy_, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(easy_, CURLOPT_WRITEFUNCTION, &OnBody);
    curl_easy_setopt(easy_, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(easy_, CURLOPT_PREREQFUNCTION, &OnConnected);
    curl_easy_setopt(easy_, CURLOPT_PREREQDATA, &t);
    curl_easy_setopt(easy_, CURLOPT_XFERINFOFUNCTION, &OnProgress);
    curl_easy_setopt(easy_, CURLOPT_XFERINFODATA, &t);
    curl_easy_setopt(easy_, CURLOPT_NOPROGRESS, 0L);

    if (request.method == "GET") {
      curl_easy_setopt(easy_, CURLOPT_HTTPGET, 1L);
    } else if (request.method == "HEAD") {
      curl_easy_setopt(easy_, CURLOPT_NOBODY, 1L);
    } else {
      if (request.method != "POST") {
        curl_easy_setopt(easy_, CURLOPT_CUSTOMREQUEST, request.method.c_str());
      }
      curl_easy_setopt(easy_, CURLOPT_POST, 1L);
      curl_easy_setopt(easy_, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(request.body.size()));
      curl_easy_setopt(easy_, CURLOPT_POSTFIELDS, request.body.data());
    }
    for (const auto& [name, value] : request.headers) {
      if (name.empty() || name.find_first_of(":\r\n") != std::string::npos ||
          value.find_first_of("\r\n") != std::string::npos) {
        return InvalidArgumentError("a request header name or value holds a line break or colon");
      }
      // "Name;" is libcurl's spelling of a header sent with an empty value.
      std::string line = name;
      line += value.empty() ? ";" : ": ";
      line += value;
      if (!headers.Append(line)) {
        return InternalError("out of memory building request headers");
      }
    }
    // libcurl would otherwise wait for a "100 Continue" before sending a large body.
    if (!headers.Append("Expect:")) return InternalError("out of memory building request headers");
    curl_easy_setopt(easy_, CURLOPT_HTTPHEADER, headers.list);
    return Status::Ok();
  }

  CURLM* multi_;
  CURL* easy_;
  std::shared_ptr<ConnectionPool> pool_;  // null: the multi handle's own cache
};

}  // namespace

namespace net_internal {

Status StartCurl() {
  static std::once_flag once;
  static CURLcode init = CURLE_OK;
  std::call_once(once, [] { init = curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (init != CURLE_OK) {
    return UnavailableError(std::string("libcurl failed to start: ") + curl_easy_strerror(init));
  }
  return Status::Ok();
}

Result<std::shared_ptr<ConnectionPool>> MakeCurlConnectionPool() {
  TALARIA_RETURN_IF_ERROR(StartCurl());
  CURLSH* share = curl_share_init();
  if (share == nullptr) return Err(UnavailableError("libcurl could not create a share handle"));
  return std::shared_ptr<ConnectionPool>(std::make_shared<CurlConnectionPool>(share));
}

Result<std::unique_ptr<HttpClient>> MakeCurlPooledHttpClient(std::shared_ptr<ConnectionPool> pool) {
  TALARIA_RETURN_IF_ERROR(StartCurl());
  CURLM* multi = curl_multi_init();
  CURL* easy = curl_easy_init();
  if (multi == nullptr || easy == nullptr) {
    if (easy != nullptr) curl_easy_cleanup(easy);
    if (multi != nullptr) curl_multi_cleanup(multi);
    return Err(UnavailableError("libcurl could not create a transfer handle"));
  }
  return std::unique_ptr<HttpClient>(
      std::make_unique<CurlHttpClient>(multi, easy, std::move(pool)));
}

Result<std::unique_ptr<HttpClient>> MakeCurlHttpClient() {
  TALARIA_RETURN_IF_ERROR(StartCurl());
  CURLM* multi = curl_multi_init();
  CURL* easy = curl_easy_init();
  if (multi == nullptr || easy == nullptr) {
    if (easy != nullptr) curl_easy_cleanup(easy);
    if (multi != nullptr) curl_multi_cleanup(multi);
    return Err(UnavailableError("libcurl could not create a transfer handle"));
  }
  return std::unique_ptr<HttpClient>(std::make_unique<CurlHttpClient>(multi, easy));
}

}  // namespace net_internal
}  // namespace talaria::net
