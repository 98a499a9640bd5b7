#include <unistd.h>

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_session.h"
#include "cli/commands.h"

namespace talaria::cli {

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
  std::shared_ptr<tools::Session> session = OpenCliSession(rt, options.session, "call");
  if (!session) return kExitUsage;
  ToolContext ctx = session->NewContext("cli_" + std::to_string(::getpid()));
  ToolResult result = rt.dispatcher().DispatchArgs(options.name, std::move(args), ctx);
  std::printf("%s\n", result.text.c_str());
  return result.ok() ? kExitOk : kExitToolError;
}

}  // namespace talaria::cli
