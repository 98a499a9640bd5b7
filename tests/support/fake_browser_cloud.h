// One local server speaking the three cloud browser APIs the providers call (hermes-wave2.md
// e.3), on 127.0.0.1 (port 0):
//   Browserbase  POST /v1/sessions (X-BB-API-Key; {projectId, keepAlive?, timeout?, proxies?,
//                browserSettings?}) -> {id, connectUrl}; POST /v1/sessions/{id}
//                {projectId, status: "REQUEST_RELEASE"}
//   Browser Use  POST /api/v3/browsers (X-Browser-Use-API-Key: the key, or the gateway token
//                plus X-Idempotency-Key through the gateway) -> {id, cdpUrl};
//                PATCH /api/v3/browsers/{id} {action: "stop"}
//   Firecrawl    POST /v2/browser (Bearer; {ttl}) -> {id, cdpUrl}; DELETE /v2/browser/{id}
// Each checks the auth header, the path and the fields, and answers 401/400/404 as the real
// service would; the CDP URL it hands out is whatever the test gives it (a real Chromium's).
// Faults: a plan without keepAlive or proxies (402), the first N creates failing with 503, a
// hostile answer. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace talaria_test {

class LoopbackHttpServer;

struct FakeCloudOptions {
  std::string cdp_url;  // handed out by every create
  std::string browserbase_key = "bb-test-key";
  std::string project_id = "proj-test";
  std::string browser_use_key = "bu-test-key";
  std::string gateway_token = "gw-test-token";
  std::string firecrawl_key = "fc-test-key";
  bool plan_has_keep_alive = true;  // false: keepAlive:true answers 402
  bool plan_has_proxies = true;     // false: proxies:true answers 402
  int fail_first_creates = 0;       // these many creates answer 503 (after doing nothing)
  int fail_after_create = 0;        // these many creates make a browser, then answer 503
  std::string hostile_id{};         // non-empty: handed out as the id
};

struct FakeCloudRequest {
  std::string method, path, body;
  std::map<std::string, std::string> headers;  // lower-case names
};

class FakeBrowserCloud {
 public:
  explicit FakeBrowserCloud(FakeCloudOptions options);
  ~FakeBrowserCloud();
  FakeBrowserCloud(const FakeBrowserCloud&) = delete;
  FakeBrowserCloud& operator=(const FakeBrowserCloud&) = delete;

  std::string url() const;  // http://127.0.0.1:<port>

  std::vector<FakeCloudRequest> requests() const;
  // Sessions made and not released, by provider ("browserbase", "browser-use", "firecrawl").
  int live_sessions(const std::string& provider) const;
  int sessions_made(const std::string& provider) const;

  struct State;

 private:
  std::shared_ptr<State> state_;
  std::unique_ptr<LoopbackHttpServer> server_;
};

}  // namespace talaria_test
