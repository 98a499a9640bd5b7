#include "support/fake_llm_script.h"

#include <fstream>
#include <set>
#include <sstream>

namespace talaria::test_support {
namespace {

// A parse error carries its place ("turn 3: stream.size: ...").
struct ScriptError {
  std::string message;
};

[[noreturn]] void Fail(const std::string& where, const std::string& what) {
  throw ScriptError{where + ": " + what};
}

void CheckKeys(const FakeJson& object, const std::string& where,
               const std::set<std::string, std::less<>>& allowed) {
  if (!object.is_object()) Fail(where, "must be an object");
  for (const auto& [key, value] : object.items()) {
    if (allowed.count(key) == 0) Fail(where, "unknown key \"" + key + "\"");
  }
}

std::string GetString(const FakeJson& value, const std::string& where) {
  if (!value.is_string()) Fail(where, "must be a string");
  return value.get<std::string>();
}

size_t GetSize(const FakeJson& value, const std::string& where) {
  if (!value.is_number_unsigned()) Fail(where, "must be a non-negative integer");
  return value.get<size_t>();
}

int GetInt(const FakeJson& value, const std::string& where) {
  if (!value.is_number_integer()) Fail(where, "must be an integer");
  return value.get<int>();
}

bool GetBool(const FakeJson& value, const std::string& where) {
  if (!value.is_boolean()) Fail(where, "must be true or false");
  return value.get<bool>();
}

std::vector<std::string> GetStrings(const FakeJson& value, const std::string& where) {
  std::vector<std::string> out;
  if (value.is_string()) {
    out.push_back(value.get<std::string>());
    return out;
  }
  if (!value.is_array()) Fail(where, "must be a string or an array of strings");
  for (const auto& item : value) out.push_back(GetString(item, where));
  return out;
}

void ParseShape(const FakeJson& j, const std::string& where, FakeStreamShape* shape) {
  CheckKeys(
      j, where,
      {"chunking", "size", "seed", "gap_ms", "text_piece", "args_piece", "interleave",
       "repeat_name", "calls_in_one_delta", "call_style", "usage", "omit_done", "role_chunk"});
  for (const auto& [key, value] : j.items()) {
    const std::string at = where + "." + key;
    if (key == "chunking") {
      const std::string v = GetString(value, at);
      if (v == "events") {
        shape->chunking = FakeStreamShape::Chunking::kEvents;
      } else if (v == "fixed") {
        shape->chunking = FakeStreamShape::Chunking::kFixed;
      } else if (v == "random") {
        shape->chunking = FakeStreamShape::Chunking::kRandom;
      } else {
        Fail(at, "must be events, fixed or random");
      }
    } else if (key == "size") {
      shape->size = GetSize(value, at);
      if (shape->size == 0) Fail(at, "must be at least 1");
    } else if (key == "seed") {
      shape->seed = static_cast<uint32_t>(GetSize(value, at));
    } else if (key == "gap_ms") {
      shape->gap_ms = GetInt(value, at);
    } else if (key == "text_piece") {
      shape->text_piece = GetSize(value, at);
      if (shape->text_piece == 0) Fail(at, "must be at least 1");
    } else if (key == "args_piece") {
      shape->args_piece = GetSize(value, at);
    } else if (key == "interleave") {
      shape->interleave = GetBool(value, at);
    } else if (key == "repeat_name") {
      shape->repeat_name = GetBool(value, at);
    } else if (key == "calls_in_one_delta") {
      shape->calls_in_one_delta = GetBool(value, at);
    } else if (key == "call_style") {
      const std::string v = GetString(value, at);
      if (v == "standard") {
        shape->call_style = FakeStreamShape::CallStyle::kStandard;
      } else if (v == "ollama") {
        shape->call_style = FakeStreamShape::CallStyle::kOllama;
      } else if (v == "id_only") {
        shape->call_style = FakeStreamShape::CallStyle::kIdOnly;
      } else if (v == "index_only") {
        shape->call_style = FakeStreamShape::CallStyle::kIndexOnly;
      } else {
        Fail(at, "must be standard, ollama, id_only or index_only");
      }
    } else if (key == "usage") {
      const std::string v = GetString(value, at);
      if (v == "auto") {
        shape->usage = FakeStreamShape::UsageMode::kAuto;
      } else if (v == "separate") {
        shape->usage = FakeStreamShape::UsageMode::kSeparate;
      } else if (v == "final") {
        shape->usage = FakeStreamShape::UsageMode::kFinal;
      } else if (v == "none") {
        shape->usage = FakeStreamShape::UsageMode::kNone;
      } else {
        Fail(at, "must be auto, separate, final or none");
      }
    } else if (key == "omit_done") {
      shape->omit_done = GetBool(value, at);
    } else if (key == "role_chunk") {
      shape->role_chunk = GetBool(value, at);
    }
  }
}

FakeFault ParseFault(const FakeJson& j, const std::string& where) {
  FakeFault f;
  CheckKeys(j, where,
            {"kind", "status", "message", "retry_after", "body", "after_events", "after_bytes",
             "ms", "call", "at"});
  if (!j.contains("kind")) Fail(where, "needs \"kind\"");
  const std::string kind = GetString(j["kind"], where + ".kind");
  if (kind == "429" || kind == "rate_limit") {
    f.kind = FakeFault::Kind::kHttp;
    f.status = 429;
  } else if (kind == "500" || kind == "server_error") {
    f.kind = FakeFault::Kind::kHttp;
    f.status = 500;
  } else if (kind == "401" || kind == "unauthorized") {
    f.kind = FakeFault::Kind::kHttp;
    f.status = 401;
  } else if (kind == "http") {
    f.kind = FakeFault::Kind::kHttp;
    if (!j.contains("status")) Fail(where, "kind http needs \"status\"");
  } else if (kind == "drop") {
    f.kind = FakeFault::Kind::kDrop;
  } else if (kind == "stall") {
    f.kind = FakeFault::Kind::kStall;
    if (!j.contains("ms")) Fail(where, "kind stall needs \"ms\"");
  } else if (kind == "error_event") {
    f.kind = FakeFault::Kind::kErrorEvent;
  } else if (kind == "truncate_tool_call") {
    f.kind = FakeFault::Kind::kTruncateToolCall;
  } else {
    Fail(where + ".kind",
         "unknown fault \"" + kind +
             "\" (429|rate_limit, 500|server_error, 401|unauthorized, http, drop, stall, "
             "error_event, truncate_tool_call)");
  }
  if (j.contains("status")) f.status = GetInt(j["status"], where + ".status");
  if (j.contains("message")) f.message = GetString(j["message"], where + ".message");
  if (j.contains("retry_after")) {
    if (!j["retry_after"].is_number()) Fail(where + ".retry_after", "must be a number");
    f.retry_after = j["retry_after"].get<double>();
  }
  if (j.contains("body")) f.body = GetString(j["body"], where + ".body");
  if (j.contains("after_events")) f.after_events = GetSize(j["after_events"], where);
  if (j.contains("after_bytes")) f.after_bytes = GetSize(j["after_bytes"], where);
  if (j.contains("ms")) f.ms = GetInt(j["ms"], where + ".ms");
  if (j.contains("call")) f.call = GetSize(j["call"], where + ".call");
  if (j.contains("at")) f.at = GetSize(j["at"], where + ".at");
  return f;
}

FakeConditions ParseConditions(const FakeJson& j, const std::string& where) {
  FakeConditions c;
  CheckKeys(j, where,
            {"last_role", "last_content_contains", "last_tool_call_id", "any_content_contains",
             "system_contains", "tools_include", "tools_exclude", "no_tools", "tool_choice",
             "message_count", "stream", "model", "header_contains", "fields"});
  for (const auto& [key, value] : j.items()) {
    const std::string at = where + "." + key;
    if (key == "last_role") c.last_role = GetString(value, at);
    if (key == "last_content_contains") c.last_content_contains = GetString(value, at);
    if (key == "last_tool_call_id") c.last_tool_call_id = GetString(value, at);
    if (key == "any_content_contains") c.any_content_contains = GetString(value, at);
    if (key == "system_contains") c.system_contains = GetString(value, at);
    if (key == "tools_include") c.tools_include = GetStrings(value, at);
    if (key == "tools_exclude") c.tools_exclude = GetStrings(value, at);
    if (key == "no_tools") c.no_tools = GetBool(value, at);
    if (key == "tool_choice") c.tool_choice = value;
    if (key == "message_count") c.message_count = GetSize(value, at);
    if (key == "stream") c.stream = GetBool(value, at);
    if (key == "model") c.model = GetString(value, at);
    if (key == "header_contains") {
      c.header_contains = GetString(value, at);
      if (c.header_contains->find(':') == std::string::npos) Fail(at, "must read \"Name: text\"");
    }
    if (key == "fields") {
      if (!value.is_object()) Fail(at, "must be an object of body fields");
      for (const auto& [field, want] : value.items()) c.fields.emplace_back(field, want);
    }
  }
  return c;
}

// `number` names default call ids (call_<number>_<k>), unique across the script's turns so a
// history built from them never repeats an id.
FakeTurn ParseTurn(const FakeJson& j, const std::string& where, const FakeStreamShape& base,
                   const std::string& number) {
  FakeTurn t;
  t.shape = base;
  CheckKeys(j, where,
            {"text", "reasoning", "reasoning_field", "tool_calls", "finish_reason", "usage",
             "raw_body", "stream", "fault", "expect", "match", "label", "repeat", "hold"});
  for (const auto& [key, value] : j.items()) {
    const std::string at = where + "." + key;
    if (key == "text") t.text = GetString(value, at);
    if (key == "reasoning") t.reasoning = GetString(value, at);
    if (key == "reasoning_field") {
      t.reasoning_field = GetString(value, at);
      if (t.reasoning_field != "reasoning_content" && t.reasoning_field != "reasoning" &&
          t.reasoning_field != "reasoning.text" && t.reasoning_field != "reasoning.content")
        Fail(at, "must be reasoning_content, reasoning, reasoning.text or reasoning.content");
    }
    if (key == "finish_reason") t.finish_reason = GetString(value, at);
    if (key == "usage") {
      if (!value.is_object()) Fail(at, "must be an object");
      t.usage = value;
    }
    if (key == "raw_body") t.raw_body = GetString(value, at);
    if (key == "stream") ParseShape(value, at, &t.shape);
    if (key == "fault") t.fault = ParseFault(value, at);
    if (key == "expect") t.expect = ParseConditions(value, at);
    if (key == "match") t.match = ParseConditions(value, at);
    if (key == "label") t.label = GetString(value, at);
    if (key == "hold") {
      if (!value.is_object()) Fail(at, "must be an object {until_requests, timeout_ms}");
      CheckKeys(value, at, {"until_requests", "timeout_ms"});
      if (!value.contains("until_requests") || !value["until_requests"].is_number_unsigned() ||
          value["until_requests"].get<size_t>() < 1)
        Fail(at, "needs \"until_requests\", a whole number of at least 1");
      t.hold_until_requests = value["until_requests"].get<size_t>();
      if (value.contains("timeout_ms")) {
        if (!value["timeout_ms"].is_number_unsigned() || value["timeout_ms"].get<int64_t>() < 1 ||
            value["timeout_ms"].get<int64_t>() > 600'000)
          Fail(at + ".timeout_ms", "must be a whole number from 1 to 600000");
        t.hold_timeout_ms = value["timeout_ms"].get<int>();
      }
    }
    if (key == "tool_calls") {
      if (!value.is_array()) Fail(at, "must be an array");
      for (size_t i = 0; i < value.size(); ++i) {
        const std::string call_at = at + "[" + std::to_string(i) + "]";
        const FakeJson& c = value[i];
        CheckKeys(c, call_at, {"id", "name", "arguments"});
        FakeToolCall call;
        call.id = c.contains("id") ? GetString(c["id"], call_at + ".id")
                                   : "call_" + number + "_" + std::to_string(i + 1);
        if (!c.contains("name")) Fail(call_at, "needs \"name\"");
        call.name = GetString(c["name"], call_at + ".name");
        if (c.contains("arguments")) {
          // Text is sent as written; an object is a convenience, serialized compactly.
          call.arguments = c["arguments"].is_string() ? c["arguments"].get<std::string>()
                                                      : c["arguments"].dump();
        } else {
          call.arguments = "{}";
        }
        t.tool_calls.push_back(std::move(call));
      }
    }
  }
  return t;
}

FakeLlmScript ParseScriptOrThrow(const FakeJson& json) {
  FakeLlmScript script;
  const FakeJson* turns = &json;
  FakeJson exhausted;
  if (json.is_object()) {
    CheckKeys(json, "script", {"model", "turns", "on_exhausted", "strict", "lenient", "stream"});
    if (json.contains("model")) script.model = GetString(json["model"], "script.model");
    if (json.contains("strict")) script.strict = GetBool(json["strict"], "script.strict");
    if (json.contains("lenient")) script.lenient = GetStrings(json["lenient"], "script.lenient");
    if (json.contains("stream")) ParseShape(json["stream"], "script.stream", &script.default_shape);
    if (json.contains("on_exhausted")) exhausted = json["on_exhausted"];
    if (!json.contains("turns")) Fail("script", "needs \"turns\"");
    turns = &json["turns"];
  }
  if (!turns->is_array()) Fail("script.turns", "must be an array");
  for (size_t i = 0; i < turns->size(); ++i) {
    const FakeJson& turn = (*turns)[i];
    const std::string where = "turn " + std::to_string(i);
    size_t repeat = 1;
    if (turn.is_object() && turn.contains("repeat")) {
      repeat = GetSize(turn["repeat"], where + ".repeat");
      if (repeat == 0 || repeat > 100000) Fail(where + ".repeat", "must be 1..100000");
    }
    for (size_t k = 0; k < repeat; ++k) {
      script.turns.push_back(
          ParseTurn(turn, where, script.default_shape, std::to_string(script.turns.size())));
    }
  }
  if (exhausted.is_null()) {
    // The default: a plain final answer, so a loop that asks once more than scripted ends.
    FakeTurn done;
    done.text = "done";
    done.shape = script.default_shape;
    done.label = "exhausted";
    script.exhausted_turn = done;
  } else if (exhausted.is_string() && exhausted.get<std::string>() == "error") {
    script.exhausted_turn.reset();
  } else {
    script.exhausted_turn =
        ParseTurn(exhausted, "script.on_exhausted", script.default_shape, "exhausted");
    if (script.exhausted_turn->label.empty()) script.exhausted_turn->label = "exhausted";
  }
  return script;
}

}  // namespace

bool FakeConditions::empty() const {
  return !last_role && !last_content_contains && !last_tool_call_id && !any_content_contains &&
         !system_contains && tools_include.empty() && tools_exclude.empty() && !no_tools &&
         !tool_choice && !message_count && !stream && !model && !header_contains && fields.empty();
}

std::optional<FakeLlmScript> ParseFakeLlmScriptJson(const FakeJson& json, std::string* error) {
  try {
    return ParseScriptOrThrow(json);
  } catch (const ScriptError& e) {
    if (error != nullptr) *error = e.message;
  } catch (const std::exception& e) {
    if (error != nullptr) *error = std::string("script: ") + e.what();
  }
  return std::nullopt;
}

std::optional<FakeLlmScript> ParseFakeLlmScript(std::string_view text, std::string* error) {
  FakeJson json = FakeJson::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    // JSON lines: one turn per non-empty line.
    json = FakeJson::array();
    std::istringstream lines{std::string(text)};
    std::string line;
    size_t number = 0;
    while (std::getline(lines, line)) {
      ++number;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      FakeJson turn = FakeJson::parse(line, nullptr, false);
      if (turn.is_discarded()) {
        if (error != nullptr) {
          *error = "script: not JSON, and line " + std::to_string(number) + " is not JSON either";
        }
        return std::nullopt;
      }
      json.push_back(std::move(turn));
    }
  }
  return ParseFakeLlmScriptJson(json, error);
}

std::optional<FakeLlmScript> LoadFakeLlmScriptFile(const std::string& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (error != nullptr) *error = "cannot read script " + path;
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseFakeLlmScript(text.str(), error);
}

}  // namespace talaria::test_support
