// The RL tools' process-wide state (rl_state.h).
#include "rl/rl_state.h"

#include <nlohmann/json.hpp>

namespace talaria::rl {

RlState& RlState::Get() {
  // Destroyed at exit: each TrainingRun's destructor ends its processes, so a clean exit of
  // talaria leaves no trainer behind.
  static RlState state;
  return state;
}

void RlState::ResetForTesting() {
  RlState& s = Get();
  std::map<std::string, RunRecord> runs;
  {
    std::lock_guard lock(s.mu);
    runs.swap(s.runs);
    s.environments.clear();
    s.current_env.clear();
    s.current_info = EnvironmentInfo{};
    s.current_fields.clear();
    s.current_config = Json::object();
    s.run_order.clear();
    s.last_status_check.clear();
  }
  for (auto& [id, record] : runs) record.run->Stop();
}

}  // namespace talaria::rl
