// One response's tool calls: hygiene (names, arguments, truncation, duplicates), the loop
// guardrails, the assistant message committed before anything runs, the batch, then one tool
// message per call in call order, each committed.
#include <chrono>

#include "agent/agent_impl.h"
#include "agent/call_hygiene.h"
#include "agent/messages.h"
#include "talaria/base/random.h"
#include "talaria/core/batch_executor.h"

namespace talaria::agent {
namespace {

using Disposition = PreparedCall::Disposition;

ToolCallStatus ToEventStatus(CallStatus status) {
  switch (status) {
    case CallStatus::kOk:
      return ToolCallStatus::kOk;
    case CallStatus::kError:
      return ToolCallStatus::kError;
    case CallStatus::kBlocked:
      return ToolCallStatus::kBlocked;
    case CallStatus::kCancelled:
      return ToolCallStatus::kCancelled;
    case CallStatus::kTimedOut:
      return ToolCallStatus::kTimedOut;
  }
  return ToolCallStatus::kError;
}

// The guard's warning goes where the model reads it: into a JSON object result as a field,
// else after the text.
void AppendWarning(std::string& text, const std::string& warning) {
  if (warning.empty()) return;
  if (!text.empty() && text.front() == '{') {
    auto body = ParseJson(text);
    if (body && body->is_object()) {
      (*body)["loop_guard"] = warning;
      text = DumpJson(*body);
      return;
    }
  }
  text += "\n\n" + warning;
}

// A name providers accept in a history (^[a-zA-Z0-9_-]{1,64}$): a refused call keeps the
// model's spelling where it can, so its result still makes sense to the model.
std::string WireSafeName(std::string_view name) {
  std::string out;
  for (char c : name.substr(0, 64)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    out.push_back(ok ? c : '_');
  }
  return out.empty() ? std::string("unknown_tool") : out;
}

bool IsCorrection(const ToolResult& result) {
  return result.error_type == "invalid_arguments" || result.error_type == "unknown_tool";
}

}  // namespace

std::string AgentImpl::UniqueCallId(std::string id) {
  // Some providers number calls per response ("call_0" every time) or send none; a history
  // with one id twice is refused by strict providers.
  if (id.empty() || id.size() > 128 || used_call_ids_.count(id) != 0) {
    do {
      id = "call_" + RandomHex(12);
    } while (used_call_ids_.count(id) != 0);
  }
  used_call_ids_.insert(id);
  return id;
}

RoundOutcome AgentImpl::RunToolRound(Message assistant, const Usage& usage, double cost,
                                     TurnState& turn) {
  RoundOutcome outcome;
  const size_t n = assistant.tool_calls.size();
  std::vector<PreparedCall> prepared =
      PrepareCalls(assistant.tool_calls, offered_,
                   [this](std::string_view name) { return ResolveOffered(name); });

  // What the history keeps: the calls as they will run (repaired), with unique ids, and valid
  // JSON arguments even for a refused call (its result quotes what the model sent).
  std::vector<std::string> blocked(n);
  std::vector<bool> idempotent(n, false);
  for (size_t i = 0; i < n; ++i) {
    ToolCall& call = assistant.tool_calls[i];
    PreparedCall& p = prepared[i];
    call.id = p.id = UniqueCallId(call.id);
    call.truncated = false;
    if (p.disposition == Disposition::kRejected) {
      outcome.invalid = true;
      if (!IsValidJsonText(call.arguments)) call.arguments = "{}";
      call.name = p.name = WireSafeName(call.name);
      continue;
    }
    call.name = p.name;
    call.arguments = p.arguments;
    if (p.disposition == Disposition::kRun) {
      idempotent[i] = IsIdempotent(p.name);
      blocked[i] = guard_.CheckBefore(p.name, p.canonical, idempotent[i]);
    }
  }
  if (Status s = Persist(std::move(assistant), &usage, cost); !s.ok()) {
    outcome.error = "session store: " + s.message();
    return outcome;
  }
  const std::vector<ToolCall>& calls = request_.messages.back().tool_calls;

  // The batch: the calls that run, in order.
  std::vector<BatchCall> batch_calls;
  std::vector<size_t> call_of;  // batch index -> call index
  for (size_t i = 0; i < n; ++i) {
    const PreparedCall& p = prepared[i];
    if (p.disposition != Disposition::kRun || !blocked[i].empty()) continue;
    batch_calls.push_back(BatchCall{p.name, p.arguments, p.id});
    call_of.push_back(i);
  }
  outcome.only_execute_code = !batch_calls.empty();
  for (const BatchCall& c : batch_calls) {
    if (c.name != "execute_code") outcome.only_execute_code = false;
  }

  AgentEvents* events = turn.events;
  if (events != nullptr) {
    for (size_t i = 0; i < n; ++i) {
      const PreparedCall& p = prepared[i];
      if (p.disposition == Disposition::kRejected || !blocked[i].empty()) {
        events->OnToolCallStarted(i, p.name, calls[i].arguments);
        events->OnToolCallFinished(i, p.name,
                                   p.disposition == Disposition::kRejected
                                       ? ToolCallStatus::kError
                                       : ToolCallStatus::kBlocked,
                                   std::chrono::milliseconds(0));
      }
    }
  }

  std::vector<ToolResult> batch_results;
  if (!batch_calls.empty()) {
    using Clock = std::chrono::steady_clock;
    std::vector<Clock::time_point> started(batch_calls.size());
    BatchOptions options;
    if (events != nullptr) {
      options.on_event = [&](const BatchEvent& e) {
        if (e.index >= call_of.size()) return;
        const size_t i = call_of[e.index];
        if (e.kind == BatchEvent::Kind::kStarted) {
          started[e.index] = Clock::now();
          events->OnToolCallStarted(i, e.name, batch_calls[e.index].arguments);
        } else {
          const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() -
                                                                                  started[e.index]);
          events->OnToolCallFinished(
              i, e.name, e.result ? ToEventStatus(e.result->status) : ToolCallStatus::kError, took);
        }
      };
    }
    Batch batch(runtime_->dispatcher(), batch_calls, std::move(options));
    ToolContext base = session_->NewContext("turn", session_id_);
    base.session_id = session_id_;
    base.cancel = turn.stop;              // Ctrl-C stops the running calls and skips the rest
    base.unattended = child_ != nullptr;  // a subagent's calls ask no human
    batch_results = batch.Run(base);
  }

  // One tool message per call, in call order.
  std::vector<ToolResult> results(n);
  for (size_t b = 0; b < call_of.size() && b < batch_results.size(); ++b) {
    results[call_of[b]] = std::move(batch_results[b]);
  }
  for (size_t i = 0; i < n; ++i) {
    const PreparedCall& p = prepared[i];
    ToolResult& r = results[i];
    switch (p.disposition) {
      case Disposition::kRejected:
        r = ToolResult::Text(p.rejection);
        r.status = CallStatus::kError;
        break;
      case Disposition::kDuplicate:
        r = results[p.duplicate_of];  // earlier, so already final
        break;
      case Disposition::kRun: {
        const bool was_blocked = !blocked[i].empty();
        if (was_blocked) {
          r = ToolResult::Text(blocked[i]);
          r.status = CallStatus::kBlocked;
        }
        if (IsCorrection(r)) outcome.invalid = true;
        std::string warning =
            guard_.Record(p.name, p.canonical, idempotent[i], r.text, !r.ok(), was_blocked);
        AppendWarning(r.text, warning);
        break;
      }
    }
  }
  // Every result is final only now (the batch's turn budget may spill some), so they are
  // committed together, in call order: one transaction instead of one per call.
  std::vector<Message> answers;
  answers.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    answers.push_back(ToolMessage(prepared[i].id, prepared[i].name, std::move(results[i].text)));
  }
  if (Status s = PersistAll(std::move(answers)); !s.ok()) {
    outcome.error = "session store: " + s.message();
    return outcome;
  }
  outcome.halted = guard_.halted();
  outcome.interrupted = turn.stop.stop_requested();
  return outcome;
}

}  // namespace talaria::agent
