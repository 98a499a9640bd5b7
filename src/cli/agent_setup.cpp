#include "cli/agent_setup.h"

#include <cstdio>
#include <filesystem>

#include "cli/cli_session.h"
#include "cli/tty_prompter.h"

namespace talaria::cli {
namespace {

std::string CurrentDirectory() {
  std::error_code ec;
  std::string cwd = std::filesystem::current_path(ec).string();
  return ec ? std::string() : cwd;
}

}  // namespace

std::string ToolEmoji(Runtime& rt, std::string_view name) {
  auto entry = rt.registry().GetEntry(name);
  return entry ? std::string(entry->emoji()) : std::string("\xF0\x9F\x94\xA7");  // 🔧
}

std::unique_ptr<AgentSetup> SetUpAgent(Runtime& rt, const AgentFlags& flags,
                                       const std::string& command, int& exit_code) {
  auto fail = [&](int code, const std::string& message) {
    std::fprintf(stderr, "talaria %s: %s\n", command.c_str(), message.c_str());
    exit_code = code;
    return nullptr;
  };
  if (!flags.resume.empty() && flags.continue_latest) {
    return fail(kExitUsage, "--resume and --continue cannot be used together");
  }
  auto setup = std::make_unique<AgentSetup>();
  auto model = agent::ModelSettingsFromConfig(
      rt.config(),
      agent::ModelOverrides{.model = flags.model, .base_url = flags.base_url, .api_key_env = {}});
  if (!model) return fail(kExitUsage, model.error().message());
  setup->model = *model;
  // No model named is fine: a local server that serves one model (llama.cpp, vLLM) takes a
  // request without one; an endpoint that needs one says so in its error.

  auto store = store::SessionStore::Open(store::DefaultSessionsPath());
  if (!store) return fail(kExitToolError, store.error().message());
  setup->store = std::move(*store);

  auto configured = agent::AgentOptionsFromConfig(rt.config());
  if (!configured) return fail(kExitUsage, configured.error().message());
  agent::AgentOptions options = std::move(*configured);
  options.roots = flags.session.roots;
  options.toolsets = flags.toolsets;
  if (flags.max_iterations > 0) options.max_iterations = flags.max_iterations;
  options.resume_session_id = flags.resume;
  if (flags.continue_latest) {
    const std::string cwd = CurrentDirectory();
    auto latest = setup->store->LatestSession(cwd);
    if (!latest) return fail(kExitToolError, latest.error().message());
    if (!latest->has_value()) {
      return fail(kExitUsage, "no earlier session in " + cwd + " to continue");
    }
    options.resume_session_id = (*latest)->id;
  }
  setup->resumed = !options.resume_session_id.empty();

  // Dangerous commands are asked about on the controlling terminal; without one, denied.
  if (Status s = InstallSessionTools(rt, MakeTtyPrompter(), flags.toolsets); !s.ok()) {
    return fail(kExitUsage, s.message());
  }
  options.runtime = &rt;
  options.enable_code_execution = false;  // InstallSessionTools did it, for these toolsets
  auto agent = agent::Agent::Open(std::move(options), setup->model, setup->store);
  if (!agent) {
    const bool usage = agent.error().code() == StatusCode::kNotFound ||
                       agent.error().code() == StatusCode::kInvalidArgument;
    return fail(usage ? kExitUsage : kExitToolError, agent.error().message());
  }
  setup->agent = std::move(*agent);
  return setup;
}

}  // namespace talaria::cli
