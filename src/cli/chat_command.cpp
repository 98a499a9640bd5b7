// talaria chat: a conversation on the terminal. Streamed answers, one line per tool call,
// approval prompts and clarify questions on the terminal, slash commands, line editing and
// history (libedit). Ctrl-C cancels the turn in progress; a second Ctrl-C (or one at an empty
// prompt after the first) exits; Ctrl-D or /exit ends the chat.
#include <limits.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "cli/agent_commands.h"
#include "cli/agent_events.h"
#include "cli/checkpoints_command.h"
#include "cli/line_editor.h"
#include "cli/signal_watch.h"
#include "cli/table.h"
#include "talaria/base/paths.h"
#include "talaria/base/strings.h"

namespace talaria::cli {
namespace {

constexpr std::string_view kHelp =
    "Commands:\n"
    "  /new             start a new session\n"
    "  /resume [ID]     resume a session (without ID: list the recent ones)\n"
    "  /sessions        list recent sessions\n"
    "  /usage           tokens and cost of this session\n"
    "  /tools           the tools this session offers the model\n"
    "  /compact         summarize the conversation so far to free context\n"
    "  /memory [show|pending|approve ID|reject ID]\n"
    "                   what the agent remembers, and its writes waiting for you\n"
    "  /rollback [N [FILE]]  list checkpoints, or restore one (/rollback diff N shows it)\n"
    "  /help            this list\n"
    "  /exit            leave (also Ctrl-D)\n"
    "Ctrl-C cancels the answer in progress; pressed again, it leaves.\n";

// The chat's state shared with the signal watch thread.
struct ChatSignals {
  std::atomic<bool> turn_running{false};
  std::atomic<int> interrupts{0};  // Ctrl-Cs since the last line entered
  // One per turn, never freed before the chat ends: the watch thread may still hold a pointer
  // to an earlier turn's when the next one starts.
  std::vector<std::unique_ptr<std::stop_source>> turn_stops;  // main thread only
  std::atomic<std::stop_source*> current{nullptr};
  std::atomic<LineEditor*> editor{nullptr};
};

void PrintUsage(const agent::Usage& u, const agent::ModelSettings& model) {
  std::printf("tokens: %lld in (%lld cached), %lld out (%lld reasoning)",
              static_cast<long long>(u.input_tokens), static_cast<long long>(u.cached_tokens),
              static_cast<long long>(u.output_tokens), static_cast<long long>(u.reasoning_tokens));
  if (model.pricing.known()) {
    std::printf(" · about $%.4f", model.pricing.Cost(u));
  } else {
    std::printf(" · cost unknown (no pricing for %s in config.yaml)", model.model.c_str());
  }
  std::printf("\n");
}

void PrintSessions(store::SessionStore& db) {
  auto sessions = db.ListSessions(store::ListOptions{.cwd = {}, .limit = 10});
  if (!sessions) {
    std::printf("cannot list sessions: %s\n", sessions.error().message().c_str());
    return;
  }
  if (sessions->empty()) {
    std::printf("no sessions yet\n");
    return;
  }
  Table table({"id", "model", "msgs", "title"});
  for (const auto& s : *sessions) {
    table.AddRow(
        {s.id, s.model, std::to_string(s.message_count), s.title.empty() ? s.cwd : s.title});
  }
  table.Print(stdout);
}

class Chat {
 public:
  Chat(Runtime& rt, const ChatOptions& options)
      : rt_(rt),
        options_(options),
        events_(stdout, stdout, [&rt](std::string_view name) { return ToolEmoji(rt, name); }) {}

  int Run() {
    // The watch first: every thread the agent starts must inherit the blocked SIGINT, or a
    // Ctrl-C could be delivered to one of them and kill the process.
    SignalWatch watch([this](int sig) { OnSignal(sig); }, nullptr);
    int exit_code = kExitOk;
    setup_ = SetUpAgent(rt_, options_.agent, "chat", exit_code);
    if (!setup_) return exit_code;
    // A member, so it outlives the watch thread that may interrupt it.
    editor_ = std::make_unique<LineEditor>(TalariaHome().empty() ? std::string()
                                                                 : TalariaHome() + "/chat_history");
    signals_.editor.store(editor_.get());
    Banner();
    for (;;) {
      const LineEditor::ReadResult read = editor_->Read("\xE2\x80\xBA ");  // "› "
      if (read.status == LineEditor::ReadStatus::kEndOfInput) {
        std::printf("\n");
        return kExitOk;
      }
      if (read.status == LineEditor::ReadStatus::kInterrupted) {
        if (signals_.interrupts.load() >= 2) return kExitInterrupted;
        std::printf("(Ctrl-C again, Ctrl-D or /exit to leave)\n");
        continue;
      }
      signals_.interrupts.store(0);
      const std::string line(Trim(read.line));
      if (line.empty()) continue;
      if (line.front() == '/') {
        if (!Command(line)) return kExitOk;
        continue;
      }
      if (!Turn(line)) return kExitInterrupted;
    }
  }

 private:
  void OnSignal(int sig) {
    if (sig == SIGTERM) {
      signals_.interrupts.store(2);
    } else {
      signals_.interrupts.fetch_add(1);
    }
    if (signals_.turn_running.load()) {
      if (std::stop_source* stop = signals_.current.load()) stop->request_stop();
    } else if (LineEditor* editor = signals_.editor.load()) {
      editor->Interrupt();
    }
  }

  std::stop_source& NewTurnStop() {
    signals_.turn_stops.push_back(std::make_unique<std::stop_source>());
    std::stop_source& stop = *signals_.turn_stops.back();
    signals_.current.store(&stop);
    signals_.turn_running.store(true);
    return stop;
  }

  void Banner() {
    std::printf("talaria chat · %s at %s · session %s%s\n", setup_->model.model.c_str(),
                setup_->model.base_url.c_str(), setup_->agent->session_id().c_str(),
                setup_->resumed ? " (resumed)" : "");
    std::printf("/help for commands · Ctrl-C cancels · Ctrl-D leaves\n");
  }

  // false: leave the chat (a second Ctrl-C while the turn wound down).
  bool Turn(const std::string& line) {
    std::stop_source& stop = NewTurnStop();
    agent::TurnResult result = setup_->agent->RunTurn(line, &events_, stop.get_token());
    signals_.turn_running.store(false);
    signals_.current.store(nullptr);
    events_.EndText();
    switch (result.exit) {
      case agent::TurnExit::kAnswered:
        break;
      case agent::TurnExit::kInterrupted:
        std::printf("· interrupted (the session goes on)\n");
        break;
      case agent::TurnExit::kBudgetExhausted:
        std::printf("· iteration budget reached; the answer may be incomplete\n");
        break;
      case agent::TurnExit::kModelFailed:
      case agent::TurnExit::kHalted:
        std::printf("· %s\n", result.error.empty() ? "the turn failed" : result.error.c_str());
        break;
    }
    return signals_.interrupts.load() < 2;
  }

  // false: /exit.
  bool Command(const std::string& line) {
    const size_t space = line.find(' ');
    const std::string name = line.substr(0, space);
    const std::string arg = space == std::string::npos ? "" : std::string(Trim(line.substr(space)));
    if (name == "/exit" || name == "/quit") return false;
    if (name == "/help") {
      std::fputs(kHelp.data(), stdout);
    } else if (name == "/usage") {
      PrintUsage(setup_->agent->SessionUsage(), setup_->model);
    } else if (name == "/tools") {
      for (const auto& tool : setup_->agent->ToolNames()) {
        std::printf("  %s %s\n", ToolEmoji(rt_, tool).c_str(), tool.c_str());
      }
    } else if (name == "/sessions") {
      PrintSessions(*setup_->store);
    } else if (name == "/compact") {
      std::stop_source& stop = NewTurnStop();
      const Status s = setup_->agent->Compact(&events_, stop.get_token());
      signals_.turn_running.store(false);
      signals_.current.store(nullptr);
      std::printf("· %s\n", s.ok() ? "compacted" : s.message().c_str());
    } else if (name == "/memory") {
      Memory(arg);
    } else if (name == "/rollback") {
      RunRollback(rt_, RollbackDirectory(), arg);
    } else if (name == "/new" || name == "/resume") {
      if (name == "/resume" && arg.empty()) {
        PrintSessions(*setup_->store);
        std::printf("/resume ID to continue one of them\n");
        return true;
      }
      Reopen(name == "/new" ? std::string() : arg);
    } else {
      std::printf("unknown command %s; /help lists them\n", name.c_str());
    }
    return true;
  }

  // `talaria memory` inside the chat, for what the person decides while the session runs.
  void Memory(std::string_view arg) {
    const size_t space = arg.find(' ');
    MemoryCommandOptions m;
    m.action = std::string(arg.substr(0, space));
    if (m.action.empty()) m.action = "show";
    if (space != std::string_view::npos) m.text = std::string(Trim(arg.substr(space)));
    const bool needs_id = m.action == "approve" || m.action == "reject";
    if ((m.action != "show" && m.action != "pending" && !needs_id) ||
        (needs_id && m.text.empty())) {
      std::printf("usage: /memory [show|pending|approve ID|reject ID]\n");
      return;
    }
    (void)RunMemoryCommand(rt_.config(), m);
  }

  // The project /rollback shows: the session's first root (or the current directory), where
  // the file tools' snapshots go unless a nested project marker (package.json, .git, ...) is
  // nearer the file (`talaria checkpoints --dir` reaches those).
  std::string RollbackDirectory() const {
    const std::vector<std::string>& roots = options_.agent.session.roots;
    std::string root = roots.empty() ? std::string() : roots.front();
    char buf[PATH_MAX];
    const std::string cwd = ::getcwd(buf, sizeof buf) != nullptr ? buf : "/";
    if (root.empty()) root = cwd;
    if (root.front() != '/') root = cwd + "/" + root;
    return root;
  }

  void Reopen(const std::string& resume) {
    AgentFlags flags = options_.agent;
    flags.resume = resume;
    flags.continue_latest = false;
    int exit_code = 0;
    std::unique_ptr<AgentSetup> next = SetUpAgent(rt_, flags, "chat", exit_code);
    if (!next) return;  // the reason is printed; the current session stays
    setup_ = std::move(next);
    Banner();
  }

  Runtime& rt_;
  const ChatOptions& options_;
  std::unique_ptr<AgentSetup> setup_;
  TerminalEvents events_;
  ChatSignals signals_;
  std::unique_ptr<LineEditor> editor_;
};

}  // namespace

int RunChat(Runtime& rt, const ChatOptions& options) {
  Chat chat(rt, options);
  return chat.Run();
}

}  // namespace talaria::cli
