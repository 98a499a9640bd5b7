#include "cli/cli_session.h"

#include <cstdio>

#include "cli/tty_prompter.h"
#include "talaria/tools/code_execution.h"
#include "talaria/tools/command_policy.h"

namespace talaria::cli {

Status InstallSessionTools(Runtime& rt, std::shared_ptr<safety::ApprovalPrompter> prompter,
                           const std::vector<std::string>& toolsets) {
  TALARIA_RETURN_IF_ERROR(
      tools::InstallCommandPolicy(rt.dispatcher(), rt.config(), std::move(prompter)));
  return EnableSessionCodeExecution(rt, toolsets);
}

Status EnableSessionCodeExecution(Runtime& rt, const std::vector<std::string>& toolsets) {
  auto code = tools::CodeExecutionOptionsFromConfig(rt.config());
  if (!code) return code.error();
  auto selection = rt.toolsets().ResolveSelection(toolsets, {});
  if (!selection) return selection.error();
  code->enabled_tools.assign((*selection)->begin(), (*selection)->end());
  // Without any of the tools scripts may call there is nothing to enable: not an error.
  if (Status s = tools::EnableCodeExecution(rt.dispatcher(), std::move(*code));
      !s.ok() && s.code() != StatusCode::kFailedPrecondition) {
    return s;
  }
  return Status::Ok();
}

std::shared_ptr<tools::Session> OpenCliSession(Runtime& rt, const SessionFlags& flags,
                                               const std::string& command) {
  auto fail = [&command](const std::string& message) {
    std::fprintf(stderr, "talaria %s: %s\n", command.c_str(), message.c_str());
    return nullptr;
  };
  // Commands are judged by the guard; a dangerous one is asked about on the terminal (mode ask).
  if (Status s = InstallSessionTools(rt, MakeTtyPrompter(), {}); !s.ok()) {
    return fail(s.message());
  }
  auto options = tools::SessionOptionsFromConfig(rt.config());
  if (!options) return fail(options.error().message());
  options->roots = flags.roots;
  auto session = tools::OpenSession(std::move(*options));
  if (!session) return fail(session.error().message());
  return *session;
}

}  // namespace talaria::cli
