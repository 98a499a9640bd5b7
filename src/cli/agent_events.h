// What `talaria run` and `talaria chat` show while the agent works, as AgentEvents:
// - TerminalEvents: the answer streamed as it arrives, one line per tool call (emoji, name,
//   a short argument preview, then its status and duration), notices dimmed.
// - JsonEvents: one JSON object per line for programs (`talaria run --json`):
//     {"type":"session_started","session_id":...}  {"type":"turn_started","turn":1}
//     {"type":"text","delta":...}  {"type":"reasoning","delta":...}
//     {"type":"tool_call_started","index":0,"name":...,"arguments":...}
//     {"type":"tool_call_finished","index":0,"name":...,"status":"ok","duration_ms":12}
//     {"type":"notice","text":...}
//     {"type":"turn_completed","exit":"answered","usage":{...},"cost_usd":...,"api_calls":2}
//     {"type":"session_ended","session_id":...,"exit_code":0}
// Thread-safety: thread-safe (tool events arrive from the batch's worker threads).
#pragma once

#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/agent/agent.h"

namespace talaria::cli {

// A tool call's arguments as a short single line: the first string argument (a path, a
// command, a query), else the compact JSON; at most `width` characters.
std::string ArgumentPreview(std::string_view arguments, size_t width = 60);

std::string_view ToolCallStatusName(agent::ToolCallStatus status);  // "ok", "error", ...
std::string_view TurnExitName(agent::TurnExit exit);                // "answered", ...

class TerminalEvents : public agent::AgentEvents {
 public:
  // `text`: where the answer goes; `status`: tool lines and notices (stderr for `run`, so the
  // answer alone can be piped). `emoji_of`: a tool's emoji by name.
  TerminalEvents(std::FILE* text, std::FILE* status,
                 std::function<std::string(std::string_view)> emoji_of);

  void OnTurnStarted(int turn) override;
  void OnText(std::string_view delta) override;
  void OnReasoning(std::string_view delta) override;
  void OnToolCallStarted(size_t index, std::string_view name, std::string_view arguments) override;
  void OnToolCallFinished(size_t index, std::string_view name, agent::ToolCallStatus status,
                          std::chrono::milliseconds duration) override;
  void OnNotice(std::string_view text) override;
  // Asks on the controlling terminal (/dev/tty): the question, the choices numbered; the
  // answer is a choice's number or free text. nullopt without a terminal.
  std::optional<std::string> Clarify(std::string_view question,
                                     const std::vector<std::string>& choices) override;

  // Ends the streamed text with a newline if it did not end with one.
  void EndText();
  void set_show_reasoning(bool show) { show_reasoning_ = show; }

 private:
  void BreakLineLocked();

  std::FILE* text_;
  std::FILE* status_;
  std::function<std::string(std::string_view)> emoji_of_;
  std::mutex mu_;
  bool mid_line_ = false;      // Guarded by mu_: the last text written did not end a line.
  bool in_reasoning_ = false;  // Guarded by mu_.
  bool show_reasoning_ = true;
  std::vector<std::string> previews_;  // Guarded by mu_: each call's preview, by index.
};

class JsonEvents : public agent::AgentEvents {
 public:
  explicit JsonEvents(std::FILE* out);

  void SessionStarted(std::string_view session_id, bool resumed);
  void TurnCompleted(const agent::TurnResult& result);
  void SessionEnded(std::string_view session_id, int exit_code);

  void OnTurnStarted(int turn) override;
  void OnText(std::string_view delta) override;
  void OnReasoning(std::string_view delta) override;
  void OnToolCallStarted(size_t index, std::string_view name, std::string_view arguments) override;
  void OnToolCallFinished(size_t index, std::string_view name, agent::ToolCallStatus status,
                          std::chrono::milliseconds duration) override;
  void OnNotice(std::string_view text) override;

 private:
  void Emit(const std::string& line);

  std::FILE* out_;
  std::mutex mu_;
};

}  // namespace talaria::cli
