// process (the newer original's process_manage): list and manage the session's background
// processes started by terminal(background=true).
#include <algorithm>
#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "talaria/core/tool_registration.h"
#include "talaria/env/process_table.h"
#include "talaria/tools/session_services.h"
#include "tools/terminal/terminal_output.h"

namespace talaria::tools {
namespace {

constexpr std::string_view kProcessSchema = R"json({
  "name": "process",
  "description": "Manage background processes started with terminal(background=true). Actions: list (all processes), poll (status and the last output), log (output lines, paged with offset/limit), wait (until it exits or the timeout), kill (end its whole process group), write (send data to its stdin), submit (data plus Enter), close (close its stdin / send EOF). session_id accepts any unique prefix of at least 4 characters.",
  "parameters": {
    "type": "object",
    "properties": {
      "action": {"type": "string", "enum": ["list", "poll", "log", "wait", "kill", "write", "submit", "close"], "description": "What to do."},
      "session_id": {"type": "string", "description": "The process id from terminal (or a unique prefix of 4+ characters); required except for list."},
      "data": {"type": "string", "description": "write/submit: the text to send to the process's stdin."},
      "timeout": {"type": "integer", "minimum": 1, "description": "wait: seconds to wait at most (default 180)."},
      "offset": {"type": "integer", "minimum": 0, "description": "log: first line to show (0 = the beginning; default: the last `limit` lines)."},
      "limit": {"type": "integer", "minimum": 1, "description": "log: how many lines to show (default 200)."}
    },
    "required": ["action"]
  }
})json";

constexpr int64_t kDefaultWaitS = 180;
constexpr int64_t kMaxWaitS = 600;
constexpr size_t kPreviewChars = 1000;
constexpr int64_t kDefaultLogLines = 200;

ToolResult ProcessFailure(std::string message) {
  Json body = Json::object();
  body["status"] = "error";
  body["error"] = std::move(message);
  return ToolResult::ErrorJson(std::move(body));
}

std::string StatusOf(const env::ProcessSnapshot& s) { return s.running ? "running" : "exited"; }

Json Describe(const env::ProcessSnapshot& s) {
  Json j = Json::object();
  j["session_id"] = s.id;
  j["command"] = s.command;
  j["status"] = StatusOf(s);
  j["pid"] = s.pid;
  j["uptime_seconds"] = static_cast<int64_t>(s.uptime_seconds);
  if (s.exit_code) j["exit_code"] = *s.exit_code;
  return j;
}

// The last `chars` bytes of the cleaned output, not starting inside a UTF-8 sequence.
std::string Tail(const std::string& text, size_t chars) {
  if (text.size() <= chars) return text;
  size_t from = text.size() - chars;
  while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80) ++from;
  return text.substr(from);
}

ToolResult Log(const env::ProcessSnapshot& s, const Json& args) {
  const std::string text = CleanOutput(s.output);
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < text.size();) {
    const size_t nl = text.find('\n', start);
    const size_t end = nl == std::string::npos ? text.size() : nl;
    lines.emplace_back(text.data() + start, end - start);
    start = end + 1;
  }
  const auto total = static_cast<int64_t>(lines.size());
  const int64_t limit = args.value("limit", kDefaultLogLines);
  int64_t offset =
      args.contains("offset") ? args["offset"].get<int64_t>() : std::max<int64_t>(0, total - limit);
  offset = std::min(offset, total);
  const int64_t end = std::min(total, offset + limit);
  std::string shown;
  for (int64_t i = offset; i < end; ++i) {
    shown.append(lines[static_cast<size_t>(i)]);
    shown += '\n';
  }
  Json body = Describe(s);
  body["output"] = std::move(shown);
  body["total_lines"] = total;
  body["showing"] = std::to_string(end - offset) + " lines";
  if (s.output_total_bytes > s.output.size()) {
    body["note"] = "Only the last " + std::to_string(s.output.size()) + " bytes of " +
                   std::to_string(s.output_total_bytes) +
                   " are kept; line numbers count from there.";
  }
  return ToolResult::FromJson(body);
}

// An interactive shell (bash -i, a shell on a pty) expands `!!`, `!-2`, `!word`, `!?x?` and a
// leading `^old^new` after reading the line, so what runs is not the text judged. `!` before a
// blank, `=`, `(` or a quote is left alone by bash, and so are they here.
bool HasHistoryExpansion(std::string_view data) {
  size_t line_start = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    if (data[i] == '\n' || data[i] == '\r') {
      line_start = i + 1;
      continue;
    }
    if (data[i] == '^' && i == line_start) return true;
    if (data[i] != '!' || i + 1 >= data.size()) continue;
    const char next = data[i + 1];
    if (next != ' ' && next != '\t' && next != '\n' && next != '\r' && next != '=' && next != '(' &&
        next != '"' && next != '\'') {
      return true;
    }
  }
  return false;
}

ToolResult Process(const Json& args, ToolContext& ctx) {
  if (ProcessesOf(ctx) == nullptr)
    return ProcessFailure("background processes are not available in this session");
  env::ProcessTable& table = *ProcessesOf(ctx);
  const std::string action = args["action"].get<std::string>();
  if (action == "list") {
    Json list = Json::array();
    for (const auto& s : table.List()) list.push_back(Describe(s));
    Json body = Json::object();
    body["processes"] = std::move(list);
    return ToolResult::FromJson(body);
  }
  const std::string query = args.value("session_id", std::string());
  if (query.empty()) return ProcessFailure("session_id is required for action '" + action + "'");
  auto id = table.Resolve(query);
  if (!id) {
    Json body = Json::object();
    body["status"] = id.error().code() == StatusCode::kNotFound ? "not_found" : "error";
    body["error"] = id.error().message();
    return ToolResult::ErrorJson(std::move(body));
  }

  if (action == "poll") {
    auto s = table.Get(*id, true);
    if (!s) return ProcessFailure(s.error().message());
    Json body = Describe(*s);
    body["output_preview"] = Tail(CleanOutput(s->output), kPreviewChars);
    return ToolResult::FromJson(body);
  }
  if (action == "log") {
    auto s = table.Get(*id, true);
    if (!s) return ProcessFailure(s.error().message());
    return Log(*s, args);
  }
  if (action == "wait") {
    const int64_t requested = args.value("timeout", kDefaultWaitS);
    const int64_t seconds = std::min(requested, kMaxWaitS);
    auto s = table.Wait(*id, std::chrono::seconds(seconds), ctx.cancel);
    if (!s) return ProcessFailure(s.error().message());
    Json body = Describe(*s);
    body["status"] = !s->running ? "exited" : ctx.cancelled() ? "interrupted" : "timeout";
    body["output"] = Tail(CleanOutput(s->output), 4 * kPreviewChars);
    if (requested > kMaxWaitS)
      body["note"] = "timeout clamped to " + std::to_string(kMaxWaitS) + " seconds";
    return ToolResult::FromJson(body);
  }
  if (action == "kill") {
    auto s = table.Kill(*id);
    if (!s) return ProcessFailure(s.error().message());
    Json body = Describe(*s);
    body["status"] = "killed";
    return ToolResult::FromJson(body);
  }
  if (action == "write" || action == "submit") {
    if (!args.contains("data"))
      return ProcessFailure("data is required for action '" + action + "'");
    std::string data = args["data"].get<std::string>();
    if (HasHistoryExpansion(data)) {
      return ProcessFailure(
          "history expansion (`!!`, `!n`, `!word`, `^old^new`) is not accepted in process input: "
          "an "
          "interactive shell would expand it after the command guard judged the text; write the "
          "command out in full");
    }
    if (action == "submit") data += '\n';
    if (Status s = table.Write(*id, data); !s.ok()) return ProcessFailure(s.message());
    Json body = Json::object();
    body["session_id"] = *id;
    body["status"] = "ok";
    body["bytes_written"] = data.size();
    return ToolResult::FromJson(body);
  }
  if (action == "close") {
    if (Status s = table.CloseStdin(*id); !s.ok()) return ProcessFailure(s.message());
    Json body = Json::object();
    body["session_id"] = *id;
    body["status"] = "stdin_closed";
    return ToolResult::FromJson(body);
  }
  return ProcessFailure("unknown action '" + action +
                        "'; valid actions: list, poll, log, wait, kill, write, submit, close");
}

// A shell reading the process's stdin acts on whole lines: `r` then `m -rf DIR\n` is one
// command. What write/submit add is judged after the line earlier writes left unfinished.
std::string InputAsTheProcessReadsIt(const Json& args, const ToolContext& ctx,
                                     std::string_view data) {
  std::string text;
  if (ProcessesOf(ctx) != nullptr) {
    if (auto id = ProcessesOf(ctx)->Resolve(args.value("session_id", std::string()))) {
      if (auto unfinished = ProcessesOf(ctx)->UnfinishedInput(*id)) text = std::move(*unfinished);
    }
  }
  text.append(data);
  return text;
}

ToolSpec MakeProcessSpec() {
  ToolSpec spec;
  spec.name = "process";
  spec.aliases = {"process_manage"};
  spec.toolset = "terminal";
  spec.schema = kProcessSchema;
  spec.handler = Process;
  spec.emoji = "\xE2\x9A\x99\xEF\xB8\x8F";  // "⚙️"
  spec.parallel = ParallelClass::kNever;
  spec.annotations.destructive = true;
  // What write/submit send may be typed into a shell (a background `bash`, an ssh session):
  // it is judged like a command, or the guard could be bypassed through a process's stdin.
  spec.command_arg = "data";
  spec.command_text = InputAsTheProcessReadsIt;
  return spec;
}

}  // namespace
}  // namespace talaria::tools

TALARIA_TOOL(Process, talaria::tools::MakeProcessSpec());
