// The agent's side of delegate_task and of usage spent outside its own requests: the calls the
// router brings (agent_routing.cpp) and the children's usage charged to this session.
#include "agent/agent_impl.h"
#include "agent/message_rows.h"

namespace talaria::agent {

bool AgentImpl::TakesAgentCall(std::string_view name) {
  return name == "delegate_task" || TakesLoopTool(name);
}

std::optional<ToolResult> AgentImpl::RouteAgentCall(std::string_view name, const Json& args,
                                                    ToolContext& ctx) {
  if (name == "delegate_task") {
    if (delegator_ == nullptr) return ToolResult::Error("delegate_task: the session is not open");
    return delegator_->Run(args, ctx);
  }
  return RouteLoopTool(name, args);
}

std::string AgentImpl::TakeDelegationNotices() {
  return delegator_ != nullptr ? delegator_->TakeNotices() : std::string();
}

void AgentImpl::KeepDelegationNotices() {
  if (delegator_ == nullptr) return;
  delegator_->StopAll();
  const std::string left = delegator_->TakeNotices();
  if (left.empty() || session_id_.empty()) return;
  // Undelivered ones from an earlier close stay in front (the state still holds them).
  (void)store_->PutState(session_id_, kDelegationNoticesKey, Json(carried_notices_ + left));
}

void AgentImpl::AddOutsideUsage(const Usage& usage, double cost) {
  if (delegator_ != nullptr) delegator_->AddUsage(usage, cost);
}

void AgentImpl::ChargeOutsideUsage(store::StoredMessage& row) {
  if (delegator_ == nullptr) return;
  Usage usage;
  double cost = 0;
  delegator_->TakeUsage(usage, cost);
  if (usage.input_tokens == 0 && usage.output_tokens == 0 && cost == 0) return;
  session_usage_ += usage;
  session_cost_ += cost;
  const store::TokenTotals t = ToTotals(usage, cost);
  row.usage.input_tokens += t.input_tokens;
  row.usage.cached_tokens += t.cached_tokens;
  row.usage.output_tokens += t.output_tokens;
  row.usage.reasoning_tokens += t.reasoning_tokens;
  row.usage.cost_usd += t.cost_usd;
}

}  // namespace talaria::agent
