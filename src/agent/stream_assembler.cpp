#include "agent/stream_assembler.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "talaria/agent/model_client.h"

namespace talaria::agent {
namespace {

int64_t IntField(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end()) return 0;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_number_float()) return static_cast<int64_t>(it->get<double>());
  return 0;
}

const Json* ObjectField(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_object() ? &*it : nullptr;
}

const std::string* StringField(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

// The text of a reasoning value: a string, or an object with "text" or "content".
const std::string* ReasoningText(const Json& value) {
  if (value.is_string()) return &value.get_ref<const std::string&>();
  if (value.is_object()) {
    if (const std::string* text = StringField(value, "text")) return text;
    if (const std::string* text = StringField(value, "content")) return text;
  }
  return nullptr;
}

}  // namespace

Json ParseBoundedJson(std::string_view text) {
  auto parsed = ParseJson(text);
  if (!parsed) return Json(Json::value_t::discarded);
  return std::move(*parsed);
}

Usage ParseUsage(const Json& usage) {
  Usage out;
  if (!usage.is_object()) return out;
  out.input_tokens = IntField(usage, "prompt_tokens");
  out.output_tokens = IntField(usage, "completion_tokens");
  if (const Json* details = ObjectField(usage, "prompt_tokens_details")) {
    out.cached_tokens = IntField(*details, "cached_tokens");
  }
  if (out.cached_tokens == 0) out.cached_tokens = IntField(usage, "prompt_cache_hit_tokens");
  if (const Json* details = ObjectField(usage, "completion_tokens_details")) {
    out.reasoning_tokens = IntField(*details, "reasoning_tokens");
  }
  return out;
}

Status StreamAssembler::OnEvent(std::string_view event, std::string_view data) {
  if (data == "[DONE]") {
    turn_.done = true;
    return Status::Ok();
  }
  // The scanner for plain chunks ("message" is the default event's name); the DOM for named
  // events and whatever the scanner declines.
  if ((event.empty() || event == "message") && ScanChunk(data, scanned_)) {
    turn_.any_chunk = true;
    OnScannedChunk(scanned_);
    return Status::Ok();
  }
  Json chunk = ParseBoundedJson(data);
  if (chunk.is_discarded() || !chunk.is_object()) {
    if (event == "error") {
      // An error event whose data is plain text.
      turn_.error = Json{{"message", std::string(data)}};
      return Status::Ok();
    }
    std::string preview(data.substr(0, 200));
    return InvalidArgumentError("the model server sent a stream event that is not JSON: " +
                                preview);
  }
  turn_.any_chunk = true;
  if (event == "error" && !chunk.contains("error")) {
    if (!turn_.error) turn_.error = chunk;
    return Status::Ok();
  }
  OnChunk(chunk);
  return Status::Ok();
}

void StreamAssembler::AddText(std::string_view text) {
  if (text.empty()) return;
  turn_.content += text;
  if (observer_ != nullptr) observer_->OnText(text);
}

void StreamAssembler::AddReasoning(std::string_view text) {
  if (text.empty()) return;
  turn_.reasoning += text;
  if (observer_ != nullptr) observer_->OnReasoning(text);
}

void StreamAssembler::OnScannedChunk(const ScannedChunk& chunk) {
  if (!chunk.model.empty()) turn_.model = chunk.model;
  int64_t position = 0;
  for (const ScannedChoice& choice : chunk.choices) {
    const int64_t index = choice.has_index ? choice.index : position;
    ++position;
    if (index != choice_) continue;
    AddText(choice.content);
    // reasoning_content (DeepSeek, vLLM) or reasoning (OpenRouter, Groq): a server sending
    // both spellings is counted once.
    AddReasoning(!choice.reasoning_content.empty() ? choice.reasoning_content : choice.reasoning);
    turn_.refusal += choice.refusal;
    for (const ScannedCall& call : choice.calls) OnToolCallDelta(call);
    if (!choice.finish_reason.empty()) turn_.finish_reason = choice.finish_reason;
  }
}

void StreamAssembler::OnChunk(const Json& chunk) {
  if (auto it = chunk.find("error"); it != chunk.end() && !it->is_null()) {
    if (!turn_.error) turn_.error = *it;
  }
  if (const std::string* model = StringField(chunk, "model"); model && !model->empty()) {
    turn_.model = *model;
  }
  if (auto it = chunk.find("usage"); it != chunk.end() && it->is_object()) {
    turn_.usage = ParseUsage(*it);
    turn_.usage_seen = true;
  }
  auto choices = chunk.find("choices");
  if (choices == chunk.end() || !choices->is_array()) return;
  int64_t position = 0;
  for (const Json& choice : *choices) {
    int64_t index = position++;
    if (!choice.is_object()) continue;
    if (auto it = choice.find("index"); it != choice.end() && it->is_number_integer()) {
      index = it->get<int64_t>();
    }
    if (index != choice_) continue;
    if (const Json* delta = ObjectField(choice, "delta")) OnDelta(*delta);
    if (const std::string* finish = StringField(choice, "finish_reason")) {
      if (!finish->empty()) turn_.finish_reason = *finish;
    }
  }
}

void StreamAssembler::OnDelta(const Json& delta) {
  if (auto it = delta.find("content"); it != delta.end()) {
    if (it->is_string()) {
      AddText(it->get_ref<const std::string&>());
    } else if (it->is_array()) {
      // Mistral: [{"type": "text", "text": ...}, {"type": "thinking", "thinking": [...]}]
      for (const Json& part : *it) {
        if (!part.is_object()) continue;
        if (JsonStringField(part, "type") == "thinking") {
          if (auto th = part.find("thinking"); th != part.end() && th->is_array()) {
            for (const Json& piece : *th) {
              if (const std::string* text = ReasoningText(piece)) AddReasoning(*text);
            }
          }
        } else if (const std::string* text = StringField(part, "text")) {
          AddText(*text);
        }
      }
    }
  }
  const std::string* reasoning = nullptr;
  if (auto it = delta.find("reasoning_content"); it != delta.end()) reasoning = ReasoningText(*it);
  if (reasoning == nullptr || reasoning->empty()) {
    if (auto it = delta.find("reasoning"); it != delta.end()) reasoning = ReasoningText(*it);
  }
  if (reasoning != nullptr) AddReasoning(*reasoning);
  if (const std::string* refusal = StringField(delta, "refusal")) turn_.refusal += *refusal;
  if (auto it = delta.find("tool_calls"); it != delta.end() && it->is_array()) {
    for (const Json& entry : *it) {
      if (!entry.is_object()) continue;
      ScannedCall& call = call_delta_;
      call.has_index = false;
      if (auto index = entry.find("index"); index != entry.end() && index->is_number_integer()) {
        call.has_index = true;
        call.index = index->get<int64_t>();
      }
      const std::string* id = StringField(entry, "id");
      call.id = id != nullptr ? *id : "";
      call.name.clear();
      call.arguments.clear();
      if (const Json* function = ObjectField(entry, "function")) {
        if (const std::string* name = StringField(*function, "name")) call.name = *name;
        if (auto args = function->find("arguments"); args != function->end()) {
          if (args->is_string()) {
            call.arguments = args->get_ref<const std::string&>();
          } else if (args->is_object() || args->is_array()) {
            call.arguments = DumpJson(*args);  // a server that sends the arguments parsed
          }
        }
      }
      OnToolCallDelta(call);
    }
  }
}

size_t StreamAssembler::OpenCall() {
  turn_.tool_calls.emplace_back();
  return turn_.tool_calls.size() - 1;
}

void StreamAssembler::OnToolCallDelta(const ScannedCall& entry) {
  if (turn_.tool_calls.size() >= kMaxToolCalls) {
    // A hostile or broken server: the placement search must stay cheap, memory bounded.
    if (!turn_.error) {
      turn_.error = Json{{"message", "the response opened more than " +
                                         std::to_string(kMaxToolCalls) + " tool calls"}};
    }
    return;
  }
  const std::string& id = entry.id;
  size_t slot = 0;
  if (entry.has_index) {
    auto mapped = std::find_if(slot_of_index_.begin(), slot_of_index_.end(),
                               [&](const auto& p) { return p.first == entry.index; });
    if (mapped != slot_of_index_.end()) {
      slot = mapped->second;
      const std::string& known = turn_.tool_calls[slot].id;
      if (!id.empty() && !known.empty() && id != known) {
        slot = OpenCall();  // a reused index with a new id: another call (Ollama)
        mapped->second = slot;
      }
    } else {
      slot = OpenCall();
      slot_of_index_.emplace_back(entry.index, slot);
    }
  } else if (!id.empty()) {
    // Placed by id: the newest call with it, or a new one.
    slot = turn_.tool_calls.size();
    for (size_t i = turn_.tool_calls.size(); i-- > 0;) {
      if (turn_.tool_calls[i].id == id) {
        slot = i;
        break;
      }
    }
    if (slot == turn_.tool_calls.size()) slot = OpenCall();
  } else {
    slot = turn_.tool_calls.empty() ? OpenCall() : turn_.tool_calls.size() - 1;
  }
  ToolCall& call = turn_.tool_calls[slot];
  if (!id.empty() && call.id.empty()) call.id = id;
  if (!entry.name.empty() && call.name.empty()) {
    call.name = entry.name;
    if (observer_ != nullptr) observer_->OnToolCallStarted(slot, call.name);
  }
  call.arguments += entry.arguments;
}

void MarkTruncatedCalls(AssembledTurn& turn) {
  if (turn.tool_calls.empty()) return;
  ToolCall& last = turn.tool_calls.back();
  if (turn.finish_reason == "length") {
    last.truncated = true;
  } else if (turn.finish_reason.empty() && !IsValidJsonText(last.arguments) &&
             !last.arguments.empty()) {
    last.truncated = true;
  }
}

AssembledTurn StreamAssembler::Finish() {
  AssembledTurn out = std::move(turn_);
  turn_ = AssembledTurn{};
  slot_of_index_.clear();
  MarkTruncatedCalls(out);
  return out;
}

Result<AssembledTurn> ParseCompletion(std::string_view body, int choice) {
  Json doc = ParseBoundedJson(body);
  if (doc.is_discarded() || !doc.is_object()) {
    return Err(InvalidArgumentError("the model server's response is not a JSON object: " +
                                    std::string(body.substr(0, 200))));
  }
  AssembledTurn turn;
  turn.any_chunk = true;
  if (auto it = doc.find("error"); it != doc.end() && !it->is_null()) turn.error = *it;
  if (const std::string* model = StringField(doc, "model")) turn.model = *model;
  if (auto it = doc.find("usage"); it != doc.end() && it->is_object()) {
    turn.usage = ParseUsage(*it);
    turn.usage_seen = true;
  }
  auto choices = doc.find("choices");
  if (choices != doc.end() && choices->is_array()) {
    int64_t position = 0;
    for (const Json& c : *choices) {
      const int64_t index = c.is_object() && c.contains("index") && c["index"].is_number_integer()
                                ? c["index"].get<int64_t>()
                                : position;
      ++position;
      if (index != choice || !c.is_object()) continue;
      if (const std::string* finish = StringField(c, "finish_reason")) turn.finish_reason = *finish;
      const Json* message = ObjectField(c, "message");
      if (message == nullptr) continue;
      // The message reads like one big delta, with its tool calls placed by position.
      StreamAssembler assembler;
      Json delta = *message;
      if (auto calls = delta.find("tool_calls"); calls != delta.end() && calls->is_array()) {
        int64_t i = 0;
        for (Json& call : *calls) {
          if (call.is_object()) call["index"] = i;
          ++i;
        }
      }
      Json chunk = {{"choices", Json::array({{{"index", 0}, {"delta", std::move(delta)}}})}};
      assembler.OnChunk(chunk);
      AssembledTurn parts = std::move(assembler.turn_);
      turn.content = std::move(parts.content);
      turn.reasoning = std::move(parts.reasoning);
      turn.refusal = std::move(parts.refusal);
      turn.tool_calls = std::move(parts.tool_calls);
    }
  }
  MarkTruncatedCalls(turn);
  return turn;
}

}  // namespace talaria::agent
