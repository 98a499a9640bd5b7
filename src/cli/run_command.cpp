// talaria run "PROMPT": one task, no conversation. The answer is streamed to stdout (tool lines
// and notices to stderr), or with --json one event per line on stdout.
#include <csignal>
#include <cstdio>
#include <stop_token>

#include "cli/agent_commands.h"
#include "cli/agent_events.h"
#include "cli/agent_setup.h"
#include "cli/signal_watch.h"

namespace talaria::cli {
namespace {

int ExitCodeOf(const agent::TurnResult& result) {
  switch (result.exit) {
    case agent::TurnExit::kAnswered:
      return kExitOk;
    case agent::TurnExit::kInterrupted:
      return kExitInterrupted;
    case agent::TurnExit::kBudgetExhausted:
    case agent::TurnExit::kModelFailed:
    case agent::TurnExit::kHalted:
      return kExitToolError;
  }
  return kExitToolError;
}

// Prints what the user must know about a turn that did not simply answer.
void ReportEnding(const agent::TurnResult& result) {
  switch (result.exit) {
    case agent::TurnExit::kAnswered:
      return;
    case agent::TurnExit::kInterrupted:
      std::fprintf(stderr, "talaria run: interrupted; the session can be resumed\n");
      return;
    case agent::TurnExit::kBudgetExhausted:
      std::fprintf(stderr,
                   "talaria run: the iteration budget was spent (agent.max_iterations or "
                   "--max-iterations); the answer may be incomplete\n");
      return;
    case agent::TurnExit::kModelFailed:
    case agent::TurnExit::kHalted:
      std::fprintf(stderr, "talaria run: %s\n",
                   result.error.empty() ? "the turn failed" : result.error.c_str());
      return;
  }
}

// Remembers whether any answer text was streamed, so an answer that arrived whole (a
// non-streaming endpoint) is still printed once.
class CountingTerminalEvents : public TerminalEvents {
 public:
  using TerminalEvents::TerminalEvents;
  void OnText(std::string_view delta) override {
    if (!delta.empty()) streamed_ = true;
    TerminalEvents::OnText(delta);
  }
  bool streamed() const { return streamed_; }

 private:
  bool streamed_ = false;
};

}  // namespace

int RunAgentTask(Runtime& rt, const RunOptions& options) {
  if (options.prompt.empty()) {
    std::fprintf(stderr, "talaria run: the prompt is empty\n");
    return kExitUsage;
  }
  // The watch first: every thread the agent starts must inherit the blocked SIGINT.
  std::stop_source stop;
  SignalWatch signals([&stop](int) { stop.request_stop(); }, nullptr);
  int exit_code = kExitOk;
  std::unique_ptr<AgentSetup> setup = SetUpAgent(rt, options.agent, "run", exit_code);
  if (!setup) return exit_code;
  agent::Agent& agent = *setup->agent;

  agent::TurnResult result;
  if (options.json) {
    JsonEvents events(stdout);
    events.SessionStarted(agent.session_id(), setup->resumed);
    result = agent.RunTurn(options.prompt, &events, stop.get_token());
    events.TurnCompleted(result);
    exit_code = ExitCodeOf(result);
    events.SessionEnded(agent.session_id(), exit_code);
  } else {
    CountingTerminalEvents events(stdout, stderr,
                                  [&rt](std::string_view name) { return ToolEmoji(rt, name); });
    result = agent.RunTurn(options.prompt, &events, stop.get_token());
    if (!events.streamed() && !result.text.empty()) events.OnText(result.text);
    events.EndText();
    exit_code = ExitCodeOf(result);
    ReportEnding(result);
  }
  return exit_code;
}

}  // namespace talaria::cli
