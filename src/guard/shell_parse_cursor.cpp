// The Parser's cursor over its input: skipping blanks, comments, line continuations and
// newlines (reading pending heredoc bodies at each newline), peeking at a possible reserved
// word, and recording the first error with its byte offset.
#include "guard/shell_parser_internal.h"

#include <string>
#include <string_view>
#include <utility>

namespace talaria::safety::shell_internal {

bool Parser::Fail(StatusCode code, std::string message) {
  if (sh_.error.ok()) {
    sh_.error = Status(code, std::move(message) + " (at byte " + std::to_string(pos_) + ")");
  }
  return false;
}

void Parser::SkipBlanks() {
  while (!AtEnd()) {
    const char c = Peek();
    if (c == ' ' || c == '\t') {
      ++pos_;
    } else if (c == '\\' && PeekIs(1, '\n')) {
      pos_ += 2;
    } else if (c == '#') {
      while (!AtEnd() && Peek() != '\n') ++pos_;
    } else {
      break;
    }
  }
}

void Parser::ConsumeNewline() {
  ++pos_;
  if (!heredocs_.empty()) ReadHeredocs();
}

void Parser::SkipLinebreaks() {
  while (true) {
    SkipBlanks();
    if (PeekIs(0, '\n')) {
      ConsumeNewline();
    } else {
      break;
    }
  }
}

std::string_view Parser::PeekWordLiteral() const {
  size_t i = pos_;
  while (i < src_.size()) {
    const char c = src_[i];
    if ((c >= 'a' && c <= 'z') || c == '{' || c == '}' || c == '!' || c == '[' || c == ']') {
      ++i;
    } else {
      break;
    }
  }
  if (i == pos_) return {};
  if (i < src_.size() && !IsMeta(src_[i])) return {};
  return src_.substr(pos_, i - pos_);
}

}  // namespace talaria::safety::shell_internal
