// Private to the shell parser (src/guard/shell_parser*.cpp and shell_parse_*.cpp): the Parser
// class behind ParseShell, the small character tests its parts share, and the state a parser
// shares with the sub-parsers it starts. A Parser is a recursive-descent parser over one
// string_view with a cursor (pos_); its methods are defined by concern in
// shell_parse_cursor.cpp (cursor and errors), shell_parse_structure.cpp (lists, pipelines,
// compound commands), shell_parse_commands.cpp (simple commands, redirections, assignments,
// heredocs) and shell_parse_words.cpp (words, quoting, expansions and substitutions).
// Thread-safety: a Parser and its Shared state are used by one thread for one ParseShell call.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/guard/shell_parser.h"

namespace talaria::safety::shell_internal {

inline bool IsMeta(char c) {
  switch (c) {
    case ' ':
    case '\t':
    case '\n':
    case ';':
    case '&':
    case '|':
    case '(':
    case ')':
    case '<':
    case '>':
      return true;
    default:
      return false;
  }
}

inline bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Which tokens end a command sequence for the caller.
struct Stops {
  bool eof = false;
  bool paren = false;     // ')'
  bool case_end = false;  // ';;' ';&' ';;&'
  std::array<std::string_view, 3> words{};
  bool HasWord(std::string_view w) const {
    return !w.empty() && std::find(words.begin(), words.end(), w) != words.end();
  }
};

// State shared by a parser and the sub-parsers it starts for backticks and heredoc bodies.
struct Shared {
  ParsedScript* out = nullptr;
  const ParseLimits* limits = nullptr;
  int depth = 0;
  int pipelines = 0;
  size_t words = 0;
  Status error;
};

// The word being built: text after quote removal plus where unquoted brace characters are.
struct WordBuilder {
  std::string text;
  uint8_t flags = 0;
  bool started = false;
  std::vector<uint32_t> brace_marks;
};

struct PendingHeredoc {
  int cmd;
  size_t redir;
  std::string delim;
  bool strip_tabs;
  bool expands;
};

class Parser {
 public:
  Parser(std::string_view src, Shared& shared) : src_(src), sh_(shared) {}

  // Entry points (ParseAll: shell_parser.cpp; ScanExpansions: shell_parse_words.cpp).
  bool ParseAll();
  // Finds $( ), backticks and ${ } in text that undergoes expansion (heredoc bodies,
  // arithmetic) and parses the substitutions as children of `cmd`.
  bool ScanExpansions(int cmd);

  int parent_ = -1;
  CommandOrigin origin_ = CommandOrigin::kTop;
  std::string function_;

 private:
  // ---- cursor and errors (shell_parse_cursor.cpp) ---------------------------------------

  bool AtEnd() const { return pos_ >= src_.size(); }
  char Peek(size_t k = 0) const { return pos_ + k < src_.size() ? src_[pos_ + k] : '\0'; }
  bool PeekIs(size_t k, char c) const { return pos_ + k < src_.size() && src_[pos_ + k] == c; }

  bool Fail(StatusCode code, std::string message);
  bool Syntax(std::string message) {
    return Fail(StatusCode::kInvalidArgument, std::move(message));
  }

  class DepthGuard {
   public:
    explicit DepthGuard(Parser& p) : p_(p) { ++p_.sh_.depth; }
    ~DepthGuard() { --p_.sh_.depth; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    bool ok() {
      if (p_.sh_.depth <= p_.sh_.limits->max_depth) return true;
      return p_.Fail(StatusCode::kResourceExhausted, "command nesting is too deep");
    }

   private:
    Parser& p_;
  };

  // Spaces, tabs, line continuations and comments (not the newline ending a comment).
  void SkipBlanks();
  void ConsumeNewline();
  void SkipLinebreaks();
  // The next token when it is a plain unquoted word that could be a reserved word.
  std::string_view PeekWordLiteral() const;
  void ConsumeWord(std::string_view w) { pos_ += w.size(); }

  // ---- lists, pipelines and compound commands (shell_parse_structure.cpp) ---------------

  enum class StopResult { kNone, kStopped, kError };

  StopResult CheckStop(const Stops& stops);
  bool ParseSequence(const Stops& stops);
  bool ParseAndOr();
  bool ParsePipeline();
  bool ExpectWord(std::string_view w);

  // Runs `body` as the inside of a compound command: its first commands read the compound's
  // stdin, so a compound at pipe position > 0 passes "stdin is piped" down.
  template <typename Body>
  bool InCompound(Body&& body) {
    const bool saved = inherit_piped_;
    inherit_piped_ = inherit_piped_ || cur_pos_ > 0;
    const bool ok = body();
    inherit_piped_ = saved;
    return ok;
  }

  bool ParseCommand();
  bool ParseIf(size_t begin);
  bool ParseFor(std::string_view keyword, size_t begin);
  bool ParseCase(size_t begin);
  bool ParseDoubleBracket(size_t begin);
  bool ParseFunctionBody(const std::string& name);

  // ---- simple commands, redirections, assignments, heredocs (shell_parse_commands.cpp) --

  int NewCommand();
  SimpleCommand& Cmd(int idx) { return sh_.out->commands[static_cast<size_t>(idx)]; }

  // Redirections after a compound command (or after `[[ ]]`, `(( ))`): recorded on `idx`, or
  // on a new argv-less entry when idx is -1.
  bool ParseTrailingRedirections(int idx, size_t begin);
  bool IsRedirectionStart() const;
  bool ParseRedirection(int idx);
  bool ParseSimple();
  // NAME= or NAME+= (or NAME[...]=) at the cursor, the name unquoted.
  bool LooksLikeAssignment() const;
  // NAME=( a b c ): the elements are words (with substitutions) appended to the value.
  bool LexArrayValue(int idx, ShellWord& w);
  void ReadHeredocs();

  // ---- words, quoting, expansions and substitutions (shell_parse_words.cpp) -------------

  bool Flush(WordBuilder& b, std::vector<ShellWord>& out);
  // One shell word at the cursor (may yield several words or none: brace expansion, $IFS).
  bool LexWord(int idx, std::vector<ShellWord>& out);
  bool LexDoubleQuoted(int idx, WordBuilder& b);
  // $'...': ANSI-C quoting, decoded.
  bool LexAnsiC(WordBuilder& b);
  // `out` is null inside double quotes (no field splitting there).
  bool LexDollar(int idx, WordBuilder& b, bool in_dq, std::vector<ShellWord>* out);
  bool LexBraceParameter(int idx, WordBuilder& b, bool in_dq, std::vector<ShellWord>* out);
  // $( ... ), <( ... ) or >( ... ) at the cursor.
  bool LexSubstitution(int idx, WordBuilder& b, CommandOrigin origin);
  bool LexBacktick(int idx, WordBuilder& b, bool in_dq);
  // From just inside `$((` or `((`: the offset of the closing "))", when the parentheses
  // balance that way (otherwise it is a command substitution holding a subshell).
  bool ScanArithmetic(size_t from, size_t* end) const;
  bool ScanEmbedded(int idx, std::string_view text);

  // ---- state ----------------------------------------------------------------------------

  std::string_view src_;
  size_t pos_ = 0;
  Shared& sh_;
  int cur_pipeline_ = 0;
  int cur_pos_ = 0;
  bool inherit_piped_ = false;
  std::string_view stop_;
  std::vector<PendingHeredoc> heredocs_;
};

}  // namespace talaria::safety::shell_internal
