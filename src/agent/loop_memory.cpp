// The memory tool in the loop: one MemoryStore per agent over $TALARIA_HOME/memories, and the
// frozen snapshot a new session's system prompt carries. A write the model cannot make (the
// store is full, the file needs fixing by hand, content refused by the threat scan) is also
// told to the person as a notice: the original dropped such writes without a word (#79472).
#include "agent/agent_impl.h"
#include "talaria/base/json.h"

namespace talaria::agent {

Status AgentImpl::SetUpMemory() {
  if (offered_set_.count("memory") == 0) return Status::Ok();
  memory::MemorySettings settings =
      TALARIA_TRY(memory::MemorySettingsFromConfig(runtime_->config()));
  memory_ = std::make_unique<memory::MemoryStore>(std::move(settings));
  // Taken once, now: writes during the session change the files and the tool's results, never
  // the prompt prefix (it stays cache-stable). A resumed session keeps its stored prompt; this
  // snapshot only feeds a prompt rebuilt by a compaction. An embedder's own snapshot wins.
  if (options_.memory_snapshot.empty()) options_.memory_snapshot = memory_->Snapshot();
  return Status::Ok();
}

ToolResult AgentImpl::RunMemory(const Json& args) {
  if (memory_ == nullptr) return ToolResult::Error("memory is not available in this session");
  // A delegated child has nobody watching: its replace and remove wait for the person.
  memory::WriteOutcome outcome = memory_->Call(args, /*unattended=*/child_ != nullptr);
  if (!outcome.notice.empty()) {
    if (AgentEvents* events = turn_events_.load(); events != nullptr) {
      events->OnNotice(outcome.notice);
    }
  }
  if (outcome.ok) return ToolResult::Text(DumpJson(*outcome.result));
  return ToolResult::ErrorJson(std::move(*outcome.result));
}

}  // namespace talaria::agent
