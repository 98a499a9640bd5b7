// JSON over HTTP to one sandbox service: a base URL, the auth headers every request carries, a
// shared connection pool and a free list of clients (HttpClient serves one request at a time;
// an exec and the call that ends it run at once). Errors carry the service's status and its
// error text ({error|message|code}), never the headers.
// Thread-safety: thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/net/http_client.h"

namespace talaria::sandboxes {

struct ApiAnswer {
  int status = 0;
  std::string body;
  // The body as JSON; null when it is empty or not JSON.
  Json json;
};

class ApiHttp {
 public:
  // `what` names the service in errors ("daytona").
  static Result<std::unique_ptr<ApiHttp>> Make(std::string what, std::string base_url,
                                               net::HeaderList headers, std::string ca_file);
  ~ApiHttp();

  struct Call {
    std::string method = "GET";
    std::string url;  // absolute, or a path joined to the base URL
    const Json* body = nullptr;
    net::HeaderList headers;  // beyond the service's
    std::chrono::milliseconds timeout{60'000};
    std::chrono::milliseconds connect_timeout{10'000};
  };
  // One request; any HTTP status is an answer. Errors: the transport's (Unavailable,
  // DeadlineExceeded, Cancelled).
  Result<ApiAnswer> Send(const Call& call, std::stop_token stop = {});
  // Send, retried (same request: callers make retried creates idempotent) on transport
  // failures and 5xx/429 up to `attempts` times with a growing pause; a 2xx answer or an error
  // naming the status and the service's message otherwise.
  Result<ApiAnswer> Expect2xx(const Call& call, int attempts = 3, const std::stop_token& stop = {});

  // PEM material in memory for every request (a kubeconfig's): certificates to trust instead
  // of ca_file, and a client certificate with its key. REQUIRES: before the first request.
  void UseTls(std::string ca_pem, std::string client_cert_pem, std::string client_key_pem);

  // On a 401 answer, asks `renew` for the service's headers anew and, when they changed (a
  // token that expired mid-session and was refreshed), sends the request once more with them;
  // later requests carry them too. REQUIRES: before the first request.
  void RenewAuthWith(std::function<Result<net::HeaderList>()> renew);

  const std::string& what() const { return what_; }
  const std::string& base_url() const { return base_url_; }

 private:
  ApiHttp(std::string what, std::string base_url, net::HeaderList headers, std::string ca_file,
          std::shared_ptr<net::ConnectionPool> pool);
  Result<ApiAnswer> SendWith(const Call& call, const net::HeaderList& headers,
                             std::stop_token stop);
  Result<std::unique_ptr<net::HttpClient>> Take();
  void Give(std::unique_ptr<net::HttpClient> client);

  const std::string what_;
  const std::string base_url_;
  const std::string ca_file_;
  std::string ca_pem_;           // set once by UseTls, before any request
  std::string client_cert_pem_;  // likewise
  std::string client_key_pem_;   // likewise
  const std::shared_ptr<net::ConnectionPool> pool_;
  std::mutex mu_;
  std::vector<std::unique_ptr<net::HttpClient>> free_;  // Guarded by mu_.
  net::HeaderList headers_;                             // Guarded by mu_.
  std::function<Result<net::HeaderList>()> renew_;      // set once by RenewAuthWith
};

// A Call without designated initializers (which -Wextra faults for the members left out).
inline ApiHttp::Call MakeCall(std::string method, std::string url, const Json* body = nullptr) {
  ApiHttp::Call call;
  call.method = std::move(method);
  call.url = std::move(url);
  call.body = body;
  return call;
}

// Every dialect's 401 renewal: when `renew` is set (SandboxServiceOptions::renew_api_key), a
// refused request asks it for the key anew and `headers_for` turns the key into the service's
// headers (Bearer, X-API-Key, ...); `http` then resends once (RenewAuthWith).
void RenewKeyWith(ApiHttp& http, const std::function<Result<std::string>()>& renew,
                  std::function<net::HeaderList(const std::string& key)> headers_for);

// "{what}: HTTP {status}: {error text}" from an answer that was not 2xx.
Status ServiceError(const std::string& what, const ApiAnswer& answer);

// `script` with `stdin_data` fed to it through a base64 pipe, for exec APIs without stdin.
std::string ScriptWithStdin(const std::string& script, std::string_view stdin_data);

// A random RFC 4122 version 4 UUID (idempotency keys, exec ids).
std::string NewUuid();

}  // namespace talaria::sandboxes
