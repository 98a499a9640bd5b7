#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/browser_daemon.h"
#include "cli/cli_session.h"
#include "cli/commands.h"
#include "talaria/core/registry.h"
#include "talaria/core/tool_entry.h"

namespace talaria::cli {
namespace {

// A one-shot browser call goes to the task's daemon: the page must outlive this process.
bool UsesBrowserDaemon(Runtime& rt, const std::string& name) {
  const char* off = std::getenv("TALARIA_BROWSER_DAEMON");
  if (off != nullptr && std::string_view(off) == "0") return false;
  const auto entry = rt.registry().Resolve(name);
  return entry != nullptr && entry->toolset() == "browser";
}

// The call goes through this process's dispatcher — policy, PreToolUse hooks (config's and a
// trusted project config's for our cwd), coercion, PostToolUse hooks, budget — with the tool's
// body replaced by the trip to the daemon (browser_daemon.h says why hooks run here).
int ForwardToDaemon(Runtime& rt, const CallOptions& options, Json args) {
  ForwardOptions forward;
  if (!options.task.empty()) forward.task = options.task;
  if (!options.config_path.empty()) {
    std::error_code ec;
    forward.config_path = std::filesystem::absolute(options.config_path, ec).string();
  }
  const auto entry = rt.registry().Resolve(options.name);
  const std::string name = entry->name();
  const std::string schema = entry->schema_text();
  std::optional<Status> unreachable;  // the daemon could not be reached: said on stderr
  ToolSpec spec;
  spec.name = name;
  spec.toolset = entry->toolset();
  spec.schema = std::string_view(schema);
  spec.max_result_chars = entry->max_result_chars();
  spec.handler = [&forward, &unreachable, name](const Json& hooked, ToolContext&) {
    auto result = ForwardBrowserCall(forward, name, hooked);
    if (result) return std::move(*result);
    unreachable = result.error();
    return ToolResult::Error(result.error().message());
  };
  const std::vector<std::string> remove = {name};
  std::vector<ToolSpec> add;
  add.push_back(std::move(spec));
  if (Status s = rt.registry().Replace(remove, std::move(add)); !s.ok()) {
    std::fprintf(stderr, "talaria call: %s\n", s.message().c_str());
    return kExitToolError;
  }
  std::shared_ptr<tools::Session> session = OpenCliSession(rt, options.session, "call");
  if (!session) return kExitUsage;
  ToolContext ctx = session->NewContext("cli_" + std::to_string(::getpid()));
  ToolResult result = rt.dispatcher().DispatchArgs(name, std::move(args), ctx);
  if (unreachable) {
    std::fprintf(stderr, "talaria call: %s\n", unreachable->message().c_str());
    return kExitToolError;
  }
  std::printf("%s\n", result.text.c_str());
  return result.ok() ? kExitOk : kExitToolError;
}

}  // namespace

int RunCall(Runtime& rt, const CallOptions& options) {
  Json args = Json::object();
  if (!options.args_json.empty()) {
    auto parsed = ParseJson(options.args_json);
    if (!parsed || !parsed->is_object()) {
      std::fprintf(stderr, "talaria call: --args must be a JSON object\n");
      return kExitUsage;
    }
    args = std::move(*parsed);
  }
  for (const auto& assignment : options.assignments) {
    const size_t eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "talaria call: expected key=value, got '%s'\n", assignment.c_str());
      return kExitUsage;
    }
    args[assignment.substr(0, eq)] = assignment.substr(eq + 1);
  }
  if (UsesBrowserDaemon(rt, options.name)) return ForwardToDaemon(rt, options, std::move(args));
  std::shared_ptr<tools::Session> session = OpenCliSession(rt, options.session, "call");
  if (!session) return kExitUsage;
  ToolContext ctx = session->NewContext("cli_" + std::to_string(::getpid()));
  ToolResult result = rt.dispatcher().DispatchArgs(options.name, std::move(args), ctx);
  std::printf("%s\n", result.text.c_str());
  return result.ok() ? kExitOk : kExitToolError;
}

}  // namespace talaria::cli
