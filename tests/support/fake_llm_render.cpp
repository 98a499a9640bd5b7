#include "support/fake_llm_render.h"

#include <algorithm>
#include <map>
#include <random>

namespace talaria::test_support {
namespace {

constexpr int64_t kCreated = 1'700'000'000;

// Pieces of at most `n` bytes that never split a UTF-8 sequence (a piece holds at least one
// whole character, so it may be longer than `n` when `n` is smaller than the character).
// Arguments are split the same way: a provider's deltas are JSON strings, whole characters.
std::vector<std::string> SplitUtf8(const std::string& text, size_t n) {
  auto continuation = [&](size_t i) {
    return (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80;
  };
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = std::min(text.size(), pos + std::max<size_t>(n, 1));
    while (end < text.size() && end > pos + 1 && continuation(end)) --end;
    while (end < text.size() && continuation(end)) ++end;
    out.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

FakeJson Usage(const FakeTurn& turn, const FakeRenderContext& ctx) {
  if (turn.usage) return *turn.usage;
  size_t written = turn.text.size() + turn.reasoning.size();
  for (const auto& c : turn.tool_calls) written += c.name.size() + c.arguments.size();
  const size_t prompt = ctx.prompt_bytes / 4 + 1;
  const size_t completion = written / 4 + 1;
  FakeJson u = FakeJson::object();
  u["prompt_tokens"] = prompt;
  u["completion_tokens"] = completion;
  u["total_tokens"] = prompt + completion;
  return u;
}

std::string FinishReason(const FakeTurn& turn) {
  if (!turn.finish_reason.empty()) return turn.finish_reason;
  return turn.tool_calls.empty() ? "stop" : "tool_calls";
}

FakeJson Chunk(const FakeRenderContext& ctx) {
  FakeJson c = FakeJson::object();
  c["id"] = "chatcmpl-fake-" + std::to_string(ctx.request_index);
  c["object"] = "chat.completion.chunk";
  c["created"] = kCreated;
  c["model"] = ctx.model;
  return c;
}

// Invalid UTF-8 (a raw_body is sent as written; rendered text is always valid) is replaced
// rather than thrown on.
std::string Dump(const FakeJson& j) {
  return j.dump(-1, ' ', false, FakeJson::error_handler_t::replace);
}

std::string Event(const FakeJson& chunk) { return "data: " + Dump(chunk) + "\n\n"; }

std::string DeltaEvent(const FakeRenderContext& ctx, FakeJson delta) {
  FakeJson c = Chunk(ctx);
  FakeJson choice = FakeJson::object();
  choice["index"] = 0;
  choice["delta"] = std::move(delta);
  choice["finish_reason"] = nullptr;
  c["choices"] = FakeJson::array({std::move(choice)});
  return Event(c);
}

// The tool_calls entries that stream call `i`, in order.
std::vector<FakeJson> CallDeltas(const FakeToolCall& call, size_t i, const FakeStreamShape& s) {
  using Style = FakeStreamShape::CallStyle;
  std::vector<std::string> fragments;
  if (s.args_piece > 0) fragments = SplitUtf8(call.arguments, s.args_piece);
  const bool whole_in_header = fragments.empty();
  std::vector<FakeJson> out;
  FakeJson header = FakeJson::object();
  if (s.call_style == Style::kStandard || s.call_style == Style::kIndexOnly) header["index"] = i;
  if (s.call_style == Style::kOllama) header["index"] = 0;  // Ollama reuses 0 for every call
  if (s.call_style != Style::kIndexOnly) header["id"] = call.id;
  header["type"] = "function";
  header["function"] = {{"name", call.name},
                        {"arguments", whole_in_header ? call.arguments : std::string()}};
  out.push_back(std::move(header));
  for (const auto& fragment : fragments) {
    FakeJson d = FakeJson::object();
    if (s.call_style == Style::kStandard || s.call_style == Style::kIndexOnly) d["index"] = i;
    if (s.call_style == Style::kOllama) d["index"] = 0;
    if (s.call_style == Style::kIdOnly) d["id"] = call.id;
    FakeJson fn = FakeJson::object();
    if (s.repeat_name) fn["name"] = call.name;
    fn["arguments"] = fragment;
    d["function"] = std::move(fn);
    out.push_back(std::move(d));
  }
  return out;
}

// {"reasoning_content": text}, {"reasoning": text}, or the object spellings
// {"reasoning": {"text": text}} ("reasoning.text") and {"reasoning": {"content": text}}.
FakeJson ReasoningField(const std::string& field, const std::string& text) {
  const size_t dot = field.find('.');
  if (dot == std::string::npos) return {{field, text}};
  return {{field.substr(0, dot), {{field.substr(dot + 1), text}}}};
}

std::vector<std::string> SplitRawEvents(const std::string& raw) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < raw.size()) {
    size_t end = raw.find("\n\n", pos);
    end = end == std::string::npos ? raw.size() : end + 2;
    out.push_back(raw.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

}  // namespace

std::string ErrorBody(const std::string& message, const std::string& type,
                      const std::string& code) {
  FakeJson e = FakeJson::object();
  e["error"] = {{"message", message}, {"type", type}, {"code", code}};
  return Dump(e);
}

FakeTurn ApplyTruncation(const FakeTurn& turn) {
  if (turn.fault.kind != FakeFault::Kind::kTruncateToolCall) return turn;
  FakeTurn t = turn;
  t.finish_reason = "length";
  if (t.tool_calls.empty()) {
    t.text = t.text.substr(0, turn.fault.at.value_or(t.text.size() / 2));
    return t;
  }
  const size_t k =
      std::min(turn.fault.call.value_or(t.tool_calls.size() - 1), t.tool_calls.size() - 1);
  t.tool_calls.resize(k + 1);
  std::string& args = t.tool_calls[k].arguments;
  args = args.substr(0, std::min(args.size(), turn.fault.at.value_or(args.size() / 2)));
  return t;
}

std::vector<std::string> RenderStreamEvents(const FakeTurn& original,
                                            const FakeRenderContext& ctx) {
  if (original.raw_body) return SplitRawEvents(*original.raw_body);
  const FakeTurn turn = ApplyTruncation(original);
  const FakeStreamShape& s = turn.shape;
  std::vector<std::string> events;
  if (s.role_chunk) {
    events.push_back(DeltaEvent(ctx, {{"role", "assistant"}, {"content", ""}}));
  }
  for (const auto& piece : SplitUtf8(turn.reasoning, s.text_piece))
    events.push_back(DeltaEvent(ctx, ReasoningField(turn.reasoning_field, piece)));
  for (const auto& piece : SplitUtf8(turn.text, s.text_piece))
    events.push_back(DeltaEvent(ctx, {{"content", piece}}));
  if (!turn.tool_calls.empty()) {
    if (s.calls_in_one_delta) {
      FakeStreamShape whole = s;
      whole.args_piece = 0;
      FakeJson calls = FakeJson::array();
      for (size_t i = 0; i < turn.tool_calls.size(); ++i)
        calls.push_back(CallDeltas(turn.tool_calls[i], i, whole)[0]);
      events.push_back(DeltaEvent(ctx, {{"tool_calls", calls}}));
    } else {
      std::vector<std::vector<FakeJson>> per_call;
      for (size_t i = 0; i < turn.tool_calls.size(); ++i)
        per_call.push_back(CallDeltas(turn.tool_calls[i], i, s));
      std::vector<FakeJson> order;
      if (s.interleave && s.call_style != FakeStreamShape::CallStyle::kOllama) {
        for (size_t step = 0;; ++step) {
          bool any = false;
          for (const auto& deltas : per_call) {
            if (step < deltas.size()) {
              order.push_back(deltas[step]);
              any = true;
            }
          }
          if (!any) break;
        }
      } else {
        for (const auto& deltas : per_call) order.insert(order.end(), deltas.begin(), deltas.end());
      }
      for (auto& d : order)
        events.push_back(DeltaEvent(ctx, {{"tool_calls", FakeJson::array({std::move(d)})}}));
    }
  }
  using UsageMode = FakeStreamShape::UsageMode;
  const bool separate =
      s.usage == UsageMode::kSeparate || (s.usage == UsageMode::kAuto && ctx.include_usage);
  FakeJson finish = Chunk(ctx);
  FakeJson choice = FakeJson::object();
  choice["index"] = 0;
  choice["delta"] = FakeJson::object();
  choice["finish_reason"] = FinishReason(turn);
  finish["choices"] = FakeJson::array({std::move(choice)});
  if (s.usage == UsageMode::kFinal) finish["usage"] = Usage(turn, ctx);
  events.push_back(Event(finish));
  if (separate) {
    FakeJson usage = Chunk(ctx);
    usage["choices"] = FakeJson::array();
    usage["usage"] = Usage(turn, ctx);
    events.push_back(Event(usage));
  }
  if (!s.omit_done) events.emplace_back("data: [DONE]\n\n");
  return events;
}

std::string RenderCompletionBody(const FakeTurn& original, const FakeRenderContext& ctx) {
  if (original.raw_body) return *original.raw_body;
  if (original.fault.kind == FakeFault::Kind::kErrorEvent)
    return ErrorBody(original.fault.message.empty() ? "scripted error" : original.fault.message,
                     "server_error", "server_error");
  const FakeTurn turn = ApplyTruncation(original);
  FakeJson message = FakeJson::object();
  message["role"] = "assistant";
  if (turn.text.empty() && !turn.tool_calls.empty()) {
    message["content"] = nullptr;
  } else {
    message["content"] = turn.text;
  }
  if (!turn.reasoning.empty()) message.update(ReasoningField(turn.reasoning_field, turn.reasoning));
  if (!turn.tool_calls.empty()) {
    FakeJson calls = FakeJson::array();
    for (const auto& c : turn.tool_calls) {
      calls.push_back({{"id", c.id},
                       {"type", "function"},
                       {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    }
    message["tool_calls"] = std::move(calls);
  }
  FakeJson body = FakeJson::object();
  body["id"] = "chatcmpl-fake-" + std::to_string(ctx.request_index);
  body["object"] = "chat.completion";
  body["created"] = kCreated;
  body["model"] = ctx.model;
  FakeJson choice = FakeJson::object();
  choice["index"] = 0;
  choice["message"] = std::move(message);
  choice["finish_reason"] = FinishReason(turn);
  body["choices"] = FakeJson::array({std::move(choice)});
  body["usage"] = Usage(turn, ctx);
  return Dump(body);
}

std::vector<FakeSendStep> PlanSend(const std::vector<std::string>& events, const FakeTurn& turn) {
  std::string bytes;
  std::vector<size_t> event_ends;
  for (const auto& e : events) {
    bytes += e;
    event_ends.push_back(bytes.size());
  }
  // Where the fault acts, as a byte offset.
  const FakeFault& f = turn.fault;
  const bool placed = f.kind == FakeFault::Kind::kDrop || f.kind == FakeFault::Kind::kStall ||
                      f.kind == FakeFault::Kind::kErrorEvent;
  size_t fault_at = bytes.size();
  if (placed) {
    if (f.after_bytes) {
      fault_at = std::min(*f.after_bytes, bytes.size());
    } else {
      size_t k = f.after_events.value_or(std::max<size_t>(events.size() / 2, 1));
      k = std::min(k, events.size());
      fault_at = k == 0 ? 0 : event_ends[k - 1];
    }
  }
  // Write boundaries: by event, fixed size or a seeded random split; the fault's offset too.
  std::vector<size_t> cuts;
  const FakeStreamShape& s = turn.shape;
  if (s.chunking == FakeStreamShape::Chunking::kEvents) {
    cuts = event_ends;
  } else if (s.chunking == FakeStreamShape::Chunking::kFixed) {
    for (size_t pos = s.size; pos < bytes.size(); pos += s.size) cuts.push_back(pos);
  } else {
    std::mt19937 rng(s.seed);
    std::uniform_int_distribution<size_t> len(1, std::max<size_t>(s.size, 1));
    for (size_t pos = len(rng); pos < bytes.size(); pos += len(rng)) cuts.push_back(pos);
  }
  cuts.push_back(bytes.size());
  if (placed) cuts.push_back(fault_at);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());

  std::vector<FakeSendStep> plan;
  size_t pos = 0;
  auto fault_step = [&]() -> bool {  // true: the plan ends here
    if (f.kind == FakeFault::Kind::kDrop) {
      plan.push_back({FakeSendStep::Kind::kClose, "", 0});
      return true;
    }
    if (f.kind == FakeFault::Kind::kStall) {
      plan.push_back({FakeSendStep::Kind::kSleep, "", f.ms});
      return false;
    }
    const std::string message = f.message.empty() ? "scripted error mid-stream" : f.message;
    plan.push_back({FakeSendStep::Kind::kWrite,
                    "data: " + ErrorBody(message, "server_error", "server_error") + "\n\n", 0});
    return true;
  };
  if (placed && fault_at == 0 && fault_step()) return plan;
  for (size_t cut : cuts) {
    if (cut <= pos) continue;
    if (s.gap_ms > 0 && !plan.empty()) plan.push_back({FakeSendStep::Kind::kSleep, "", s.gap_ms});
    plan.push_back({FakeSendStep::Kind::kWrite, bytes.substr(pos, cut - pos), 0});
    pos = cut;
    if (placed && cut == fault_at && fault_step()) return plan;
  }
  return plan;
}

}  // namespace talaria::test_support
