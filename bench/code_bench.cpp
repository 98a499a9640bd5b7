// talaria_code_bench: execute_code's costs (issue 8).
//
//   METRIC code_rpc_roundtrip_us          median tool call from a script to a trivial tool and back
//                                         (stub, frame, socket, dispatcher, answer; target <= 100)
//   METRIC code_rpc_roundtrip_p90_us      the same, 90th percentile
//   METRIC code_first_output_bwrap_ms     execute_code start to the script's first printed line, in
//                                         bubblewrap (median)
//   METRIC code_first_output_landlock_ms  the same under the Landlock + seccomp fallback (when the
//                                         kernel has Landlock)
//   METRIC code_first_output_none_ms      the same without a sandbox
//   METRIC code_total_print_bwrap_ms      a whole execute_code of print(1) in bubblewrap (median)
//
//   talaria_code_bench [--quick]
#include <stdlib.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "talaria/core/dispatcher.h"
#include "talaria/tools/code_execution.h"
#include "talaria/tools/session.h"
#include "tools/code/landlock_confine.h"

namespace {

using talaria::Json;
using talaria_bench::Median;
using talaria_bench::PrintMetric;

int64_t MonotonicNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

Json RunCode(talaria::Dispatcher& d, talaria::ToolContext& ctx, const std::string& code) {
  const talaria::ToolResult r = d.Dispatch("execute_code", Json{{"code", code}}.dump(), ctx);
  Json body = Json::parse(r.text, nullptr, false);
  if (body.is_discarded() || body.value("status", "") != "success") {
    std::fprintf(stderr, "execute_code failed: %.500s\n", r.text.c_str());
    std::exit(2);
  }
  return body;
}

bool Enable(talaria::Dispatcher& d, talaria::tools::CodeSandbox sandbox) {
  talaria::tools::CodeExecutionOptions options;
  options.sandbox = sandbox;
  options.max_tool_calls = 1'000'000;
  const talaria::Status s = talaria::tools::EnableCodeExecution(d, options);
  if (!s.ok()) std::fprintf(stderr, "cannot enable execute_code: %s\n", s.ToString().c_str());
  return s.ok();
}

// Medians over `n` runs of execute_code start -> the script's first line (its monotonic clock
// is ours: bwrap does not unshare the time namespace).
double FirstOutputMs(talaria::Dispatcher& d, talaria::ToolContext& ctx, int n) {
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) {
    const int64_t t0 = MonotonicNs();
    Json r = RunCode(d, ctx, "import time\nprint(time.monotonic_ns())\n");
    const int64_t printed = std::stoll(r["output"].get<std::string>());
    ms.push_back(static_cast<double>(printed - t0) / 1e6);
  }
  return Median(std::move(ms));
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int calls = quick ? 500 : 5000;
  const int runs = quick ? 5 : 30;
  std::string tmpl =
      (std::filesystem::temp_directory_path() / "talaria-code-bench-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) return 1;
  ::setenv("TALARIA_HOME", (tmpl + "/home").c_str(), 1);

  // The trivial tool: a web_search that answers at once (web tools are in the stubbed set).
  talaria::ToolSpec echo;
  echo.name = "web_search";
  echo.toolset = "web";
  echo.schema = R"json({"name":"web_search","description":"echo","parameters":{"type":"object",
    "properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query"]}})json";
  echo.handler = [](const Json&, talaria::ToolContext&) {
    return talaria::ToolResult::Text("{\"ok\":true}");
  };
  if (!talaria::Registry::Global().Register(std::move(echo)).ok()) return 1;

  talaria::tools::SessionOptions options;
  options.roots = {tmpl};
  options.audit = false;
  auto session = talaria::tools::Session::Open(options);
  if (!session) return 1;
  talaria::ToolContext ctx = (*session)->NewContext("bench");
  talaria::Dispatcher dispatcher;
  if (!Enable(dispatcher, talaria::tools::CodeSandbox::kBwrap)) return 1;

  std::string code =
      "import time\nfrom hermes_tools import web_search\nsamples = []\nfor i in range(";
  code += std::to_string(calls);
  code +=
      "):\n    t = time.perf_counter_ns(); web_search('q'); samples.append(time.perf_counter_ns() "
      "- t)\n"
      "samples.sort()\nprint(samples[len(samples) // 2] / 1000, samples[len(samples) * 9 // 10] / "
      "1000)\n";
  Json rt = RunCode(dispatcher, ctx, code);
  double median_us = 0, p90_us = 0;
  std::sscanf(rt["output"].get<std::string>().c_str(), "%lf %lf", &median_us, &p90_us);
  PrintMetric("code_rpc_roundtrip_us", median_us, "us");
  PrintMetric("code_rpc_roundtrip_p90_us", p90_us, "us");

  PrintMetric("code_first_output_bwrap_ms", FirstOutputMs(dispatcher, ctx, runs), "ms");
  std::vector<double> total;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    RunCode(dispatcher, ctx, "print(1)");
    total.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  PrintMetric("code_total_print_bwrap_ms", Median(std::move(total)), "ms");

  if (talaria::tools::code::LandlockAbi() > 0 &&
      Enable(dispatcher, talaria::tools::CodeSandbox::kLandlock)) {
    PrintMetric("code_first_output_landlock_ms", FirstOutputMs(dispatcher, ctx, runs), "ms");
  }
  if (!Enable(dispatcher, talaria::tools::CodeSandbox::kNone)) return 1;
  PrintMetric("code_first_output_none_ms", FirstOutputMs(dispatcher, ctx, runs), "ms");

  talaria::tools::DisableCodeExecution(dispatcher);
  std::error_code ec;
  std::filesystem::remove_all(tmpl, ec);
  return 0;
}
