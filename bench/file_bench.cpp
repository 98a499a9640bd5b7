// talaria_file_bench: read_file and write_file of 1 KB and 1 MB files through the whole
// pipeline (Dispatcher::Dispatch on JSON text: parse, coercion, validation, hooks, handler,
// budget), on a real Session in a temp directory (default durability: fsync file and
// directory; audit log on).
//
// read_file runs without the session's read tracker: with it, every re-read of an unchanged
// file is the (much cheaper) dedup stub, which is measured on its own as read_file_dedup_stub.
//
//   talaria_file_bench [--quick]
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "talaria/core/dispatcher.h"
#include "talaria/tools/session.h"

namespace {

using Clock = std::chrono::steady_clock;
using talaria::Json;

using talaria_bench::Median;
using talaria_bench::PrintMetric;

// Text of `bytes` bytes in 80-column lines.
std::string TextOfSize(size_t bytes) {
  std::string out;
  out.reserve(bytes);
  for (size_t line = 0; out.size() < bytes; ++line) {
    std::string l = "line " + std::to_string(line) + ": ";
    l.resize(79, static_cast<char>('a' + line % 26));
    l += '\n';
    out += l;
  }
  out.resize(bytes);
  return out;
}

// Median microseconds per call of `iterations` calls (after iterations/10 warm-up calls); exits 2
// if any call fails.
double MedianCallUs(int iterations, const talaria::Dispatcher& dispatcher, std::string_view tool,
                    const std::string& args, talaria::ToolContext& ctx) {
  std::vector<double> us;
  for (int i = -iterations / 10; i < iterations; ++i) {
    const auto t0 = Clock::now();
    talaria::ToolResult r = dispatcher.Dispatch(tool, args, ctx);
    const auto t1 = Clock::now();
    if (!r.ok()) {
      std::fprintf(stderr, "%.*s failed: %.300s\n", static_cast<int>(tool.size()), tool.data(),
                   r.text.c_str());
      std::exit(2);
    }
    if (i >= 0) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  return Median(std::move(us));
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  std::string tmpl =
      (std::filesystem::temp_directory_path() / "talaria-file-bench-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) return 1;
  const std::string root = std::filesystem::canonical(tmpl).string();

  talaria::tools::SessionOptions options;
  options.roots = {root + "/ws"};
  options.audit_log_path = root + "/audit.jsonl";
  std::filesystem::create_directories(options.roots[0]);
  auto session = talaria::tools::OpenSession(options);
  if (!session) {
    std::fprintf(stderr, "session: %s\n", session.error().ToString().c_str());
    return 1;
  }
  const talaria::Dispatcher dispatcher;

  struct Size {
    const char* label;
    size_t bytes;
    int iterations;
  };
  const std::vector<Size> sizes = {{"1kb", 1024, quick ? 50 : 2000},
                                   {"1mb", 1 << 20, quick ? 5 : 100}};
  for (const Size& size : sizes) {
    const std::string name = std::string("file_") + size.label + ".txt";
    const std::string content = TextOfSize(size.bytes);
    std::ofstream(options.roots[0] + "/" + name, std::ios::binary) << content;

    talaria::ToolContext read_ctx = (*session)->NewContext("bench-read");
    read_ctx.read_tracker = nullptr;
    // Default window (500 lines): the 1 KB file whole, the first page of the 1 MB one (whose
    // 13,000+ lines are still all counted for total_lines).
    const std::string read_args = Json{{"path", name}}.dump();
    PrintMetric(std::string("read_file_") + size.label + "_us",
                MedianCallUs(size.iterations, dispatcher, "read_file", read_args, read_ctx), "us");

    talaria::ToolContext write_ctx = (*session)->NewContext("bench-write");
    const std::string write_args = Json{{"path", "out_" + name}, {"content", content}}.dump();
    PrintMetric(std::string("write_file_") + size.label + "_us",
                MedianCallUs(size.iterations, dispatcher, "write_file", write_args, write_ctx),
                "us");
  }

  // The dedup stub: the tracker answers before any content is read. A task of its own per
  // sample, so every measured call is a first stub (never the block that follows two).
  const std::string stub_args = Json{{"path", "file_1kb.txt"}}.dump();
  std::vector<double> stub_us;
  for (int i = 0; i < (quick ? 50 : 2000); ++i) {
    talaria::ToolContext stub_ctx =
        (*session)->NewContext("bench-stub", "stub-" + std::to_string(i));
    dispatcher.Dispatch("read_file", stub_args, stub_ctx);
    const auto t0 = Clock::now();
    talaria::ToolResult r = dispatcher.Dispatch("read_file", stub_args, stub_ctx);
    stub_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    if (r.text.find("\"dedup\":true") == std::string::npos) {
      std::fprintf(stderr, "expected a dedup stub: %.300s\n", r.text.c_str());
      return 2;
    }
  }
  PrintMetric("read_file_dedup_stub_us", Median(std::move(stub_us)), "us");

  // patch (replace) whose old_string matches nowhere in a 20,000-line file: every fuzzy
  // strategy runs to the end (the worst case of the matcher). A failed patch is the answer.
  std::string big;
  for (int i = 0; i < 20000; ++i) big += "    line_number_" + std::to_string(i) + " = i;\n";
  std::ofstream(options.roots[0] + "/fuzzy_20k.py", std::ios::binary) << big;
  std::string near_miss;
  for (int i = 0; i < 30; ++i) near_miss += "line_nomber_" + std::to_string(i * 7) + " = j;\n";
  const std::string miss_args = Json{
      {"mode", "replace"},
      {"path", "fuzzy_20k.py"},
      {"old_string", near_miss},
      {"new_string", "x"}}.dump();
  std::vector<double> miss_ms;
  for (int i = 0; i < (quick ? 1 : 5); ++i) {
    talaria::ToolContext patch_ctx = (*session)->NewContext("bench-patch");
    const auto t0 = Clock::now();
    talaria::ToolResult r = dispatcher.Dispatch("patch", miss_args, patch_ctx);
    miss_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (r.ok()) {
      std::fprintf(stderr, "a near miss must not patch: %.300s\n", r.text.c_str());
      return 2;
    }
  }
  PrintMetric("patch_fuzzy_miss_20k_lines_ms", Median(std::move(miss_ms)), "ms");

  std::error_code ec;
  std::filesystem::remove_all(root, ec);
  return 0;
}
