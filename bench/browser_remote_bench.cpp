// The remote browser path (issue 23, provider side): CDP over ConnectWebSocket to a real local
// Chromium (what a cloud provider's browser is reached by), and a provider's REST round trip
// against the local fake.
//   browser_ws_connect_ms        handshake to a ready transport (the module already loaded)
//   browser_ws_module_load_ms    the first ConnectWebSocket's extra cost: loading
//                                libtalaria_browser_ws.so (and OpenSSL)
//   browser_ws_eval_rtt_p50_us   Runtime.evaluate("1+1") on a flat session, reply received
//   browser_ws_eval_rtt_p99_us
//   browser_provider_acquire_release_ms  Browserbase create + release against the fake (libcurl)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "support/fake_browser_cloud.h"
#include "support/local_chromium.h"
#include "support/loopback_http.h"
#include "talaria/browser/cdp_transport.h"
#include "talaria/browser/providers.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

talaria::browser::WebSocketOptions Options(const std::string& url) {
  talaria::browser::WebSocketOptions o;
  o.url = url;
  return o;
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

nlohmann::json ReplyTo(talaria::browser::CdpTransport& t, int id) {
  while (true) {
    auto m = t.Receive(Clock::now() + 20s, {});
    if (!m) {
      std::fprintf(stderr, "receive: %s\n", m.error().message().c_str());
      std::exit(1);
    }
    auto j = nlohmann::json::parse(*m, nullptr, false);
    if (j.is_object() && j.value("id", -1) == id) return j;
  }
}

}  // namespace

int main() {
  std::string why;
  auto chromium = talaria_test::LocalChromium::Start(why);
  if (!chromium) {
    std::fprintf(stderr, "browser_remote_bench: %s\n", why.c_str());
    return 1;
  }
  const std::string url = chromium->browser_ws_url();
  // The module's load alone: a connect refused at once, first (loads it) and again.
  const std::string refused =
      "ws://127.0.0.1:" + std::to_string(talaria_test::UnusedLoopbackPort());
  auto t0 = Clock::now();
  (void)talaria::browser::ConnectWebSocket(Options(refused));
  const double first_ms = Ms(Clock::now() - t0);
  t0 = Clock::now();
  (void)talaria::browser::ConnectWebSocket(Options(refused));
  const double load_ms = first_ms - Ms(Clock::now() - t0);

  auto first = talaria::browser::ConnectWebSocket(Options(url));
  if (!first) {
    std::fprintf(stderr, "connect: %s\n", first.error().message().c_str());
    return 1;
  }
  std::vector<double> connects;
  for (int i = 0; i < 20; ++i) {
    t0 = Clock::now();
    auto t = talaria::browser::ConnectWebSocket(Options(url));
    connects.push_back(Ms(Clock::now() - t0));
  }
  const double connect_ms = talaria_bench::Median(connects);
  talaria_bench::PrintMetric("browser_ws_connect_ms", connect_ms, "ms");
  talaria_bench::PrintMetric("browser_ws_module_load_ms", load_ms, "ms");

  auto& t = **first;
  int id = 1;
  (void)t.Send(R"({"id":1,"method":"Target.createTarget","params":{"url":"about:blank"}})");
  const std::string target = ReplyTo(t, id)["result"].value("targetId", "");
  (void)t.Send(R"({"id":2,"method":"Target.attachToTarget","params":{"targetId":")" + target +
               R"(","flatten":true}})");
  const std::string session = ReplyTo(t, ++id)["result"].value("sessionId", "");
  std::vector<double> rtts;
  for (int i = 0; i < 1000; ++i) {
    ++id;
    const std::string cmd = R"({"id":)" + std::to_string(id) + R"(,"sessionId":")" + session +
                            R"(","method":"Runtime.evaluate","params":{"expression":"1+1"}})";
    t0 = Clock::now();
    (void)t.Send(cmd);
    ReplyTo(t, id);
    rtts.push_back(Ms(Clock::now() - t0) * 1000);
  }
  std::sort(rtts.begin(), rtts.end());
  talaria_bench::PrintMetric("browser_ws_eval_rtt_p50_us", talaria_bench::Median(rtts), "us");
  talaria_bench::PrintMetric("browser_ws_eval_rtt_p99_us", rtts[rtts.size() * 99 / 100], "us");
  t.Close();

  talaria_test::FakeBrowserCloud cloud({.cdp_url = url});
  talaria::browser::BrowserbaseSettings s;
  s.api_key = "bb-test-key";
  s.project_id = "proj-test";
  s.base_url = cloud.url();
  auto provider = talaria::browser::MakeBrowserbaseProvider(s, 10s);
  std::vector<double> cycles;
  for (int i = 0; i < 50; ++i) {
    t0 = Clock::now();
    auto remote = provider->Acquire("bench", {});
    if (!remote || !provider->Release(*remote).ok()) {
      std::fprintf(stderr, "provider cycle failed\n");
      return 1;
    }
    cycles.push_back(Ms(Clock::now() - t0));
  }
  talaria_bench::PrintMetric("browser_provider_acquire_release_ms", talaria_bench::Median(cycles),
                             "ms");
  return 0;
}
