#include "agent/loop_guard.h"

#include <functional>

#include "talaria/core/tool_result.h"

namespace talaria::agent {

std::string LoopGuard::Key(std::string_view tool, std::string_view canonical_args) {
  std::string key(tool);
  key.push_back('\0');
  key.append(canonical_args);
  return key;
}

std::string LoopGuard::CheckBefore(std::string_view tool, std::string_view canonical_args,
                                   bool idempotent) const {
  auto it = repeats_.find(Key(tool, canonical_args));
  if (it == repeats_.end()) return {};
  const Repeat& r = it->second;
  const int next = r.count + 1;
  const bool block = r.failed ? next >= thresholds_.same_failure_block
                              : idempotent && next >= thresholds_.no_progress_block;
  if (!block) return {};
  std::string message = "Blocked by the loop guard: " + std::string(tool) + " was already called " +
                        std::to_string(r.count) + " times with these same arguments and ";
  message += r.failed ? "failed the same way each time" : "returned the same result each time";
  message +=
      ", so it was not run again. Change the arguments or the approach, or answer with what "
      "you have.";
  return ToolResult::Error(message, CallStatus::kBlocked, "loop_guard").text;
}

std::string LoopGuard::Record(std::string_view tool, std::string_view canonical_args,
                              bool idempotent, std::string_view result_text, bool failed,
                              bool blocked) {
  Repeat& r = repeats_[Key(tool, canonical_args)];
  if (!blocked) {
    const size_t hash = std::hash<std::string_view>{}(result_text);
    if (r.count > 0 && r.result_hash == hash && r.failed == failed) {
      ++r.count;
    } else {
      r = Repeat{hash, 1, failed};
    }
  } else {
    ++r.count;  // a blocked attempt repeats the call and gets the same (blocked) answer
  }

  const std::string name(tool);
  int& tool_failures = tool_failures_[name];
  if (blocked) {
    // Neither a new failure nor a success of the tool.
  } else if (failed) {
    ++tool_failures;
  } else {
    tool_failures = 0;
  }

  if (r.count >= thresholds_.repeat_halt) {
    halt_reason_ = "the model called " + name + " " + std::to_string(r.count) +
                   " times with the same arguments and the same result; the turn was stopped";
    return {};
  }
  if (!blocked && failed && tool_failures >= thresholds_.tool_failure_halt) {
    halt_reason_ = name + " failed " + std::to_string(tool_failures) +
                   " times in a row in this turn; the turn was stopped";
    return {};
  }
  if (blocked) return {};
  if (failed && r.count >= thresholds_.same_failure_warn) {
    return "[Loop guard: this exact call has now failed the same way " + std::to_string(r.count) +
           " times. Do not repeat it: change the arguments or the approach.]";
  }
  if (failed && tool_failures >= thresholds_.tool_failure_warn) {
    return "[Loop guard: " + name + " has failed " + std::to_string(tool_failures) +
           " times in a row in this turn. Step back and check your assumptions before calling it "
           "again.]";
  }
  if (!failed && idempotent && r.count >= thresholds_.no_progress_warn) {
    return "[Loop guard: this exact call returned the same result " + std::to_string(r.count) +
           " times; calling it again will not change it. Use the result you have.]";
  }
  return {};
}

void LoopGuard::Reset() {
  repeats_.clear();
  tool_failures_.clear();
  halt_reason_.clear();
}

}  // namespace talaria::agent
