// LineEditor: the chat prompt — line editing and history by libedit (Debian's libedit), with
// history kept in a file between runs, and a way for another thread (the signal watch) to
// interrupt a read in progress: SIGINT is blocked in every thread of a command that cancels
// work, so Ctrl-C at the prompt reaches us through Interrupt(), not as a signal libedit sees.
// Thread-safety: Read from one thread; Interrupt from any thread.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <string_view>

#include "talaria/base/unique_fd.h"

struct editline;
struct history;

namespace talaria::cli {

class LineEditor {
 public:
  enum class ReadStatus : unsigned char { kLine, kEndOfInput, kInterrupted };
  struct ReadResult {
    ReadStatus status = ReadStatus::kEndOfInput;
    std::string line;  // kLine: without the newline
  };

  // `history_path`: loaded now, appended to as lines are entered (mode 0600); empty: none.
  explicit LineEditor(std::string history_path);
  ~LineEditor();
  LineEditor(const LineEditor&) = delete;
  LineEditor& operator=(const LineEditor&) = delete;

  ReadResult Read(std::string_view prompt);
  // Makes the Read in progress (or the next one) return kInterrupted.
  void Interrupt();

 private:
  static char* PromptOf(editline* el);
  static int ReadChar(editline* el, wchar_t* out);
  int NextChar(wchar_t* out);

  editline* el_ = nullptr;
  history* hist_ = nullptr;
  std::string history_path_;
  std::string prompt_;
  UniqueFd wake_read_;
  UniqueFd wake_write_;
  std::atomic<bool> interrupted_{false};
};

}  // namespace talaria::cli
