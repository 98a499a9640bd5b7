// Loop guardrails: stop a model that repeats itself within one turn (the original's
// tool_guardrails, reference a.10), with a message to the model at each step.
//
// - The same call (tool + canonical arguments) failing the same way: a warning from the 2nd
//   time, blocked (not run, a synthetic result) from the 5th.
// - The same tool failing, whatever the arguments: a warning from the 3rd failure in a row, the
//   turn halted at the 8th.
// - An idempotent call (a read, a search) returning the same result: a warning from the 2nd
//   time, blocked from the 5th — it cannot change, so calling it again is no progress.
// - Any call repeated with the same result (blocked attempts included) halts the turn at the 8th.
// Counters belong to one turn: Reset() when the next user message starts one.
// Thread-safety: not thread-safe; the loop calls it from the turn's thread.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

namespace talaria::agent {

struct GuardThresholds {
  int same_failure_warn = 2;
  int same_failure_block = 5;
  int tool_failure_warn = 3;
  int tool_failure_halt = 8;
  int no_progress_warn = 2;
  int no_progress_block = 5;
  int repeat_halt = 8;
};

class LoopGuard {
 public:
  explicit LoopGuard(GuardThresholds thresholds = {}) : thresholds_(thresholds) {}

  // Before a call runs: the result text to give the model instead of running it (a block), or
  // "" to run it.
  std::string CheckBefore(std::string_view tool, std::string_view canonical_args,
                          bool idempotent) const;

  // After a call ran (`failed`: its result was not ok) or was blocked: a warning to append to
  // its result, or "". May set halted().
  std::string Record(std::string_view tool, std::string_view canonical_args, bool idempotent,
                     std::string_view result_text, bool failed, bool blocked);

  bool halted() const { return !halt_reason_.empty(); }
  const std::string& halt_reason() const { return halt_reason_; }
  void Reset();

 private:
  struct Repeat {
    size_t result_hash = 0;
    int count = 0;  // consecutive identical results of this call (blocks included)
    bool failed = false;
  };
  static std::string Key(std::string_view tool, std::string_view canonical_args);

  GuardThresholds thresholds_;
  std::unordered_map<std::string, Repeat> repeats_;
  std::unordered_map<std::string, int> tool_failures_;  // consecutive, per tool
  std::string halt_reason_;
};

}  // namespace talaria::agent
