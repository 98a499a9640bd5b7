#include <unistd.h>

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/tty_prompter.h"
#include "talaria/tools/command_policy.h"
#include "talaria/tools/session.h"

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
  // Commands are judged by the guard; a dangerous one is asked about on the terminal (mode ask).
  if (Status s = tools::InstallCommandPolicy(rt.dispatcher(), rt.config(), MakeTtyPrompter()); !s.ok()) {
    std::fprintf(stderr, "talaria call: %s\n", s.message().c_str());
    return kExitUsage;
  }
  auto session_options = tools::SessionOptionsFromConfig(rt.config());
  if (!session_options) {
    std::fprintf(stderr, "talaria call: %s\n", session_options.error().message().c_str());
    return kExitUsage;
  }
  session_options->roots = options.session.roots;
  auto session = tools::OpenSession(std::move(*session_options));
  if (!session) {
    std::fprintf(stderr, "talaria call: %s\n", session.error().message().c_str());
    return kExitUsage;
  }
  ToolContext ctx = (*session)->NewContext("cli_" + std::to_string(::getpid()));
  ToolResult result = rt.dispatcher().DispatchArgs(options.name, std::move(args), ctx);
  std::printf("%s\n", result.text.c_str());
  return result.ok() ? kExitOk : kExitToolError;
}

}  // namespace talaria::cli
