// POSIX shell words: quoting a string so that `sh -c` sees exactly it, and joining words into a
// command line that splits back into them. Used where talaria builds command lines (ssh's remote
// command) and where the guard re-judges words an interpreter would hand to a shell.
// Thread-safety: pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace talaria {

// `word` as one POSIX shell word: wrapped in single quotes, each ' written as '\''. Any byte
// sequence (newlines, $, `, \, UTF-8, empty) survives `sh -c` unchanged; NUL cannot be passed
// in an argument at all.
std::string ShellQuote(std::string_view word);

// The words quoted and joined with single spaces: a command line the shell splits back into
// exactly `words`.
std::string ShellJoin(const std::vector<std::string>& words);

}  // namespace talaria
