#include "sandboxes/api_http.h"

#include <cstdint>
#include <thread>

#include <nlohmann/json.hpp>

#include "talaria/base/base64.h"
#include "talaria/base/random.h"
#include "talaria/base/shell_words.h"

namespace talaria::sandboxes {

Result<std::unique_ptr<ApiHttp>> ApiHttp::Make(std::string what, std::string base_url,
                                               net::HeaderList headers, std::string ca_file) {
  if (base_url.empty()) return Err(InvalidArgumentError(what + ": no API URL configured"));
  while (!base_url.empty() && base_url.back() == '/') base_url.pop_back();
  // One pool for the process: a thousand sandboxes of one service share a handful of kept-alive
  // connections instead of holding one each.
  static const Result<std::shared_ptr<net::ConnectionPool>> shared = net::MakeConnectionPool();
  if (!shared) return Err(shared.error());
  std::shared_ptr<net::ConnectionPool> pool = *shared;
  return std::unique_ptr<ApiHttp>(new ApiHttp(std::move(what), std::move(base_url),
                                              std::move(headers), std::move(ca_file),
                                              std::move(pool)));
}

ApiHttp::ApiHttp(std::string what, std::string base_url, net::HeaderList headers,
                 std::string ca_file, std::shared_ptr<net::ConnectionPool> pool)
    : what_(std::move(what)),
      base_url_(std::move(base_url)),
      ca_file_(std::move(ca_file)),
      pool_(std::move(pool)),
      headers_(std::move(headers)) {}

ApiHttp::~ApiHttp() = default;

void ApiHttp::UseTls(std::string ca_pem, std::string client_cert_pem, std::string client_key_pem) {
  ca_pem_ = std::move(ca_pem);
  client_cert_pem_ = std::move(client_cert_pem);
  client_key_pem_ = std::move(client_key_pem);
}

Result<std::unique_ptr<net::HttpClient>> ApiHttp::Take() {
  {
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      auto client = std::move(free_.back());
      free_.pop_back();
      return client;
    }
  }
  return net::MakeHttpClient(pool_);
}

void ApiHttp::Give(std::unique_ptr<net::HttpClient> client) {
  std::lock_guard lock(mu_);
  free_.push_back(std::move(client));
}

void ApiHttp::RenewAuthWith(std::function<Result<net::HeaderList>()> renew) {
  renew_ = std::move(renew);
}

void RenewKeyWith(ApiHttp& http, const std::function<Result<std::string>()>& renew,
                  std::function<net::HeaderList(const std::string& key)> headers_for) {
  if (!renew) return;
  http.RenewAuthWith([renew, headers_for = std::move(headers_for)]() -> Result<net::HeaderList> {
    const std::string key = TALARIA_TRY(renew());
    return headers_for(key);
  });
}

Result<ApiAnswer> ApiHttp::Send(const Call& call, std::stop_token stop) {
  net::HeaderList headers;
  {
    std::lock_guard lock(mu_);
    headers = headers_;
  }
  ApiAnswer answer = TALARIA_TRY(SendWith(call, headers, stop));
  if (answer.status != 401 || !renew_) return answer;
  auto renewed = renew_();
  if (!renewed || *renewed == headers) return answer;  // nothing better to offer: the 401 stands
  {
    std::lock_guard lock(mu_);
    headers_ = *renewed;
  }
  return SendWith(call, *renewed, std::move(stop));
}

Result<ApiAnswer> ApiHttp::SendWith(const Call& call, const net::HeaderList& headers,
                                    std::stop_token stop) {
  net::HttpRequest req;
  req.method = call.method;
  req.url = call.url.rfind("http", 0) == 0 ? call.url : base_url_ + call.url;
  req.headers = headers;
  req.headers.insert(req.headers.end(), call.headers.begin(), call.headers.end());
  if (call.body != nullptr) {
    req.body = DumpJson(*call.body);
    req.headers.emplace_back("Content-Type", "application/json");
  }
  req.headers.emplace_back("Accept", "application/json");
  req.connect_timeout = call.connect_timeout;
  req.idle_timeout = call.timeout;
  req.total_timeout = call.timeout;
  req.ca_file = ca_file_;
  req.ca_pem = ca_pem_;
  req.client_cert_pem = client_cert_pem_;
  req.client_key_pem = client_key_pem_;
  req.proxy = "";  // the services are reached directly (a proxy would see the API key)
  auto client = TALARIA_TRY(Take());
  ApiAnswer answer;
  auto head = client->Send(
      req,
      [&](std::string_view chunk) {
        answer.body.append(chunk);
        return true;
      },
      std::move(stop));
  if (!head) return Err(Status(head.error().code(), what_ + ": " + head.error().message()));
  Give(std::move(client));
  answer.status = head->status;
  if (!answer.body.empty()) {
    if (auto parsed = ParseJson(answer.body)) answer.json = std::move(*parsed);
  }
  return answer;
}

Result<ApiAnswer> ApiHttp::Expect2xx(const Call& call, int attempts, const std::stop_token& stop) {
  Status last = UnavailableError(what_ + ": no attempt made");
  for (int attempt = 0; attempt < attempts; ++attempt) {
    if (attempt > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100 << (2 * (attempt - 1))));
    }
    if (stop.stop_requested()) return Err(CancelledError(what_ + ": cancelled"));
    auto answer = Send(call, stop);
    if (!answer) {
      last = answer.error();
      if (last.code() == StatusCode::kCancelled) return Err(last);
      continue;
    }
    if (answer->status >= 200 && answer->status < 300) return answer;
    last = ServiceError(what_, *answer);
    if (answer->status < 500 && answer->status != 429) return Err(last);
  }
  return Err(last);
}

Status ServiceError(const std::string& what, const ApiAnswer& answer) {
  std::string text;
  if (answer.json.is_object()) {
    for (const char* key : {"error", "message", "code"}) {
      auto it = answer.json.find(key);
      if (it == answer.json.end()) continue;
      text = it->is_string() ? it->get<std::string>() : DumpJson(*it);
      break;
    }
  }
  if (text.empty()) text = answer.body.substr(0, 200);
  std::string message = what + ": HTTP " + std::to_string(answer.status);
  if (!text.empty()) message += ": " + text;
  if (answer.status == 404) return NotFoundError(std::move(message));
  if (answer.status == 401 || answer.status == 403)
    return PermissionDeniedError(std::move(message));
  if (answer.status == 409) return FailedPreconditionError(std::move(message));
  return UnavailableError(std::move(message));
}

std::string ScriptWithStdin(const std::string& script, std::string_view stdin_data) {
  if (stdin_data.empty()) return script;
  return "printf %s " + ShellQuote(Base64Encode(stdin_data)) + " | base64 -d | {\n" + script +
         "\n}";
}

std::string NewUuid() {
  std::string h = RandomHex(16);
  h[12] = '4';
  h[16] = "89ab"[static_cast<unsigned char>(h[16]) % 4];
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20);
}

}  // namespace talaria::sandboxes
