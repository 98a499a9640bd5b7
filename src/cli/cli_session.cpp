#include "cli/cli_session.h"

#include <cstdio>

#include "cli/tty_prompter.h"
#include "talaria/tools/command_policy.h"

namespace talaria::cli {

std::shared_ptr<tools::Session> OpenCliSession(Runtime& rt, const SessionFlags& flags, const std::string& command) {
  auto fail = [&command](const std::string& message) {
    std::fprintf(stderr, "talaria %s: %s\n", command.c_str(), message.c_str());
    return nullptr;
  };
  // Commands are judged by the guard; a dangerous one is asked about on the terminal (mode ask).
  if (Status s = tools::InstallCommandPolicy(rt.dispatcher(), rt.config(), MakeTtyPrompter()); !s.ok()) {
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
