// A POSIX (bash-flavoured) shell parser for the command guard: it finds every simple command a
// command line would run — also inside subshells, groups, if/while/for/case bodies, function
// bodies, $( ), backticks and <( ) >( ) — without running or expanding anything.
//
// Words come out after quote removal (`'r'm` and `r\m` are "rm"); parameter expansions,
// arithmetic and substitutions stay in the text as written and are flagged on the word, so the
// caller knows which parts are literal. Brace expansion ({rm,-rf,/}) and unquoted $IFS (a word
// break under the default IFS) are applied, because both change which words a command gets.
//
// The parser never throws and never recurses past ParseLimits::max_depth. Malformed input
// (unterminated quotes, unbalanced parentheses or keywords) is InvalidArgument; input past the
// size limits is ResourceExhausted — callers fail closed on both.
// Thread-safety: ParseShell is a pure function; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"

namespace talaria::safety {

// Bits of ShellWord::flags.
inline constexpr uint8_t kWordQuoted = 1;        // some part was quoted or backslash-escaped
inline constexpr uint8_t kWordExpansion = 2;     // $name, ${...} or $((...)) (dynamic text)
inline constexpr uint8_t kWordCommandSubst = 4;  // $( ) or backticks
inline constexpr uint8_t kWordProcessSubst = 8;  // <( ) or >( )
inline constexpr uint8_t kWordGlob = 16;         // unquoted * ? or [
inline constexpr uint8_t kWordTilde = 32;        // starts with an unquoted ~ (tilde expansion)

struct ShellWord {
  // The word after quote removal; expansions and substitutions as written ("$HOME/x").
  std::string text;
  uint8_t flags = 0;

  bool Has(uint8_t flag) const { return (flags & flag) != 0; }
  // True when the text is exactly what the program receives (nothing dynamic, no glob).
  bool IsLiteral() const {
    return (flags & (kWordExpansion | kWordCommandSubst | kWordProcessSubst | kWordGlob)) == 0;
  }
};

enum class RedirectOp : uint8_t {
  kIn,            // <
  kOut,           // >
  kAppend,        // >>
  kClobber,       // >|
  kInOut,         // <>
  kDupIn,         // <&
  kDupOut,        // >&
  kOutErr,        // &>
  kAppendOutErr,  // &>>
  kHeredoc,       // <<  (and <<-)
  kHereString,    // <<<
};

struct Redirection {
  int fd = -1;  // explicit descriptor number, -1 when omitted
  RedirectOp op = RedirectOp::kOut;
  ShellWord target;  // file, descriptor, heredoc delimiter or here-string word
  std::string heredoc_body;
  bool heredoc_expands = false;  // unquoted delimiter: $( ) in the body runs

  bool Writes() const {
    return op == RedirectOp::kOut || op == RedirectOp::kAppend || op == RedirectOp::kClobber ||
           op == RedirectOp::kInOut || op == RedirectOp::kOutErr ||
           op == RedirectOp::kAppendOutErr || (op == RedirectOp::kDupOut && !IsFdTarget());
  }
  // `>&2`, `<&-`: the target names a descriptor, not a file.
  bool IsFdTarget() const;
};

enum class CommandOrigin : uint8_t {
  kTop,           // part of the command line itself (including compound bodies)
  kCommandSubst,  // inside $( ) or backticks of the parent's words
  kProcessSubst,  // inside <( ) or >( )
};

// One simple command. Compound commands contribute their inner simple commands; a compound's
// own redirections (`{ ...; } > f`) and the word lists of `for`/`case`/`[[ ]]`/`(( ))` appear as
// extra entries (argv starting with "for", "case", "[[", "((" or empty), so nothing that can
// run or write is lost.
struct SimpleCommand {
  std::vector<ShellWord> assignments;  // "NAME=value" prefixes
  std::vector<ShellWord> argv;
  std::vector<Redirection> redirections;
  int parent = -1;  // index of the command whose words hold this substitution, or -1
  CommandOrigin origin = CommandOrigin::kTop;
  int pipeline = 0;          // id shared by the elements of one pipeline
  int pipe_pos = 0;          // position within it
  bool in_pipeline = false;  // the pipeline has two or more elements
  bool stdin_piped = false;  // stdin comes from a pipe (directly or via an enclosing compound)
  bool background = false;   // ended by & (directly or via an enclosing list)
  std::string function;      // name of the innermost function definition this is part of
  std::string segment;       // the source text of this command (for reports)
};

struct ParsedScript {
  std::vector<SimpleCommand> commands;  // parents precede their substitutions
};

struct ParseLimits {
  size_t max_input = 128000;      // bytes; more is ResourceExhausted
  size_t max_run = 4096;          // bytes without whitespace or an operator character
  size_t max_separators = 25000;  // ; & | and newlines; this many or more is ResourceExhausted
  int max_depth = 48;             // nesting of substitutions, subshells and compounds
  size_t max_words = 20000;       // words after brace expansion
};

// Parses `input`. InvalidArgument: malformed (unterminated quote, unbalanced parenthesis or
// keyword, stray operator). ResourceExhausted: a limit of `limits` was exceeded.
Result<ParsedScript> ParseShell(std::string_view input, const ParseLimits& limits = {});

}  // namespace talaria::safety
