#include "cli/tty_prompter.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cctype>
#include <string>

#include "talaria/base/unique_fd.h"

namespace talaria::cli {
namespace {

class TtyPrompter final : public safety::ApprovalPrompter {
 public:
  TtyPrompter(UniqueFd tty, std::chrono::seconds timeout)
      : tty_(std::move(tty)), timeout_(timeout) {}

  safety::ApprovalAnswer Ask(const safety::ApprovalRequest& request) override {
    std::string text = "\n\xE2\x9A\xA0\xEF\xB8\x8F  " + request.tool + " wants to run:\n    " +
                       request.command + "\n";
    for (const auto& r : request.reasons) text += "  - " + r.description + " [" + r.rule + "]\n";
    text += "Allow? [o]nce, [s]ession, [a]lways, [d]eny (default deny): ";
    Say(text);
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    std::string line;
    while (line.find('\n') == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        Say("\n(no answer: denied)\n");
        return safety::ApprovalAnswer::kTimeout;
      }
      pollfd p{tty_.get(), POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[64];
      const ssize_t n = ::read(tty_.get(), buf, sizeof buf);
      if (n <= 0) return safety::ApprovalAnswer::kDeny;
      line.append(buf, static_cast<size_t>(n));
    }
    const size_t at = line.find_first_not_of(" \t");
    const char first = at == std::string::npos
                           ? 'd'
                           : static_cast<char>(std::tolower(static_cast<unsigned char>(line[at])));
    switch (first) {
      case 'o':
      case 'y':
        return safety::ApprovalAnswer::kOnce;
      case 's':
        return safety::ApprovalAnswer::kSession;
      case 'a':
        return safety::ApprovalAnswer::kAlways;
      default:
        return safety::ApprovalAnswer::kDeny;
    }
  }

 private:
  void Say(const std::string& text) {
    [[maybe_unused]] ssize_t n = ::write(tty_.get(), text.data(), text.size());
  }

  UniqueFd tty_;
  std::chrono::seconds timeout_;
};

}  // namespace

std::shared_ptr<safety::ApprovalPrompter> MakeTtyPrompter(std::chrono::seconds timeout) {
  UniqueFd tty(::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!tty) return nullptr;
  return std::make_shared<TtyPrompter>(std::move(tty), timeout);
}

}  // namespace talaria::cli
