#include "plugins/plugin_bridge.h"

#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "talaria/base/json.h"
#include "talaria/core/client_channel.h"
#include "talaria/core/tool_context.h"
#include "talaria/core/tool_result.h"

namespace talaria::plugins {
namespace {

// ---- one running call, as the plugin's handler sees it ----

struct CallState {
  ToolContext* ctx = nullptr;
  std::string result;
  std::optional<std::string> content;  // set_content's JSON text
};

void CallSetResult(void* context, const char* text, size_t length) {
  auto* state = static_cast<CallState*>(context);
  if (state == nullptr) return;
  try {
    if (text == nullptr)
      state->result.clear();
    else
      state->result.assign(text, length);
  } catch (...) {  // bad_alloc must not unwind into C code
    state->result.clear();
  }
}

int CallIsCancelled(void* context) {
  auto* state = static_cast<CallState*>(context);
  return state != nullptr && state->ctx != nullptr &&
         (state->ctx->cancelled() || state->ctx->expired());
}

void CallSetContent(void* context, const char* json, size_t length) {
  auto* state = static_cast<CallState*>(context);
  if (state == nullptr) return;
  try {
    if (json == nullptr)
      state->content.reset();
    else
      state->content.emplace(json, length);
  } catch (...) {
    state->content.reset();
  }
}

ClientChannel* ClientOf(void* context) {
  auto* state = static_cast<CallState*>(context);
  return state != nullptr && state->ctx != nullptr ? state->ctx->client.get() : nullptr;
}

void CallClientLog(void* context, const char* level, const char* data_json) {
  ClientChannel* client = ClientOf(context);
  if (client == nullptr || level == nullptr) return;
  try {
    Json data = data_json == nullptr ? Json() : Json(std::string(data_json));
    if (data_json != nullptr) {
      if (auto parsed = ParseJson(data_json)) data = std::move(*parsed);
    }
    client->Log(level, "", data);
  } catch (...) {
  }
}

void CallClientProgress(void* context, double progress, double total, const char* message) {
  ClientChannel* client = ClientOf(context);
  if (client == nullptr) return;
  try {
    client->Progress(progress, total < 0 ? std::nullopt : std::optional<double>(total),
                     message == nullptr ? "" : message);
  } catch (...) {
  }
}

int CallClientRequest(void* context, const char* method, const char* params_json,
                      void (*receive)(void* user, const char* text, size_t length), void* user) {
  auto reply = [&](int code, const std::string& text) {
    if (receive != nullptr) receive(user, text.c_str(), text.size());
    return code;
  };
  try {
    auto* state = static_cast<CallState*>(context);
    if (method == nullptr) return reply(TALARIA_PLUGIN_ERROR, "no method");
    ClientChannel* client = ClientOf(context);
    if (auto why = WhyClientCannotAnswer(client, method))
      return reply(TALARIA_PLUGIN_UNSUPPORTED, *why);
    Json params = Json::object();
    if (params_json != nullptr) {
      auto parsed = ParseJson(params_json);
      if (!parsed || !parsed->is_object())
        return reply(TALARIA_PLUGIN_ERROR, "params must be a JSON object");
      params = std::move(*parsed);
    }
    Result<Json> answer = client->Request(method, params, state->ctx->cancel, state->ctx->deadline);
    if (answer) return reply(TALARIA_PLUGIN_OK, DumpJson(*answer));
    const StatusCode code = answer.error().code();
    const bool stopped = code == StatusCode::kCancelled || code == StatusCode::kDeadlineExceeded;
    return reply(stopped ? TALARIA_PLUGIN_CANCELLED : TALARIA_PLUGIN_ERROR,
                 answer.error().message());
  } catch (...) {
    return TALARIA_PLUGIN_ERROR;
  }
}

// What one handler invocation produced.
struct Outcome {
  int rc = TALARIA_PLUGIN_ERROR;
  bool threw = false;
  CallState state;
};

Outcome Invoke(talaria_tool_handler fn, void* user_data, const std::string& args,
               ToolContext& ctx) {
  Outcome out;
  out.state.ctx = &ctx;
  talaria_call call{};
  call.struct_size = sizeof(talaria_call);
  call.context = &out.state;
  call.set_result = &CallSetResult;
  call.is_cancelled = &CallIsCancelled;
  call.set_content = &CallSetContent;
  call.client_log = &CallClientLog;
  call.client_progress = &CallClientProgress;
  call.client_request = &CallClientRequest;
  try {
    out.rc = fn(user_data, args.c_str(), args.size(), &call);
  } catch (...) {
    out.threw = true;
  }
  return out;
}

// A JSON object with an "error" key marks a failure, as for built-in tools.
bool IsErrorObject(const std::string& text) {
  if (text.empty() || text.front() != '{') return false;
  auto parsed = ParseJson(text);
  return parsed && parsed->is_object() && parsed->contains("error");
}

// The handler's failure as a Status (NotFound for the message "not found").
Status FailureOf(const Outcome& o, const std::string& what) {
  if (o.threw) return InternalError(what + " threw an exception");
  if (o.state.result == "not found") return NotFoundError(what + ": not found");
  if (o.state.result.empty())
    return InternalError(what + " failed (code " + std::to_string(o.rc) + ")");
  return InternalError(o.state.result);
}

// "completions": {"arg": ["a", "b"]} as a CompleteFn offering the candidates that start with
// the typed value.
mcp::CompleteFn CompletionsFrom(const Json& descriptor) {
  auto it = descriptor.find("completions");
  if (it == descriptor.end() || !it->is_object()) return nullptr;
  auto table = std::make_shared<std::map<std::string, std::vector<std::string>>>();
  for (const auto& [arg, values] : it->items()) {
    if (!values.is_array()) continue;
    auto& list = (*table)[arg];
    for (const auto& v : values) {
      if (v.is_string()) list.push_back(v.get<std::string>());
    }
  }
  return [table](std::string_view argument, std::string_view value, const Json&) {
    std::vector<std::string> out;
    auto found = table->find(std::string(argument));
    if (found == table->end()) return out;
    for (const std::string& c : found->second) {
      if (c.starts_with(value)) out.push_back(c);
    }
    return out;
  };
}

}  // namespace

SyncHandler AdaptToolHandler(talaria_tool_handler fn, void* user_data, std::string tool) {
  return [fn, user_data, tool = std::move(tool)](const Json& args, ToolContext& ctx) -> ToolResult {
    Outcome o = Invoke(fn, user_data, DumpJson(args), ctx);
    if (o.threw) {
      return ToolResult::Error("plugin tool '" + tool + "' threw an exception", CallStatus::kError,
                               "plugin_exception");
    }
    ToolResult r;
    if (IsErrorObject(o.state.result)) {
      r = ToolResult::Text(std::move(o.state.result));
      r.status = CallStatus::kError;
    } else if (o.rc == TALARIA_PLUGIN_OK) {
      r = ToolResult::Text(std::move(o.state.result));
    } else if (o.state.result.empty()) {
      r = ToolResult::Error("plugin tool '" + tool + "' failed (code " + std::to_string(o.rc) +
                            ")");
    } else {
      r = ToolResult::Error(o.state.result);
    }
    if (o.state.content) {
      auto blocks = ParseJson(*o.state.content);
      if (blocks && blocks->is_array())
        r.content = std::make_shared<const Json>(std::move(*blocks));
    }
    return r;
  };
}

Result<mcp::ResourceDef> AdaptResource(const talaria_resource_def& def, const std::string& plugin) {
  if (def.resource_json == nullptr || def.read == nullptr) {
    return Err(InvalidArgumentError("a resource needs resource_json and a read handler"));
  }
  auto descriptor = ParseJson(def.resource_json);
  if (!descriptor || !descriptor->is_object())
    return Err(InvalidArgumentError("resource_json is not a JSON object"));
  mcp::ResourceDef r;
  r.uri = JsonStringField(*descriptor, "uri");
  r.uri_template = JsonStringField(*descriptor, "uriTemplate");
  r.name = JsonStringField(*descriptor, "name");
  r.title = JsonStringField(*descriptor, "title");
  r.description = JsonStringField(*descriptor, "description");
  r.mime_type = JsonStringField(*descriptor, "mimeType");
  r.toolset = def.toolset != nullptr ? def.toolset : "";
  r.complete = CompletionsFrom(*descriptor);
  const std::string what =
      "plugin " + plugin + ": resource " + (r.uri.empty() ? r.uri_template : r.uri);
  r.read = [fn = def.read, user = def.user_data, what](const mcp::ResourceRequest& request,
                                                       ToolContext& ctx) -> Result<Json> {
    Json args = Json::object();
    args["uri"] = request.uri;
    Json vars = Json::object();
    for (const auto& [k, v] : request.variables) vars[k] = v;
    args["variables"] = std::move(vars);
    Outcome o = Invoke(fn, user, DumpJson(args), ctx);
    if (o.threw || o.rc != TALARIA_PLUGIN_OK) return Err(FailureOf(o, what));
    auto contents = ParseJson(o.state.result);
    if (!contents || !contents->is_array())
      return Err(InternalError(what + " returned no JSON array of contents"));
    return std::move(*contents);
  };
  return r;
}

Result<mcp::PromptDef> AdaptPrompt(const talaria_prompt_def& def, const std::string& plugin) {
  if (def.prompt_json == nullptr || def.get == nullptr) {
    return Err(InvalidArgumentError("a prompt needs prompt_json and a get handler"));
  }
  auto descriptor = ParseJson(def.prompt_json);
  if (!descriptor || !descriptor->is_object())
    return Err(InvalidArgumentError("prompt_json is not a JSON object"));
  mcp::PromptDef p;
  p.name = JsonStringField(*descriptor, "name");
  p.title = JsonStringField(*descriptor, "title");
  p.description = JsonStringField(*descriptor, "description");
  p.toolset = def.toolset != nullptr ? def.toolset : "";
  if (auto args = descriptor->find("arguments"); args != descriptor->end() && args->is_array()) {
    for (const auto& a : *args) {
      if (!a.is_object()) return Err(InvalidArgumentError("prompt arguments must be objects"));
      mcp::PromptArgument arg;
      arg.name = JsonStringField(a, "name");
      arg.description = JsonStringField(a, "description");
      auto required = a.find("required");
      arg.required = required != a.end() && required->is_boolean() && required->get<bool>();
      if (arg.name.empty()) return Err(InvalidArgumentError("a prompt argument needs a name"));
      p.arguments.push_back(std::move(arg));
    }
  }
  p.complete = CompletionsFrom(*descriptor);
  const std::string what = "plugin " + plugin + ": prompt " + p.name;
  p.get = [fn = def.get, user = def.user_data, what](const Json& arguments,
                                                     ToolContext& ctx) -> Result<Json> {
    Outcome o = Invoke(fn, user, DumpJson(arguments), ctx);
    if (o.threw || o.rc != TALARIA_PLUGIN_OK) return Err(FailureOf(o, what));
    auto result = ParseJson(o.state.result);
    if (!result || !result->is_object())
      return Err(InternalError(what + " returned no JSON object"));
    return std::move(*result);
  };
  return p;
}

}  // namespace talaria::plugins
