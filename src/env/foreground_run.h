// What every environment's Run shares: the spawn settings of a foreground command (deadline,
// cancellation, bounded interleaved output, stdin) and its outcome.
#pragma once

#include <string>
#include <vector>

#include "talaria/base/subprocess.h"
#include "talaria/env/environment.h"

namespace talaria::env {

// `spawn` says what runs where (argv, cwd, env); the rest comes from `options`.
inline SpawnOptions ForegroundSpawn(SpawnOptions spawn, const CommandOptions& options) {
  spawn.timeout = options.timeout;
  spawn.cancel = options.cancel;
  spawn.max_output_bytes = options.max_output_bytes;
  spawn.stdin_data = options.stdin_data;
  spawn.merge_stderr = true;
  return spawn;
}

inline CommandOutcome OutcomeOf(ProcessResult r) {
  CommandOutcome out;
  out.output = std::move(r.stdout_text);
  out.output_total_bytes = r.stdout_total_bytes;
  out.exit_code = r.exit_code;
  out.timed_out = r.timed_out;
  out.cancelled = r.cancelled;
  return out;
}

}  // namespace talaria::env
