#include "talaria/base/shell_words.h"

namespace talaria {

std::string ShellQuote(std::string_view word) {
  std::string out;
  out.reserve(word.size() + 2);
  out += '\'';
  for (const char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

std::string ShellJoin(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) {
    if (!out.empty()) out += ' ';
    out += ShellQuote(w);
  }
  return out;
}

}  // namespace talaria
