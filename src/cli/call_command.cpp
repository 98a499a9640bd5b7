#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cli/browser_daemon.h"
#include "cli/cli_session.h"
#include "cli/commands.h"
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

int ForwardToDaemon(const CallOptions& options, const Json& args) {
  ForwardOptions forward;
  if (!options.task.empty()) forward.task = options.task;
  if (!options.config_path.empty()) {
    std::error_code ec;
    forward.config_path = std::filesystem::absolute(options.config_path, ec).string();
  }
  auto result = ForwardBrowserCall(forward, options.name, args);
  if (!result) {
    std::fprintf(stderr, "talaria call: %s\n", result.error().message().c_str());
    return kExitToolError;
  }
  std::printf("%s\n", result->text.c_str());
  return result->ok() ? kExitOk : kExitToolError;
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
  if (UsesBrowserDaemon(rt, options.name)) return ForwardToDaemon(options, args);
  std::shared_ptr<tools::Session> session = OpenCliSession(rt, options.session, "call");
  if (!session) return kExitUsage;
  ToolContext ctx = session->NewContext("cli_" + std::to_string(::getpid()));
  ToolResult result = rt.dispatcher().DispatchArgs(options.name, std::move(args), ctx);
  std::printf("%s\n", result.text.c_str());
  return result.ok() ? kExitOk : kExitToolError;
}

}  // namespace talaria::cli
