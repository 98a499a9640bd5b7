// The browser tools' costs on the page the peers were measured on (peers-wave2.md §3.6): 300
// rows of {link, button, input} plus a form (~3,600 accessibility nodes), served from
// 127.0.0.1, in Debian's Chromium over the pipe. Prints METRIC lines:
//   browser_launch_ms            spawn Chromium, connect, open and attach a page
//   browser_first_snapshot_ms    navigate (load) + the first snapshot, injected script included
//   browser_snapshot_p50_ms      snapshot of the loaded page (goal <= 60; playwright-mcp 112-181)
//   browser_click_p50_ms         click on a ref: locate + mouse down/up + the wait for what it
//                                started to end (here an attribute change) (goal <= 10; pw-mcp 724)
//   browser_click_idle_p50_ms    the same on an element whose click starts nothing
//   browser_action_p50_ms        what browser_click costs in all: click, snapshot, diff
//   browser_action_diff_bytes    the diff an action answers with / the snapshot it replaces
//   browser_eval_p50_ms          Runtime.evaluate("1+1") round trip (goal <= 1)
//   browser_snapshot_bytes / browser_ax_tree_bytes / browser_snapshot_shrink_x
#include <chrono>
#include <cstdio>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "browser/cdp_page_driver_impl.h"
#include "browser/chromium_process.h"
#include "browser/snapshot_diff.h"

using namespace std::chrono_literals;
using talaria::browser::CallLimits;

namespace {

double Ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

CallLimits Within(std::chrono::seconds s) {
  return {.deadline = std::chrono::steady_clock::now() + s, .cancel = {}};
}

std::string Page() {
  std::string rows;
  for (int i = 0; i < 300; ++i) {
    const std::string n = std::to_string(i);
    rows += "<li><a href='#r" + n + "'>Row link " + n +
            "</a> <button onclick='this.dataset.c=1'>Buy " + n +
            "</button> <input aria-label='Qty " + n + "' value='" + n + "'></li>";
  }
  return "<!doctype html><html><head><title>Bench</title></head><body><h1>Catalogue</h1>"
         "<form><label>Name <input name=n></label><label>Email <input type=email name=e></label>"
         "<select name=s><option>a</option><option>b</option></select><button>Send</button></form>"
         "<ul>" +
         rows + "</ul></body></html>";
}

}  // namespace

int main() {
  if (talaria::browser::FindChromium().empty()) {
    std::fprintf(stderr, "browser_bench: no Chromium installed\n");
    return 0;
  }
  httplib::Server server;
  const std::string html = Page();
  server.Get("/", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(html, "text/html");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(1ms);
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";

  auto guard = talaria::web::NetworkGuard::Create(
      {.allow_private = {"127.0.0.1:" + std::to_string(port)}, .resolver = nullptr});
  auto t0 = std::chrono::steady_clock::now();
  auto driver = talaria::browser::LaunchLocalChromium(
      {.guard = *guard, .executable = "", .extra_args = {}}, Within(60s));
  if (!driver) {
    std::fprintf(stderr, "browser_bench: %s\n", driver.error().message().c_str());
    return 1;
  }
  talaria_bench::PrintMetric("browser_launch_ms", Ms(std::chrono::steady_clock::now() - t0), "ms");
  auto* page = dynamic_cast<talaria::browser::CdpPageDriver*>(driver->get());

  t0 = std::chrono::steady_clock::now();
  auto first = page->Navigate(url, Within(60s));
  if (!first) {
    std::fprintf(stderr, "browser_bench: %s\n", first.error().message().c_str());
    return 1;
  }
  talaria_bench::PrintMetric("browser_first_snapshot_ms", Ms(std::chrono::steady_clock::now() - t0),
                             "ms");

  std::vector<double> snaps;
  std::string text;
  for (int i = 0; i < 30; ++i) {
    t0 = std::chrono::steady_clock::now();
    auto s = page->TakeSnapshot({}, Within(30s));
    snaps.push_back(Ms(std::chrono::steady_clock::now() - t0));
    if (s) text = s->text;
  }
  talaria_bench::PrintMetric("browser_snapshot_p50_ms", talaria_bench::Median(snaps), "ms");
  talaria_bench::PrintMetric("browser_snapshot_elements", first->element_count, "refs");

  std::vector<std::string> buttons;
  static const std::regex kButton(R"re(button "Buy [0-9]+" \[ref=(e[0-9]+)\])re");
  for (std::sregex_iterator it(text.begin(), text.end(), kButton), end; it != end; ++it) {
    buttons.push_back((*it)[1]);
  }
  std::vector<double> clicks;
  for (size_t i = 0; i < 30 && i < buttons.size(); ++i) {
    t0 = std::chrono::steady_clock::now();
    auto st = page->Click(buttons[i * 7 % buttons.size()], Within(30s));
    clicks.push_back(Ms(std::chrono::steady_clock::now() - t0));
    if (!st.ok()) std::fprintf(stderr, "click: %s\n", st.message().c_str());
  }
  talaria_bench::PrintMetric("browser_click_p50_ms", talaria_bench::Median(clicks), "ms");

  // A heading's click starts nothing: the wait ends as soon as the page stays quiet.
  static const std::regex kHeading(R"re(heading "Catalogue" \[level=1\] \[ref=(e[0-9]+)\])re");
  std::smatch heading;
  std::vector<double> idle;
  if (std::regex_search(text, heading, kHeading)) {
    for (int i = 0; i < 30; ++i) {
      t0 = std::chrono::steady_clock::now();
      auto st = page->Click(heading[1].str(), Within(30s));
      idle.push_back(Ms(std::chrono::steady_clock::now() - t0));
      if (!st.ok()) std::fprintf(stderr, "idle click: %s\n", st.message().c_str());
    }
    talaria_bench::PrintMetric("browser_click_idle_p50_ms", talaria_bench::Median(idle), "ms");
  }

  // browser_click as the model gets it: the click, the snapshot after it, the diff against the
  // one before (the buttons' onclick sets an attribute the snapshot does not show; the focus
  // moves, which it does).
  std::vector<double> actions;
  std::string before = text, diff_text;
  for (size_t i = 0; i < 30 && i < buttons.size(); ++i) {
    t0 = std::chrono::steady_clock::now();
    auto st = page->Click(buttons[(i * 11 + 3) % buttons.size()], Within(30s));
    auto s = page->TakeSnapshot({}, Within(30s));
    if (!st.ok() || !s) continue;
    diff_text = talaria::browser::DiffSnapshots(before, s->text).text;
    actions.push_back(Ms(std::chrono::steady_clock::now() - t0));
    before = s->text;
  }
  talaria_bench::PrintMetric("browser_action_p50_ms", talaria_bench::Median(actions), "ms");
  talaria_bench::PrintMetric("browser_action_diff_bytes", static_cast<double>(diff_text.size()),
                             "bytes");

  std::vector<double> evals;
  for (int i = 0; i < 300; ++i) {
    t0 = std::chrono::steady_clock::now();
    auto e = page->Evaluate("1+1", Within(10s));
    evals.push_back(Ms(std::chrono::steady_clock::now() - t0));
  }
  talaria_bench::PrintMetric("browser_eval_p50_ms", talaria_bench::Median(evals), "ms");

  (void)page->RawCall("Accessibility.enable", talaria::Json::object(), Within(30s));
  t0 = std::chrono::steady_clock::now();
  auto ax = page->RawCall("Accessibility.getFullAXTree", talaria::Json::object(), Within(60s));
  const double ax_ms = Ms(std::chrono::steady_clock::now() - t0);
  const size_t ax_bytes = ax ? ax->dump().size() : 0;
  const size_t ax_nodes = ax && (*ax)["nodes"].is_array() ? (*ax)["nodes"].size() : 0;
  talaria_bench::PrintMetric("browser_ax_tree_ms", ax_ms, "ms");
  talaria_bench::PrintMetric("browser_ax_nodes", static_cast<double>(ax_nodes), "nodes");
  talaria_bench::PrintMetric("browser_ax_tree_bytes", static_cast<double>(ax_bytes), "bytes");
  talaria_bench::PrintMetric("browser_snapshot_bytes", static_cast<double>(text.size()), "bytes");
  if (!text.empty()) {
    talaria_bench::PrintMetric("browser_snapshot_shrink_x",
                               static_cast<double>(ax_bytes) / static_cast<double>(text.size()),
                               "x");
  }
  driver->reset();
  server.stop();
  serving.join();
  return 0;
}
