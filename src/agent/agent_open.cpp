// Opening an agent: the runtime and the tools the session offers, then a new session (its
// system prompt persisted as the first message) or a resumed one (calls a crash interrupted
// answered first, then the stored history and todo list loaded).
#include <unistd.h>

#include <algorithm>

#include "agent/agent_impl.h"
#include "agent/agent_routing.h"
#include "agent/message_rows.h"
#include "agent/system_prompt.h"
#include "talaria/core/registry.h"
#include "talaria/tools/code_execution.h"
#include "talaria/tools/command_policy.h"

namespace talaria::agent {
namespace {

constexpr std::string_view kDefaultToolset = "talaria-cli";
constexpr std::string_view kOpenTodoStateKey = "todo";

std::string CurrentDirectory() {
  char buf[4096];
  return getcwd(buf, sizeof buf) != nullptr ? std::string(buf) : std::string();
}

}  // namespace

Result<std::unique_ptr<Agent>> Agent::Open(AgentOptions options, ModelSettings model,
                                           std::shared_ptr<store::SessionStore> store) {
  return Open(std::move(options), std::move(model), std::move(store), nullptr);
}

Result<std::unique_ptr<Agent>> Agent::Open(AgentOptions options, ModelSettings model,
                                           std::shared_ptr<store::SessionStore> store,
                                           std::unique_ptr<ModelClient> client) {
  if (store == nullptr) return Err(InvalidArgumentError("agent: no session store"));
  if (client == nullptr) client = TALARIA_TRY(ModelClient::Open(model));
  auto agent = std::make_unique<AgentImpl>(std::move(options), std::move(model), std::move(store),
                                           std::move(client));
  TALARIA_RETURN_IF_ERROR(agent->Init());
  return std::unique_ptr<Agent>(std::move(agent));
}

AgentImpl::AgentImpl(AgentOptions options, ModelSettings model,
                     std::shared_ptr<store::SessionStore> store,
                     std::unique_ptr<ModelClient> client)
    : options_(std::move(options)),
      model_(std::move(model)),
      store_(std::move(store)),
      client_(std::move(client)) {
  compaction_.threshold = options_.compression_threshold;
  compaction_.tail_ratio = options_.compaction_tail_ratio;
}

AgentImpl::~AgentImpl() {
  KeepDelegationNotices();
  delegator_.reset();  // its children first: they use this agent's runtime and store
  if (registered_code_execution_) tools::DisableCodeExecution(runtime_->dispatcher());
  // The router finds agents by session: a runtime that outlives this one must not call into it.
  if (!session_id_.empty()) UnregisterSession(session_id_);
  if (routing_attached_) DetachRouting(runtime_->dispatcher());
}

Status AgentImpl::Init() {
  if (options_.max_iterations < 1) {
    return InvalidArgumentError("agent: max_iterations must be at least 1");
  }
  TALARIA_RETURN_IF_ERROR(SetUpRuntime());
  DelegationSettings delegation = TALARIA_TRY(DelegationSettingsFromConfig(runtime_->config()));
  TALARIA_RETURN_IF_ERROR(SetUpTools());
  TALARIA_RETURN_IF_ERROR(SetUpMemory());
  TALARIA_RETURN_IF_ERROR(options_.resume_session_id.empty() ? OpenNewSession() : ResumeSession());
  RegisterSession(session_id_, this, &runtime_->dispatcher());
  const int depth = child_ ? child_->depth : 0;
  const bool may_delegate = child_ == nullptr || child_->may_delegate;
  delegator_ = std::make_unique<Delegator>(*this, std::move(delegation), depth, may_delegate);
  return Status::Ok();
}

Status AgentImpl::SetUpRuntime() {
  if (options_.runtime != nullptr) {
    runtime_ = options_.runtime;
  } else {
    RuntimeOptions rt;
    rt.config_path = options_.config_path;
    own_runtime_ = TALARIA_TRY(Runtime::Create(rt));
    runtime_ = own_runtime_.get();
    TALARIA_RETURN_IF_ERROR(tools::InstallCommandPolicy(runtime_->dispatcher(), runtime_->config(),
                                                        options_.approval_prompter));
  }
  // One router per dispatcher, shared by the agents on it (a parent and its subagents): each
  // call goes to the agent of its session.
  AttachRouting(runtime_->dispatcher());
  routing_attached_ = true;
  return Status::Ok();
}

Status AgentImpl::SetUpTools() {
  std::vector<std::string> toolsets = options_.toolsets;
  if (toolsets.empty()) toolsets.emplace_back(kDefaultToolset);
  ToolList selection = TALARIA_TRY(runtime_->toolsets().ResolveSelection(toolsets, {}));
  Registry& registry = runtime_->registry();

  const bool wants_code =
      std::find(selection->begin(), selection->end(), "execute_code") != selection->end();
  if (wants_code && options_.enable_code_execution && !registry.GetEntry("execute_code")) {
    auto code = tools::CodeExecutionOptionsFromConfig(runtime_->config());
    if (!code) return code.error();
    code->enabled_tools.assign(selection->begin(), selection->end());
    // Not having any tool a script may call is not an error: execute_code is just not offered.
    registered_code_execution_ =
        tools::EnableCodeExecution(runtime_->dispatcher(), std::move(*code)).ok();
  }

  // Only what can run: the loop-owned tools this loop does not take are unavailable.
  offered_ = runtime_->dispatcher().RunnableTools(*selection);
  if (child_ != nullptr) {
    // A subagent: only what its parent offers, minus the blocked tools.
    const std::vector<std::string>& allowed = child_->allowed_tools;
    std::erase_if(offered_, [&allowed](const std::string& name) {
      return std::find(allowed.begin(), allowed.end(), name) == allowed.end();
    });
  }
  offered_set_.insert(offered_.begin(), offered_.end());
  if (!offered_.empty()) {
    auto definitions = registry.GetDefinitions(offered_);
    auto parsed = ParseJson(*definitions);
    if (!parsed || !parsed->is_array()) {
      return InternalError("agent: the registry's tool definitions do not parse");
    }
    request_.tools = std::move(*parsed);
    tools_tokens_ = static_cast<int64_t>(definitions->size() / 4);
  }
  return Status::Ok();
}

std::string AgentImpl::ResolveOffered(std::string_view name) const {
  auto entry = runtime_->registry().Resolve(name);
  if (entry == nullptr || offered_set_.count(entry->name()) == 0) return {};
  return entry->name();
}

bool AgentImpl::IsIdempotent(std::string_view tool) const {
  auto entry = runtime_->registry().GetEntry(tool);
  if (entry == nullptr) return false;
  const ToolAnnotations a = entry->annotations();
  return entry->counts_as_read() || a.read_only || a.idempotent;
}

std::string AgentImpl::MakeSystemPrompt(bool compacted) const {
  SystemPromptParts parts;
  parts.tool_names = offered_;
  parts.memory_snapshot = options_.memory_snapshot;
  if (options_.load_context_files) parts.context_files = LoadContextFiles(cwd_);
  parts.extra = options_.extra_system_prompt;
  parts.cwd = cwd_;
  parts.model = model_.model;
  parts.session_id = session_id_;
  parts.started = started_;
  parts.compacted = compacted;
  return BuildSystemPrompt(parts);
}

Status AgentImpl::OpenNewSession() {
  tools::SessionOptions session_options =
      TALARIA_TRY(tools::SessionOptionsFromConfig(runtime_->config()));
  session_options.roots = options_.roots;
  session_options.read_guards = tools::ReadGuards::kOn;
  // The tool session first: its workspace says where the project is (the store row keeps it).
  session_ = TALARIA_TRY(tools::Session::Open(session_options));
  cwd_ = session_->workspace() ? session_->workspace()->cwd() : CurrentDirectory();
  store::NewSession row;
  row.cwd = cwd_;
  row.model = model_.model;
  if (child_ != nullptr) {
    row.parent_id = child_->parent_session_id;
    row.source = "delegate";
  }
  store::SessionRow created = TALARIA_TRY(store_->CreateSession(row));
  session_id_ = created.id;
  started_ = TodayForPrompt();
  return Persist(TextMessage(Role::kSystem, MakeSystemPrompt(false)));
}

Status AgentImpl::ResumeSession() {
  std::optional<store::SessionRow> row =
      TALARIA_TRY(store_->GetSession(options_.resume_session_id));
  if (!row) return NotFoundError("no session " + options_.resume_session_id);
  session_id_ = row->id;
  tools::SessionOptions session_options =
      TALARIA_TRY(tools::SessionOptionsFromConfig(runtime_->config()));
  session_options.roots = options_.roots;
  if (session_options.roots.empty() && !row->cwd.empty()) session_options.roots = {row->cwd};
  session_options.read_guards = tools::ReadGuards::kOn;
  session_ = TALARIA_TRY(tools::Session::Open(session_options));
  cwd_ = session_->workspace() ? session_->workspace()->cwd() : row->cwd;
  started_ = TodayForPrompt();

  // Calls a crash cut off get their "interrupted" results before anything is sent.
  (void)TALARIA_TRY(store_->RepairInterrupted(session_id_));
  std::vector<store::StoredMessage> rows = TALARIA_TRY(store_->LoadHistory(session_id_));
  request_.messages = FromRows(rows);
  if (request_.messages.empty() || request_.messages.front().role != Role::kSystem) {
    // A session stored without its prompt (another front end's): give it one, in memory.
    request_.messages.insert(request_.messages.begin(),
                             TextMessage(Role::kSystem, MakeSystemPrompt(false)));
  }
  for (const Message& m : request_.messages) {
    for (const ToolCall& call : m.tool_calls) used_call_ids_.insert(call.id);
    if (m.role == Role::kUser) ++turns_;
  }
  std::optional<Json> notices = TALARIA_TRY(store_->GetState(session_id_, kDelegationNoticesKey));
  if (notices && notices->is_string()) carried_notices_ = notices->get<std::string>();
  std::optional<Json> todo = TALARIA_TRY(store_->GetState(session_id_, kOpenTodoStateKey));
  if (todo) {
    std::lock_guard lock(todo_mu_);
    todo_.Restore(*todo);
  }
  const store::TokenTotals& t = row->totals;
  session_usage_ = Usage{t.input_tokens, t.cached_tokens, t.output_tokens, t.reasoning_tokens};
  session_cost_ = t.cost_usd;
  return Status::Ok();
}

Usage AgentImpl::SessionUsage() const {
  Usage usage = session_usage_;
  if (delegator_ != nullptr) {
    Usage outside;
    double cost = 0;
    delegator_->PeekUsage(outside, cost);
    usage += outside;
  }
  return usage;
}

double AgentImpl::SessionCostUsd() const {
  double cost = 0;
  if (delegator_ != nullptr) {
    Usage outside;
    delegator_->PeekUsage(outside, cost);
  }
  return session_cost_ + cost;
}

}  // namespace talaria::agent
