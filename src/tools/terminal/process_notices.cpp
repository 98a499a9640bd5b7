#include "talaria/tools/process_notices.h"
#include "talaria/tools/session_services.h"

#include "tools/terminal/terminal_output.h"

namespace talaria::tools {
namespace {

std::string Outcome(const env::ProcessNotice& notice) {
  const int code = notice.exit_code.value_or(-1);
  if (code == 0) return "completed normally (exit code 0)";
  if (code > 128)
    return "was terminated by signal " + std::to_string(code - 128) + " (exit code " +
           std::to_string(code) + ")";
  return "failed (exit code " + std::to_string(code) + ")";
}

}  // namespace

std::string FormatProcessNotice(const env::ProcessNotice& notice) {
  using Kind = env::ProcessNotice::Kind;
  std::string text = "[";
  switch (notice.kind) {
    case Kind::kCompleted:
      text += "IMPORTANT: Background process " + notice.id + " " + Outcome(notice) + ".\nCommand: ";
      text += CleanOutput(notice.command);
      text += "\nOutput (tail):\n";
      text += CleanOutput(notice.output);
      break;
    case Kind::kMatched:
      text += "Background process " + notice.id + " printed output matching its watch patterns:\n";
      text += CleanOutput(notice.output);
      break;
    case Kind::kWatchDisabled:
      text += "Background process " + notice.id +
              " matched its watch patterns too often: pattern notices are off, and you will be "
              "notified when it "
              "completes.";
      break;
  }
  text += "]";
  return text;
}

void AttachProcessNotices(Dispatcher& dispatcher) {
  dispatcher.hooks().AddTransformResult(
      [](const PostToolEvent& event) -> std::optional<std::string> {
        if (ProcessesOf(event.ctx) == nullptr) return std::nullopt;
        std::vector<env::ProcessNotice> notices = ProcessesOf(event.ctx)->TakeNotices();
        if (notices.empty()) return std::nullopt;
        std::string text = event.result.text;
        for (const auto& notice : notices) {
          text += "\n\n";
          text += FormatProcessNotice(notice);
        }
        return text;
      });
}

}  // namespace talaria::tools
