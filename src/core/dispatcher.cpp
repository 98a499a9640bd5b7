#include "talaria/core/dispatcher.h"

#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <future>
#include <stop_token>
#include <typeinfo>

#include <nlohmann/json.hpp>

#include "core/compiled_schema.h"
#include "talaria/base/executor.h"
#include "talaria/base/strings.h"
#include "talaria/core/untrusted_content.h"

namespace talaria {
namespace {

// A JSON object result gets "approval": note; any other result gets the note appended as text.
void AddApprovalNote(ToolResult& result, const std::string& note) {
  auto body = ParseJson(result.text);
  if (body && body->is_object()) {
    (*body)["approval"] = note;
    result.text = DumpJson(*body);
  } else {
    result.text += "\n[" + note + "]";
  }
}

std::string DemangledTypeName(const std::type_info& type) {
  int status = 0;
  char* name = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string out = (status == 0 && name != nullptr) ? name : type.name();
  std::free(name);
  return out;
}

ToolResult InvalidArgumentsResult() {
  Json body = Json::object();
  body["error"] = "Invalid tool arguments";
  body["message"] = "Tool arguments must be a valid JSON object; tool was not executed.";
  return ToolResult::ErrorJson(std::move(body), CallStatus::kError, "invalid_arguments");
}

ToolResult ExecutionFailed(std::string_view type, std::string_view what) {
  return ToolResult::Error("Tool execution failed: " + std::string(type) + ": " + std::string(what),
                           CallStatus::kError, "exception");
}

// Handler-made JSON with an oversized "error" field is re-bounded at the boundary.
void BoundHandlerError(ToolResult& r) {
  if (r.text.size() <= kMaxToolErrorChars || r.text.front() != '{' ||
      r.text.find("\"error\"") == std::string::npos) {
    return;
  }
  auto parsed = ParseJson(r.text);
  if (!parsed || !parsed->is_object()) return;
  auto it = parsed->find("error");
  if (it == parsed->end() || !it->is_string() ||
      it->get_ref<const std::string&>().size() <= kMaxToolErrorChars) {
    return;
  }
  *it = BoundErrorMessage(it->get_ref<const std::string&>());
  r.text = DumpJson(*parsed);
}

// Normalizes, coerces and validates `args` in place for `entry`; the problems when invalid.
std::optional<std::vector<std::string>> PrepareArgs(const ToolEntry& entry, Json& args) {
  const ArgNormalizer normalize = entry.normalize_args();
  if (normalize != nullptr && args.is_object()) normalize(args);
  const CompiledSchema& schema = entry.compiled();
  schema.coercion().Coerce(args);
  std::vector<std::string> problems;
  if (schema.validator().Validate(args, &problems)) return std::nullopt;
  return problems;
}

}  // namespace

Dispatcher::Dispatcher(Registry& registry, DispatcherOptions options)
    : registry_(registry), options_(std::move(options)) {}

Availability Dispatcher::CheckRunnable(const ToolEntry& entry) const {
  if (entry.owner() == CallOwner::kAgentLoop &&
      (!router_ || (router_takes_ && !router_takes_(entry.name())))) {
    return Availability{false, std::string(kNeedsAgentLoop)};
  }
  return registry_.CheckAvailability(entry);
}

std::vector<std::string> Dispatcher::RunnableTools(std::span<const std::string> names) const {
  std::vector<std::string> out;
  for (const std::string& name : names) {
    auto entry = registry_.GetEntry(name);
    if (entry && CheckRunnable(*entry).available) out.push_back(name);
  }
  return out;
}

ToolResult Dispatcher::Dispatch(std::string_view name, std::string_view raw_args, ToolContext& ctx,
                                PreHookMode pre_mode) const {
  if (IsBlank(raw_args, kJsonSpace)) return DispatchArgs(name, Json::object(), ctx, pre_mode);
  auto parsed = ParseJson(raw_args);
  if (!parsed || !parsed->is_object()) {
    const auto started = std::chrono::steady_clock::now();
    Json empty = Json::object();
    return Finish(name, empty, InvalidArgumentsResult(), nullptr, ctx, started);
  }
  return DispatchArgs(name, std::move(*parsed), ctx, pre_mode);
}

ToolResult Dispatcher::DispatchArgs(std::string_view name, Json args, ToolContext& ctx,
                                    PreHookMode pre_mode) const {
  const auto started = std::chrono::steady_clock::now();
  std::shared_ptr<const ToolEntry> entry;
  ToolResult result = Run(name, args, ctx, pre_mode, entry);
  return Finish(name, args, std::move(result), entry.get(), ctx, started);
}

ToolResult Dispatcher::Run(std::string_view& name, Json& args, ToolContext& ctx,
                           PreHookMode pre_mode, std::shared_ptr<const ToolEntry>& entry) const {
  if (!args.is_object()) return InvalidArgumentsResult();
  entry = registry_.Resolve(name);
  if (!entry)
    return ToolResult::Error("Unknown tool: " + std::string(name), CallStatus::kError,
                             "unknown_tool");
  name = entry->name();

  if (auto problems = PrepareArgs(*entry, args)) {
    Json body = Json::object();
    body["error"] = "Invalid arguments for " + std::string(name) + ": " + Join(*problems, "; ");
    body["problems"] = std::move(*problems);
    return ToolResult::ErrorJson(std::move(body), CallStatus::kError, "invalid_arguments");
  }

  if (entry->owner() == CallOwner::kAgentLoop) {
    if (router_ && (!router_takes_ || router_takes_(name))) {
      if (auto routed = router_(name, args, ctx)) return std::move(*routed);
    }
    return ToolResult::Error(std::string(name) + " must be handled by the agent loop",
                             CallStatus::kError, "agent_loop_tool");
  }

  std::string approval_note;
  if (policy_) {
    Policy::Decision d = policy_->Check(*entry, args, ctx);
    if (!d.allowed) return ToolResult::Error(d.message, CallStatus::kBlocked, "policy_block");
    approval_note = std::move(d.note);
  }

  if (hooks_.has_pre()) {
    PreHookDecision d = hooks_.RunPre(name, args, ctx, pre_mode);
    if (d.kind == PreHookDecision::Kind::kBlock) {
      return ToolResult::Error(d.message.empty() ? "Blocked by a pre-tool hook" : d.message,
                               CallStatus::kBlocked, "plugin_block");
    }
    if (d.kind == PreHookDecision::Kind::kModify && d.new_args) {
      // Hook output is input like any other: it is coerced and validated before the handler.
      Json modified = *d.new_args;
      if (auto problems = PrepareArgs(*entry, modified)) {
        return ToolResult::Error("A pre-tool hook produced invalid arguments for " +
                                     std::string(name) + ": " + Join(*problems, "; "),
                                 CallStatus::kError, "invalid_arguments");
      }
      // What a hook changed is judged again: a hook must not smuggle a command past the policy.
      if (policy_) {
        Policy::Decision again = policy_->Check(*entry, modified, ctx);
        if (!again.allowed)
          return ToolResult::Error(again.message, CallStatus::kBlocked, "policy_block");
        if (!again.note.empty()) approval_note = std::move(again.note);
      }
      args = std::move(modified);
    }
  }

  if (!entry->counts_as_read()) {
    if (read_loop_) read_loop_->NotifyOtherToolCall(ctx.task_id);
    if (ctx.read_tracker) ctx.read_tracker->NotifyOtherToolCall(ctx.task_id);
  }

  ToolResult result = Execute(*entry, args, ctx);
  if (!approval_note.empty()) AddApprovalNote(result, approval_note);
  return result;
}

namespace {

std::string TimedOutMessage(const std::string& tool, std::chrono::steady_clock::duration waited) {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.1f", std::chrono::duration<double>(waited).count());
  std::string message = "Error executing tool '" + tool + "': timed out after ";
  message += secs;
  message += "s";
  return message;
}

// A handler that honoured a stop request returns early with whatever it had; the call still
// ends as cancelled — or timed out, when the stop came from its deadline (a batch's watchdog
// fires the token then) — with that partial text kept for the model.
ToolResult MarkStopped(ToolResult r, const ToolContext& ctx, const std::string& tool,
                       std::chrono::steady_clock::time_point began) {
  if (!ctx.cancelled() || r.status == CallStatus::kTimedOut) return r;
  const bool timed_out = ctx.expired();
  if (r.status == CallStatus::kCancelled) {
    if (timed_out) {
      r.status = CallStatus::kTimedOut;
      r.error_type = "timeout";
    }
    return r;
  }
  Json body = Json::object();
  body["error"] = timed_out ? TimedOutMessage(tool, std::chrono::steady_clock::now() - began)
                            : std::string("Tool execution cancelled by user interrupt");
  body["status"] = timed_out ? "timeout" : "cancelled";
  if (!r.text.empty()) body["partial_output"] = r.text;
  return timed_out ? ToolResult::ErrorJson(std::move(body), CallStatus::kTimedOut, "timeout")
                   : ToolResult::ErrorJson(std::move(body), CallStatus::kCancelled, "cancelled");
}

}  // namespace

ToolResult Dispatcher::Execute(const ToolEntry& entry, Json& args, ToolContext& ctx) const {
  if (ctx.cancelled()) {
    return ToolResult::Error("Tool execution cancelled before " + entry.name() + " started",
                             CallStatus::kCancelled, "cancelled");
  }
  const auto began = std::chrono::steady_clock::now();
  if (began >= ctx.deadline) {
    return ToolResult::Error(
        "Error executing tool '" + entry.name() + "': deadline passed before it started",
        CallStatus::kTimedOut, "timeout");
  }
  try {
    if (!entry.is_async()) {
      ToolResult r = entry.handler()(args, ctx);
      BoundHandlerError(r);
      return MarkStopped(std::move(r), ctx, entry.name(), began);
    }
    // The handler gets its own stop source so a timeout here can stop it, while a cancel
    // from the caller still reaches it through the forwarding callback.
    std::stop_source own_stop;
    std::stop_callback forward(ctx.cancel, [&own_stop] { own_stop.request_stop(); });
    ToolContext handler_ctx = ctx;
    handler_ctx.cancel = own_stop.get_token();
    const auto limit = std::min(ctx.deadline, began + options_.async_timeout);
    handler_ctx.deadline = limit;
    std::future<ToolResult> future = entry.async_handler()(args, handler_ctx);
    if (!future.valid()) return ToolResult::Error("async handler returned no future");
    // Through the shared executor's wait: a cancel wakes it even when the handler ignores its
    // token, and on an executor worker (an async handler dispatching a tool) it runs queued
    // tasks instead of blocking, so nested async calls never deadlock the pool. When it runs
    // the handler's own task itself, the deadline still stops the handler (own_stop).
    const WaitResult waited = Executor::WaitFor(future, limit, ctx.cancel, own_stop);
    if (waited != WaitResult::kReady) {
      own_stop.request_stop();
      // A cooperative handler ends promptly once stopped; give it a short grace.
      (void)Executor::WaitFor(future, std::chrono::steady_clock::now() + std::chrono::seconds(3));
      // A cancel token fired at the deadline (a batch's alarm) is a timeout, not a cancel;
      // kStopped without a cancel: the executor this worker belongs to is shutting down.
      const bool cancelled = ctx.cancelled() ? !ctx.expired() : waited == WaitResult::kStopped;
      if (cancelled) {
        return ToolResult::Error("Tool execution cancelled by user interrupt",
                                 CallStatus::kCancelled, "cancelled");
      }
      return ToolResult::Error(TimedOutMessage(entry.name(), limit - began), CallStatus::kTimedOut,
                               "timeout");
    }
    ToolResult r = future.get();
    BoundHandlerError(r);
    return MarkStopped(std::move(r), ctx, entry.name(), began);
  } catch (const std::exception& e) {
    return ExecutionFailed(DemangledTypeName(typeid(e)), e.what());
  } catch (...) {
    return ExecutionFailed("unknown", "non-standard exception");
  }
}

ToolResult Dispatcher::Finish(std::string_view name, const Json& args, ToolResult result,
                              const ToolEntry* entry, ToolContext& ctx,
                              std::chrono::steady_clock::time_point started) const {
  if (hooks_.has_post() || hooks_.has_transform()) {
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    PostToolEvent event{name, args, result, ms, ctx};
    if (hooks_.has_post()) hooks_.RunPost(event);
    if (auto replaced = hooks_.RunTransform(event)) result.text = std::move(*replaced);
  }
  const ResultOrigin origin{name, entry ? entry->max_result_chars() : -1,
                            entry != nullptr && entry->never_spill()};
  ApplyResultBudget(options_.budget, origin, ctx.call_id, result);
  if (!result.untrusted_source.empty()) {
    result.text = WrapUntrusted(result.text, result.untrusted_source);
    result.untrusted_source.clear();  // wrapped once: a later stage must not wrap it again
  }
  return result;
}

}  // namespace talaria
