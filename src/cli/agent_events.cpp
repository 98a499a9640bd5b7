#include "cli/agent_events.h"

#include <unistd.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "talaria/base/json.h"

namespace talaria::cli {
namespace {

// ANSI dim for notices and reasoning, only where a person reads them.
bool IsTerminal(std::FILE* f) { return ::isatty(::fileno(f)) == 1; }

std::string OneLine(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\n' || c == '\r') {
      out += ' ';
    } else if (static_cast<unsigned char>(c) < 0x20) {
      continue;  // no escape sequences from the model reach the terminal
    } else {
      out += c;
    }
  }
  return out;
}

std::string Shorten(std::string text, size_t width) {
  if (text.size() <= width) return text;
  text.resize(width);
  // Never cut a UTF-8 sequence in half.
  while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80) text.pop_back();
  if (!text.empty() && static_cast<unsigned char>(text.back()) >= 0xC0) text.pop_back();
  return text + "…";
}

std::string Seconds(std::chrono::milliseconds d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(d.count()) / 1000.0);
  return buf;
}

// Control characters of the model's text other than newline and tab are dropped: a model must
// not be able to move the cursor or retitle the user's terminal.
std::string PrintableText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\n' && c != '\t') continue;
    if (u == 0x7F) continue;
    out += c;
  }
  return out;
}

Json UsageJson(const agent::Usage& u) {
  return Json{{"input_tokens", u.input_tokens},
              {"cached_tokens", u.cached_tokens},
              {"output_tokens", u.output_tokens},
              {"reasoning_tokens", u.reasoning_tokens}};
}

}  // namespace

std::string ArgumentPreview(std::string_view arguments, size_t width) {
  Result<Json> parsed = ParseJson(arguments);
  if (parsed && parsed->is_object()) {
    for (const auto& [key, value] : parsed->items()) {
      if (value.is_string()) {
        return Shorten(OneLine(key + "=" + value.get<std::string>()), width);
      }
    }
    return Shorten(OneLine(DumpJson(*parsed)), width);
  }
  return Shorten(OneLine(arguments), width);
}

std::string_view ToolCallStatusName(agent::ToolCallStatus status) {
  switch (status) {
    case agent::ToolCallStatus::kOk:
      return "ok";
    case agent::ToolCallStatus::kError:
      return "error";
    case agent::ToolCallStatus::kBlocked:
      return "blocked";
    case agent::ToolCallStatus::kCancelled:
      return "cancelled";
    case agent::ToolCallStatus::kTimedOut:
      return "timed out";
  }
  return "error";
}

std::string_view TurnExitName(agent::TurnExit exit) {
  switch (exit) {
    case agent::TurnExit::kAnswered:
      return "answered";
    case agent::TurnExit::kBudgetExhausted:
      return "budget_exhausted";
    case agent::TurnExit::kModelFailed:
      return "model_failed";
    case agent::TurnExit::kInterrupted:
      return "interrupted";
    case agent::TurnExit::kHalted:
      return "halted";
  }
  return "model_failed";
}

TerminalEvents::TerminalEvents(std::FILE* text, std::FILE* status,
                               std::function<std::string(std::string_view)> emoji_of)
    : text_(text), status_(status), emoji_of_(std::move(emoji_of)) {}

void TerminalEvents::BreakLineLocked() {
  if (in_reasoning_) {
    if (IsTerminal(status_)) std::fputs("\x1b[0m", status_);
    in_reasoning_ = false;
  }
  if (mid_line_) {
    std::fputc('\n', text_);
    std::fflush(text_);
    mid_line_ = false;
  }
}

void TerminalEvents::OnTurnStarted(int /*turn*/) {}

void TerminalEvents::OnText(std::string_view delta) {
  std::lock_guard lock(mu_);
  if (in_reasoning_) BreakLineLocked();
  const std::string text = PrintableText(delta);
  if (text.empty()) return;
  std::fwrite(text.data(), 1, text.size(), text_);
  std::fflush(text_);
  mid_line_ = text.back() != '\n';
}

void TerminalEvents::OnReasoning(std::string_view delta) {
  if (!show_reasoning_) return;
  std::lock_guard lock(mu_);
  const std::string text = PrintableText(delta);
  if (text.empty()) return;
  if (!in_reasoning_) {
    if (mid_line_) std::fputc('\n', status_);
    if (IsTerminal(status_)) std::fputs("\x1b[2m", status_);
    in_reasoning_ = true;
  }
  std::fwrite(text.data(), 1, text.size(), status_);
  std::fflush(status_);
  mid_line_ = text.back() != '\n';
}

void TerminalEvents::OnToolCallStarted(size_t index, std::string_view /*name*/,
                                       std::string_view arguments) {
  std::lock_guard lock(mu_);
  BreakLineLocked();
  if (previews_.size() <= index) previews_.resize(index + 1);
  previews_[index] = ArgumentPreview(arguments);
}

void TerminalEvents::OnToolCallFinished(size_t index, std::string_view name,
                                        agent::ToolCallStatus status,
                                        std::chrono::milliseconds duration) {
  const std::string emoji = emoji_of_ ? emoji_of_(name) : std::string();
  std::lock_guard lock(mu_);
  BreakLineLocked();
  const std::string preview = index < previews_.size() ? previews_[index] : std::string();
  const bool ok = status == agent::ToolCallStatus::kOk;
  std::fprintf(status_, "  %s %.*s  %s  %s %s %s\n", emoji.c_str(), static_cast<int>(name.size()),
               name.data(), preview.c_str(),
               ok ? "\xE2\x9C\x93" : "\xE2\x9C\x97",  // ✓ / ✗
               std::string(ToolCallStatusName(status)).c_str(), Seconds(duration).c_str());
  std::fflush(status_);
}

void TerminalEvents::OnNotice(std::string_view text) {
  std::lock_guard lock(mu_);
  BreakLineLocked();
  const bool tty = IsTerminal(status_);
  std::fprintf(status_, "%s· %s%s\n", tty ? "\x1b[2m" : "", OneLine(text).c_str(),
               tty ? "\x1b[0m" : "");
  std::fflush(status_);
}

std::optional<std::string> TerminalEvents::Clarify(std::string_view question,
                                                   const std::vector<std::string>& choices) {
  std::FILE* tty = std::fopen("/dev/tty", "r+e");
  if (tty == nullptr) return std::nullopt;
  {
    std::lock_guard lock(mu_);
    BreakLineLocked();
  }
  std::fprintf(tty, "\n\xE2\x9D\x93 %s\n", PrintableText(question).c_str());  // ❓
  for (size_t i = 0; i < choices.size(); ++i) {
    std::fprintf(tty, "  %zu. %s\n", i + 1, OneLine(choices[i]).c_str());
  }
  std::fputs(choices.empty() ? "answer: " : "number or answer: ", tty);
  std::fflush(tty);
  char buf[4096];
  const bool got = std::fgets(buf, sizeof buf, tty) != nullptr;
  std::fclose(tty);
  if (!got) return std::nullopt;
  std::string answer(buf);
  while (!answer.empty() && (answer.back() == '\n' || answer.back() == '\r')) answer.pop_back();
  char* end = nullptr;
  const unsigned long pick = std::strtoul(answer.c_str(), &end, 10);
  if (!answer.empty() && end != nullptr && *end == '\0' && pick >= 1 && pick <= choices.size()) {
    return choices[pick - 1];
  }
  return answer;
}

void TerminalEvents::EndText() {
  std::lock_guard lock(mu_);
  BreakLineLocked();
}

JsonEvents::JsonEvents(std::FILE* out) : out_(out) {}

void JsonEvents::Emit(const std::string& line) {
  std::lock_guard lock(mu_);
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fputc('\n', out_);
  std::fflush(out_);
}

void JsonEvents::SessionStarted(std::string_view session_id, bool resumed) {
  Emit(DumpJson(Json{
      {"type", "session_started"}, {"session_id", std::string(session_id)}, {"resumed", resumed}}));
}

void JsonEvents::TurnCompleted(const agent::TurnResult& r) {
  Json event{{"type", "turn_completed"}, {"exit", std::string(TurnExitName(r.exit))},
             {"text", r.text},           {"usage", UsageJson(r.usage)},
             {"cost_usd", r.cost_usd},   {"api_calls", r.api_calls}};
  if (!r.error.empty()) event["error"] = r.error;
  Emit(DumpJson(event));
}

void JsonEvents::SessionEnded(std::string_view session_id, int exit_code) {
  Emit(DumpJson(Json{{"type", "session_ended"},
                     {"session_id", std::string(session_id)},
                     {"exit_code", exit_code}}));
}

void JsonEvents::OnTurnStarted(int turn) {
  Emit(DumpJson(Json{{"type", "turn_started"}, {"turn", turn}}));
}

void JsonEvents::OnText(std::string_view delta) {
  Emit(DumpJson(Json{{"type", "text"}, {"delta", std::string(delta)}}));
}

void JsonEvents::OnReasoning(std::string_view delta) {
  Emit(DumpJson(Json{{"type", "reasoning"}, {"delta", std::string(delta)}}));
}

void JsonEvents::OnToolCallStarted(size_t index, std::string_view name,
                                   std::string_view arguments) {
  Result<Json> args = ParseJson(arguments);
  Emit(DumpJson(Json{{"type", "tool_call_started"},
                     {"index", index},
                     {"name", std::string(name)},
                     {"arguments", args ? *args : Json(std::string(arguments))}}));
}

void JsonEvents::OnToolCallFinished(size_t index, std::string_view name,
                                    agent::ToolCallStatus status,
                                    std::chrono::milliseconds duration) {
  Emit(DumpJson(Json{{"type", "tool_call_finished"},
                     {"index", index},
                     {"name", std::string(name)},
                     {"status", std::string(ToolCallStatusName(status))},
                     {"duration_ms", duration.count()}}));
}

void JsonEvents::OnNotice(std::string_view text) {
  Emit(DumpJson(Json{{"type", "notice"}, {"text", std::string(text)}}));
}

}  // namespace talaria::cli
