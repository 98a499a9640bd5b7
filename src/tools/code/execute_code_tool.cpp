// execute_code: registration bound to a dispatcher (see talaria/tools/code_execution.h), the
// schema as the model sees it (rebuilt to list only the tools scripts can call), and the
// config section.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include <nlohmann/json.hpp>

#include "talaria/base/paths.h"
#include "talaria/tools/code_execution.h"
#include "tools/code/code_runner.h"
#include "tools/code/stub_module.h"

namespace talaria::tools {
namespace {

constexpr std::string_view kToolName = "execute_code";

std::string Description(const std::vector<code::StubTool>& stubs,
                        const CodeExecutionOptions& options) {
  std::string text =
      "Run a Python script that calls tools programmatically. Use it when you need three or more "
      "tool calls with "
      "logic between them, to filter or reduce large tool outputs before they reach your context, "
      "or for loops and "
      "conditional branching. Only what the script prints comes back to you; tool results stay "
      "inside the "
      "script.\n\nImport the tools with `from hermes_tools import ...` (also available as "
      "`talaria_tools`):\n";
  for (const code::StubTool& tool : stubs) {
    text += "  ";
    text += code::AdvertisedSignature(tool.name, tool.schema_params);
    text += "\n";
  }
  text +=
      "Each returns the tool's JSON result parsed into a dict. Helpers: json_parse(text), "
      "shell_quote(s), "
      "retry(fn, max_attempts=3, delay=2).\n\nLimits: ";
  text += std::to_string(options.timeout.count());
  text += " s, ";
  text += std::to_string(options.max_tool_calls);
  text += " tool calls, ";
  text += std::to_string(options.max_stdout_bytes);
  text +=
      " bytes of stdout (head and tail kept). The script runs with the Python standard library "
      "only, in a "
      "private temporary directory";
  text += options.network ? "" : " without network access";
  text += "; reach project files through the tools.";
  return text;
}

Json Schema(const std::vector<code::StubTool>& stubs, const CodeExecutionOptions& options) {
  Json schema = Json::object();
  schema["name"] = std::string(kToolName);
  schema["description"] = Description(stubs, options);
  Json params = Json::object();
  params["type"] = "object";
  Json props = Json::object();
  props["code"] = {{"type", "string"},
                   {"description",
                    "Python source. Import tools with `from hermes_tools import ...`; print() what "
                    "you want to see."}};
  props["reset"] = {
      {"type", "boolean"},
      {"default", false},
      {"description",
       "Discard interpreter state first (every call starts fresh, so this is a no-op)."}};
  params["properties"] = std::move(props);
  params["required"] = Json::array({"code"});
  schema["parameters"] = std::move(params);
  return schema;
}

// The parameter names of a registered tool's schema.
std::vector<std::string> SchemaParams(const ToolEntry& entry) {
  std::vector<std::string> names;
  auto schema = ParseJson(entry.schema_text());
  if (!schema) return names;
  auto params = schema->find("parameters");
  if (params == schema->end() || !params->is_object()) return names;
  auto props = params->find("properties");
  if (props == params->end() || !props->is_object()) return names;
  for (auto it = props->begin(); it != props->end(); ++it) names.push_back(it.key());
  return names;
}

}  // namespace

const std::vector<std::string>& SandboxToolNames() { return code::StubbedToolNames(); }

Status EnableCodeExecution(Dispatcher& dispatcher, CodeExecutionOptions options) {
  if (options.python.empty() || options.python.front() != '/') {
    return InvalidArgumentError("code_execution.python must be an absolute path, not '" +
                                options.python + "'");
  }
  Registry& registry = dispatcher.registry();
  const auto registered = [&](const std::string& name) {
    auto entry = registry.GetEntry(name);
    return entry != nullptr && registry.CheckAvailability(*entry).available;
  };
  std::vector<std::string> allowed;
  for (const std::string& name : SandboxToolNames()) {
    const auto& enabled = options.enabled_tools;
    if (!enabled.empty() && std::find(enabled.begin(), enabled.end(), name) == enabled.end())
      continue;
    if (registered(name)) allowed.push_back(name);
  }
  // As in the original: a session enabling none of the seven gets all of them.
  if (allowed.empty()) {
    for (const std::string& name : SandboxToolNames()) {
      if (registered(name)) allowed.push_back(name);
    }
  }
  if (allowed.empty())
    return FailedPreconditionError(
        "execute_code: none of the tools scripts may call is registered");

  std::vector<code::StubTool> stubs;
  for (const std::string& name : allowed) {
    auto entry = registry.GetEntry(name);
    stubs.push_back(code::StubTool{name, entry->description(), SchemaParams(*entry)});
  }
  safety::GuardOptions guard;
  guard.home = ShellHome();
  guard.talaria_home = TalariaHome();
  const Json schema = Schema(stubs, options);
  auto runner = std::make_shared<const code::CodeRunner>(
      dispatcher, options, allowed, code::TalariaToolsModule(stubs), std::move(guard));
  ToolSpec spec;
  spec.name = std::string(kToolName);
  spec.toolset = "code_execution";
  spec.schema = schema;
  spec.handler = [runner](const Json& args, ToolContext& ctx) { return runner->Run(args, ctx); };
  spec.emoji = "\xF0\x9F\x90\x8D";  // "🐍"
  spec.max_result_chars = 100'000;
  spec.parallel = ParallelClass::kNever;
  spec.annotations.destructive = true;
  spec.annotations.open_world = options.network;
  return registry.Register(std::move(spec));
}

void DisableCodeExecution(Dispatcher& dispatcher) {
  (void)dispatcher.registry().Deregister(kToolName);
}

}  // namespace talaria::tools
