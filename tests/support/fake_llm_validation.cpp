#include "support/fake_llm_validation.h"

#include <strings.h>
#include <algorithm>
#include <set>

namespace talaria::test_support {
namespace {

class Problems {
 public:
  explicit Problems(const std::vector<std::string>& lenient) : lenient_(lenient) {}
  void Add(std::string kind, std::string message) {
    if (std::find(lenient_.begin(), lenient_.end(), kind) != lenient_.end()) return;
    out_.push_back(FakeLlmProblem{0, std::move(kind), std::move(message)});
  }
  std::vector<FakeLlmProblem> Take() { return std::move(out_); }

 private:
  const std::vector<std::string>& lenient_;
  std::vector<FakeLlmProblem> out_;
};

// OpenAI's rule for function names: ^[a-zA-Z0-9_-]{1,64}$.
bool ValidToolName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '-';
  });
}

bool ValidContent(const FakeJson& content) {
  if (content.is_string()) return true;
  if (!content.is_array()) return false;
  return std::all_of(content.begin(), content.end(), [](const FakeJson& part) {
    return part.is_object() && part.contains("type") && part["type"].is_string();
  });
}

std::string At(size_t i) { return "messages[" + std::to_string(i) + "]"; }

void ValidateTools(const FakeJson& body, Problems* p) {
  if (!body.contains("tools")) {
    if (body.contains("tool_choice") && !body["tool_choice"].is_null())
      p->Add("tool_choice_without_tools", "tool_choice is set but no tools are offered");
    if (body.contains("parallel_tool_calls") && !body["parallel_tool_calls"].is_null())
      p->Add("parallel_tool_calls_without_tools",
             "parallel_tool_calls is only allowed when tools are specified");
    return;
  }
  const FakeJson& tools = body["tools"];
  if (!tools.is_array()) {
    p->Add("bad_tools", "tools must be an array");
    return;
  }
  if (tools.empty()) p->Add("empty_tools", "tools is an empty array (omit it instead)");
  std::set<std::string> names;
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string at = "tools[" + std::to_string(i) + "]";
    const FakeJson& tool = tools[i];
    if (!tool.is_object() || !tool.contains("type") || tool["type"] != "function") {
      p->Add("bad_tool", at + ": type must be \"function\"");
      continue;
    }
    if (!tool.contains("function") || !tool["function"].is_object()) {
      p->Add("bad_tool", at + ": function must be an object");
      continue;
    }
    const FakeJson& fn = tool["function"];
    if (!fn.contains("name") || !fn["name"].is_string()) {
      p->Add("bad_tool_name", at + ": function.name must be a string");
      continue;
    }
    const std::string name = fn["name"].get<std::string>();
    if (!ValidToolName(name))
      p->Add("bad_tool_name", at + ": name \"" + name + "\" does not match ^[a-zA-Z0-9_-]{1,64}$");
    if (!names.insert(name).second)
      p->Add("duplicate_tool_name", at + ": tool name \"" + name + "\" offered twice");
    if (fn.contains("description") && !fn["description"].is_string())
      p->Add("bad_tool", at + ": description must be a string");
    if (fn.contains("parameters")) {
      const FakeJson& params = fn["parameters"];
      if (!params.is_object() || !params.contains("type") || params["type"] != "object") {
        p->Add("bad_tool_parameters",
               at + " (" + name + "): parameters must be an object schema with type \"object\"");
        continue;
      }
      if (params.contains("properties") && !params["properties"].is_object()) {
        p->Add("bad_tool_parameters", at + " (" + name + "): properties must be an object");
        continue;
      }
      if (params.contains("required")) {
        const FakeJson& required = params["required"];
        if (!required.is_array()) {
          p->Add("bad_tool_parameters", at + " (" + name + "): required must be an array");
          continue;
        }
        for (const auto& r : required) {
          if (!r.is_string()) {
            p->Add("bad_tool_parameters", at + " (" + name + "): required holds a non-string");
          } else if (!params.contains("properties") ||
                     !params["properties"].contains(r.get<std::string>())) {
            p->Add("bad_tool_parameters", at + " (" + name + "): required \"" +
                                              r.get<std::string>() + "\" is not a property");
          }
        }
      }
    }
  }
  if (body.contains("tool_choice")) {
    const FakeJson& choice = body["tool_choice"];
    if (choice.is_string()) {
      const std::string c = choice.get<std::string>();
      if (c != "none" && c != "auto" && c != "required")
        p->Add("bad_tool_choice", "tool_choice \"" + c + "\" is not none, auto or required");
    } else if (choice.is_object()) {
      const bool ok = choice.contains("type") && choice["type"] == "function" &&
                      choice.contains("function") && choice["function"].is_object() &&
                      choice["function"].contains("name") && choice["function"]["name"].is_string();
      if (!ok) {
        p->Add("bad_tool_choice", "tool_choice object must be {type: function, function: {name}}");
      } else if (names.count(choice["function"]["name"].get<std::string>()) == 0) {
        p->Add("bad_tool_choice", "tool_choice names a tool that is not offered");
      }
    } else if (!choice.is_null()) {
      p->Add("bad_tool_choice", "tool_choice must be a string or an object");
    }
  }
}

// Roles and their order: system/developer only before everything else; a tool message only
// right after an assistant message with tool_calls (or another tool message), answering one of
// its calls exactly once; all of them answered before the next non-tool message.
void ValidateMessages(const FakeJson& messages, Problems* p) {
  std::vector<std::string> pending;  // calls of the current assistant message not yet answered
  std::set<std::string> answered;    // calls of the current assistant message answered
  std::set<std::string> all_call_ids;
  std::set<std::string> all_answered;  // every call answered so far, in any turn
  bool in_tool_block = false;
  bool seen_conversation = false;
  auto close_block = [&](const std::string& where) {
    for (const auto& id : pending)
      p->Add("unanswered_tool_call", "tool call " + id + " has no tool message " + where);
    pending.clear();
    answered.clear();
    in_tool_block = false;
  };
  for (size_t i = 0; i < messages.size(); ++i) {
    const FakeJson& m = messages[i];
    if (!m.is_object()) {
      p->Add("bad_message", At(i) + " is not an object");
      continue;
    }
    if (!m.contains("role") || !m["role"].is_string()) {
      p->Add("bad_role", At(i) + " has no role");
      continue;
    }
    const std::string role = m["role"].get<std::string>();
    if (role != "system" && role != "developer" && role != "user" && role != "assistant" &&
        role != "tool") {
      p->Add("bad_role", At(i) + ": unknown role \"" + role + "\"");
      continue;
    }
    if (role != "tool" && in_tool_block) close_block("before " + At(i));
    if (role == "system" || role == "developer") {
      if (seen_conversation)
        p->Add("system_not_first", At(i) + ": " + role + " message after the conversation began");
      if (!m.contains("content") || !ValidContent(m["content"]))
        p->Add("bad_content", At(i) + ": " + role + " content must be a string or parts");
      continue;
    }
    seen_conversation = true;
    if (role == "user") {
      if (!m.contains("content") || !ValidContent(m["content"]))
        p->Add("bad_content", At(i) + ": user content must be a string or parts");
      continue;
    }
    if (role == "assistant") {
      const bool has_calls = m.contains("tool_calls") && !m["tool_calls"].is_null();
      const bool has_content = m.contains("content") && !m["content"].is_null();
      if (has_content && !ValidContent(m["content"]))
        p->Add("bad_content", At(i) + ": assistant content must be a string, parts or null");
      if (!has_calls) {
        if (!has_content)
          p->Add("empty_assistant", At(i) + ": assistant message without content or tool_calls");
        continue;
      }
      const FakeJson& calls = m["tool_calls"];
      if (!calls.is_array() || calls.empty()) {
        p->Add("bad_tool_calls", At(i) + ": tool_calls must be a non-empty array");
        continue;
      }
      for (size_t k = 0; k < calls.size(); ++k) {
        const std::string at = At(i) + ".tool_calls[" + std::to_string(k) + "]";
        const FakeJson& c = calls[k];
        if (!c.is_object() || !c.contains("id") || !c["id"].is_string() ||
            c["id"].get<std::string>().empty()) {
          p->Add("bad_tool_calls", at + ": id must be a non-empty string");
          continue;
        }
        const std::string id = c["id"].get<std::string>();
        if (!c.contains("type") || c["type"] != "function")
          p->Add("bad_tool_calls", at + ": type must be \"function\"");
        if (!c.contains("function") || !c["function"].is_object() ||
            !c["function"].contains("name") || !c["function"]["name"].is_string()) {
          p->Add("bad_tool_calls", at + ": function.name must be a string");
        } else if (!c["function"].contains("arguments") ||
                   !c["function"]["arguments"].is_string()) {
          p->Add("bad_tool_calls", at + ": function.arguments must be a string (JSON text)");
        } else if (FakeJson::parse(c["function"]["arguments"].get<std::string>(), nullptr, false)
                       .is_discarded()) {
          p->Add("arguments_not_json", at + ": function.arguments is not valid JSON");
        }
        if (!all_call_ids.insert(id).second) {
          p->Add("duplicate_tool_call_id", at + ": tool call id " + id + " used twice");
          continue;
        }
        pending.push_back(id);
      }
      in_tool_block = true;
      continue;
    }
    // role == "tool"
    if (!m.contains("tool_call_id") || !m["tool_call_id"].is_string()) {
      p->Add("bad_tool_message", At(i) + ": tool message without tool_call_id");
      continue;
    }
    if (!m.contains("content") || !ValidContent(m["content"]))
      p->Add("bad_content", At(i) + ": tool content must be a string or parts");
    const std::string id = m["tool_call_id"].get<std::string>();
    if (!in_tool_block) {
      p->Add("tool_without_call",
             At(i) + ": tool message (" + id + ") not after an assistant message with tool_calls");
      continue;
    }
    auto it = std::find(pending.begin(), pending.end(), id);
    if (it != pending.end()) {
      pending.erase(it);
      answered.insert(id);
      all_answered.insert(id);
    } else if (answered.count(id) != 0 || all_answered.count(id) != 0) {
      p->Add("duplicate_tool_result", At(i) + ": tool call " + id + " answered twice");
    } else {
      p->Add("unknown_tool_call_id", At(i) + ": tool message answers unknown call " + id);
    }
  }
  if (in_tool_block) close_block("at the end of messages");
}

// The string field `key`, or "" (never throws on a wrong type, unlike json::value).
std::string StringField(const FakeJson& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_string()) return "";
  return object[key].get<std::string>();
}

std::string LastToolCallId(const FakeJson& messages) {
  if (!messages.is_array() || messages.empty()) return "";
  const FakeJson& last = messages.back();
  if (!last.is_object() || !last.contains("tool_call_id") || !last["tool_call_id"].is_string())
    return "";
  return last["tool_call_id"].get<std::string>();
}

std::vector<std::string> ToolNames(const FakeJson& body) {
  std::vector<std::string> out;
  if (!body.contains("tools") || !body["tools"].is_array()) return out;
  for (const auto& tool : body["tools"]) {
    if (tool.is_object() && tool.contains("function") && tool["function"].is_object() &&
        tool["function"].contains("name") && tool["function"]["name"].is_string())
      out.push_back(tool["function"]["name"].get<std::string>());
  }
  return out;
}

}  // namespace

std::string ContentText(const FakeJson& message) {
  if (!message.is_object() || !message.contains("content")) return "";
  const FakeJson& content = message["content"];
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (content.is_array()) {
    for (const auto& part : content) {
      if (part.is_object() && part.contains("text") && part["text"].is_string())
        out += part["text"].get<std::string>();
    }
  }
  return out;
}

std::vector<FakeLlmProblem> ValidateChatRequest(const FakeJson& body,
                                                const std::vector<std::string>& lenient) {
  Problems p(lenient);
  if (!body.is_object()) {
    p.Add("bad_body", "the body is not a JSON object");
    return p.Take();
  }
  if (!body.contains("model") || !body["model"].is_string() ||
      body["model"].get<std::string>().empty())
    p.Add("missing_model", "model must be a non-empty string");
  if (!body.contains("messages") || !body["messages"].is_array()) {
    p.Add("missing_messages", "messages must be an array");
  } else if (body["messages"].empty()) {
    p.Add("missing_messages", "messages is empty");
  } else {
    ValidateMessages(body["messages"], &p);
  }
  const bool stream =
      body.contains("stream") && body["stream"].is_boolean() && body["stream"].get<bool>();
  if (body.contains("stream") && !body["stream"].is_boolean() && !body["stream"].is_null())
    p.Add("bad_stream", "stream must be a boolean");
  if (body.contains("stream_options") && !body["stream_options"].is_null() && !stream)
    p.Add("stream_options_without_stream", "stream_options is only allowed when stream is true");
  ValidateTools(body, &p);
  return p.Take();
}

std::vector<FakeLlmProblem> ValidateChatRequestText(std::string_view body,
                                                    const std::vector<std::string>& lenient) {
  FakeJson json = FakeJson::parse(body, nullptr, false);
  if (json.is_discarded()) {
    if (std::find(lenient.begin(), lenient.end(), "invalid_json") != lenient.end()) return {};
    return {FakeLlmProblem{0, "invalid_json", "the body is not valid JSON"}};
  }
  return ValidateChatRequest(json, lenient);
}

std::vector<std::string> CheckConditions(
    const FakeConditions& c, const FakeJson& body,
    const std::vector<std::pair<std::string, std::string>>& headers) {
  std::vector<std::string> out;
  const FakeJson empty = FakeJson::array();
  const FakeJson& messages =
      body.is_object() && body.contains("messages") && body["messages"].is_array()
          ? body["messages"]
          : empty;
  const FakeJson last = messages.empty() ? FakeJson::object() : messages.back();
  const std::string last_role =
      last.is_object() && last.contains("role") && last["role"].is_string()
          ? last["role"].get<std::string>()
          : "";
  if (c.last_role && last_role != *c.last_role)
    out.push_back("last message role is \"" + last_role + "\", expected \"" + *c.last_role + "\"");
  if (c.last_content_contains &&
      ContentText(last).find(*c.last_content_contains) == std::string::npos)
    out.push_back("last message content does not contain \"" + *c.last_content_contains + "\"");
  if (c.last_tool_call_id && LastToolCallId(messages) != *c.last_tool_call_id)
    out.push_back("last message is not the tool result for " + *c.last_tool_call_id);
  if (c.any_content_contains) {
    const bool found = std::any_of(messages.begin(), messages.end(), [&](const FakeJson& m) {
      return ContentText(m).find(*c.any_content_contains) != std::string::npos;
    });
    if (!found) out.push_back("no message contains \"" + *c.any_content_contains + "\"");
  }
  if (c.system_contains) {
    const bool found = !messages.empty() && messages[0].is_object() &&
                       StringField(messages[0], "role") == "system" &&
                       ContentText(messages[0]).find(*c.system_contains) != std::string::npos;
    if (!found) out.push_back("the system message does not contain \"" + *c.system_contains + "\"");
  }
  const std::vector<std::string> names = ToolNames(body);
  for (const auto& want : c.tools_include) {
    if (std::find(names.begin(), names.end(), want) == names.end())
      out.push_back("tool \"" + want + "\" is not offered");
  }
  for (const auto& unwanted : c.tools_exclude) {
    if (std::find(names.begin(), names.end(), unwanted) != names.end())
      out.push_back("tool \"" + unwanted + "\" is offered");
  }
  if (c.no_tools && *c.no_tools != names.empty())
    out.emplace_back(*c.no_tools ? "tools are offered" : "no tools are offered");
  if (c.tool_choice) {
    const FakeJson got =
        body.is_object() && body.contains("tool_choice") ? body["tool_choice"] : FakeJson();
    if (got != *c.tool_choice)
      out.push_back("tool_choice is " + got.dump() + ", expected " + c.tool_choice->dump());
  }
  if (c.message_count && messages.size() != *c.message_count)
    out.push_back("the request has " + std::to_string(messages.size()) + " messages, expected " +
                  std::to_string(*c.message_count));
  if (c.stream) {
    const bool got = body.is_object() && body.contains("stream") && body["stream"].is_boolean() &&
                     body["stream"].get<bool>();
    if (got != *c.stream)
      out.emplace_back(got ? "the request streams" : "the request does not stream");
  }
  if (c.model) {
    const std::string got = StringField(body, "model");
    if (got != *c.model) out.push_back("model is \"" + got + "\", expected \"" + *c.model + "\"");
  }
  if (c.header_contains) {
    const size_t colon = c.header_contains->find(':');
    const std::string name = c.header_contains->substr(0, colon);
    std::string text = c.header_contains->substr(colon + 1);
    text.erase(0, text.find_first_not_of(' '));
    const bool found = std::any_of(headers.begin(), headers.end(), [&](const auto& h) {
      return strcasecmp(h.first.c_str(), name.c_str()) == 0 &&
             h.second.find(text) != std::string::npos;
    });
    if (!found) out.push_back("no header " + name + " containing \"" + text + "\"");
  }
  for (const auto& [field, want] : c.fields) {
    const FakeJson got = body.is_object() && body.contains(field) ? body[field] : FakeJson();
    if (got != want) {
      out.push_back(field + " is " + (got.is_null() ? "absent" : got.dump()) + ", expected " +
                    (want.is_null() ? "absent" : want.dump()));
    }
  }
  return out;
}

}  // namespace talaria::test_support
