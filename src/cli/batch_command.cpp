// talaria batch FILE|-: one turn's tool calls through the planner and the executor; one JSON
// line per call, in call order. SIGINT/SIGTERM cancel the batch (children are killed, the calls
// report cancelled) and talaria exits 128+signal once every call has ended.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/batch_input.h"
#include "cli/batch_progress.h"
#include "cli/cli_session.h"
#include "cli/signal_watch.h"
#include "talaria/core/batch_executor.h"
#include "talaria/tools/process_notices.h"

namespace talaria::cli {
namespace {

std::optional<std::string> ReadInput(const std::string& path) {
  if (path.empty() || path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// An OpenAI tool message plus how the call ended.
Json ResultLine(const BatchCall& call, size_t index, const ToolResult& result) {
  Json line = Json::object();
  line["role"] = "tool";
  line["tool_call_id"] = BatchCallId(call, index);
  line["name"] = call.name;
  line["status"] = std::string(CallStatusName(result.status));
  line["content"] = result.text;
  return line;
}

}  // namespace

int RunBatch(Runtime& rt, const BatchCommandOptions& options) {
  // First, before any thread exists: from here on SIGINT/SIGTERM only ever cancel.
  std::atomic<Batch*> running{nullptr};
  std::atomic<BatchProgress*> shown{nullptr};
  SignalWatch signals(
      [&running](int) {
        if (Batch* b = running.load()) b->Cancel();
      },
      [&shown] {
        if (BatchProgress* p = shown.load()) p->Redraw();
      });

  const std::optional<std::string> text = ReadInput(options.input);
  if (!text) {
    std::fprintf(stderr, "talaria batch: cannot read %s\n", options.input.c_str());
    return kExitUsage;
  }
  auto calls = ParseBatchInput(*text);
  if (!calls) {
    std::fprintf(stderr, "talaria batch: %s\n", calls.error().message().c_str());
    return kExitUsage;
  }
  std::shared_ptr<tools::Session> session = OpenCliSession(rt, options.session, "batch");
  if (!session) return kExitUsage;
  ToolContext base = session->NewContext("batch_" + std::to_string(::getpid()));

  if (options.plan_only) {
    const BatchPlan plan = PlanBatchCalls(*calls, rt.registry(), BatchCwd(base));
    std::vector<PlannedCall> planned;
    for (const BatchCall& c : *calls) planned.push_back({c.name, c.arguments, {}});
    if (options.json) {
      std::printf("%s\n", PlanToJson(plan, planned).dump(2).c_str());
    } else {
      std::fputs(FormatPlan(plan, planned).c_str(), stdout);
    }
    return kExitOk;
  }

  tools::AttachProcessNotices(rt.dispatcher());
  talaria::BatchOptions batch_options;
  batch_options.max_workers = options.workers;
  batch_options.batch_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(options.timeout_s * 1000));
  std::optional<BatchProgress> progress;
  if (::isatty(STDERR_FILENO) && !options.quiet) {
    progress.emplace(stderr, *calls);
    batch_options.on_event = [&progress](const BatchEvent& e) { progress->OnEvent(e); };
  }
  Batch batch(rt.dispatcher(), *calls, std::move(batch_options));
  if (progress) shown.store(&*progress);
  running.store(&batch);
  if (signals.received() != 0) batch.Cancel();  // a signal that came before the batch existed
  std::vector<ToolResult> results = batch.Run(base);
  running.store(nullptr);
  shown.store(nullptr);
  if (progress) progress->Finish();
  const int signal_number = signals.received();

  bool all_ok = true;
  for (size_t i = 0; i < results.size(); ++i) {
    std::printf("%s\n", ResultLine((*calls)[i], i, results[i]).dump().c_str());
    all_ok = all_ok && results[i].ok();
  }
  std::fflush(stdout);
  if (signal_number != 0) return 128 + signal_number;
  return all_ok ? kExitOk : kExitToolError;
}

}  // namespace talaria::cli
