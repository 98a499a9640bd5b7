#include "cli/line_editor.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <clocale>
#include <cstdio>
#include <cwchar>

#include <histedit.h>

namespace talaria::cli {
namespace {

constexpr int kHistorySize = 1000;

}  // namespace

LineEditor::LineEditor(std::string history_path) : history_path_(std::move(history_path)) {
  // libedit draws multi-byte characters by the locale; the environment's (C.UTF-8, ...).
  std::setlocale(LC_CTYPE, "");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
    wake_read_ = UniqueFd(fds[0]);
    wake_write_ = UniqueFd(fds[1]);
  }
  el_ = el_init("talaria", stdin, stdout, stderr);
  if (el_ == nullptr) return;
  el_set(el_, EL_CLIENTDATA, this);
  el_set(el_, EL_PROMPT, &LineEditor::PromptOf);
  el_set(el_, EL_EDITOR, "emacs");
  el_set(el_, EL_GETCFN, &LineEditor::ReadChar);
  el_source(el_, nullptr);  // the user's ~/.editrc, as every libedit program reads it
  hist_ = history_init();
  if (hist_ == nullptr) return;
  HistEvent ev;
  history(hist_, &ev, H_SETSIZE, kHistorySize);
  history(hist_, &ev, H_SETUNIQUE, 1);
  el_set(el_, EL_HIST, history, hist_);
  if (!history_path_.empty()) {
    // Created private before libedit first writes it: what a person typed may include secrets.
    const int fd = ::open(history_path_.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) ::close(fd);
    history(hist_, &ev, H_LOAD, history_path_.c_str());
  }
}

LineEditor::~LineEditor() {
  if (hist_ != nullptr) history_end(hist_);
  if (el_ != nullptr) el_end(el_);
}

char* LineEditor::PromptOf(editline* el) {
  void* self = nullptr;
  el_get(el, EL_CLIENTDATA, &self);
  return static_cast<LineEditor*>(self)->prompt_.data();
}

int LineEditor::ReadChar(editline* el, wchar_t* out) {
  void* self = nullptr;
  el_get(el, EL_CLIENTDATA, &self);
  return static_cast<LineEditor*>(self)->NextChar(out);
}

// One character from stdin, decoded from UTF-8; -1 when interrupted (el_gets then returns
// null), 0 at end of input.
int LineEditor::NextChar(wchar_t* out) {
  std::mbstate_t state{};
  for (;;) {
    if (interrupted_.load()) return -1;
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {wake_read_.get(), POLLIN, 0}};
    const int n = ::poll(fds, wake_read_.get() >= 0 ? 2 : 1, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if ((fds[1].revents & POLLIN) != 0) {
      char drain[64];
      while (::read(wake_read_.get(), drain, sizeof drain) > 0) {
      }
      if (interrupted_.load()) return -1;
    }
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    char byte = 0;
    const ssize_t got = ::read(STDIN_FILENO, &byte, 1);
    if (got == 0) return 0;
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return -1;
    }
    wchar_t wc = 0;
    const size_t used = std::mbrtowc(&wc, &byte, 1, &state);
    if (used == static_cast<size_t>(-2)) continue;  // the middle of a multi-byte character
    if (used == static_cast<size_t>(-1)) {
      state = std::mbstate_t{};
      wc = L'\uFFFD';
    }
    *out = wc;
    return 1;
  }
}

void LineEditor::Interrupt() {
  interrupted_.store(true);
  if (wake_write_.get() >= 0) {
    const char one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_write_.get(), &one, 1);
  }
}

LineEditor::ReadResult LineEditor::Read(std::string_view prompt) {
  prompt_.assign(prompt);
  ReadResult result;
  if (interrupted_.exchange(false)) {
    result.status = ReadStatus::kInterrupted;
    return result;
  }
  if (el_ == nullptr) {
    result.status = ReadStatus::kEndOfInput;
    return result;
  }
  int count = 0;
  const char* line = el_gets(el_, &count);
  if (interrupted_.exchange(false)) {
    // Leave the half-typed line behind, as a shell does on Ctrl-C.
    el_reset(el_);
    std::fputs("^C\n", stdout);
    std::fflush(stdout);
    result.status = ReadStatus::kInterrupted;
    return result;
  }
  if (line == nullptr || count <= 0) {
    result.status = ReadStatus::kEndOfInput;
    return result;
  }
  result.status = ReadStatus::kLine;
  result.line.assign(line, static_cast<size_t>(count));
  while (!result.line.empty() && (result.line.back() == '\n' || result.line.back() == '\r')) {
    result.line.pop_back();
  }
  if (hist_ != nullptr && !result.line.empty()) {
    HistEvent ev;
    history(hist_, &ev, H_ENTER, result.line.c_str());
    if (!history_path_.empty()) {
      history(hist_, &ev, H_SAVE, history_path_.c_str());
    }
  }
  return result;
}

}  // namespace talaria::cli
