// Glob: fnmatch-style path patterns with gitignore's `**`, compiled once and matched many times
// by the search walker (file_glob, target=files patterns, .gitignore lines).
//
// Syntax: `*` any run without '/', `?` one byte other than '/', `[abc]` `[a-z]` `[!x]` `[^x]`
// classes (never '/'), `\x` a literal x, and `**` as a whole component: a leading `**/` matches
// zero or more directories, `/**/` one or more slashes with directories between, a trailing
// `/**` everything below; any other `**` is a plain `*`. Braces `{a,b}` are expanded only when
// the caller asks (GlobSyntax::kBraces, used for file_glob; git does not expand them).
// Matching is on bytes and case-sensitive; it runs an NFA over the pattern's tokens, so time
// is O(pattern x path) with no backtracking blow-up.
// Thread-safety: a compiled Glob is immutable; Match may run concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"

namespace talaria::search {

enum class GlobSyntax : unsigned char { kPlain, kBraces };

class Glob {
 public:
  // InvalidArgument for an unterminated class, a dangling `\`, unbalanced braces, more than
  // 256 brace alternatives or a pattern over 4,096 bytes.
  static Result<Glob> Compile(std::string_view pattern, GlobSyntax syntax = GlobSyntax::kPlain);

  // True when the whole of `path` matches (one alternative suffices).
  bool Match(std::string_view path) const;

  const std::string& pattern() const { return pattern_; }

 private:
  enum class Op : unsigned char {
    kLit,          // one byte
    kAny,          // `?`
    kClass,        // `[...]`
    kStar,         // `*`
    kAnyAll,       // trailing `/**` body or a lone `**`: anything, '/' included
    kPrefixEnter,  // `**/`: epsilon to the next token, or to after kPrefixInner
    kPrefixInner,  // inside `**/`: any byte; a '/' may also leave the group
  };
  struct Token {
    Op op;
    unsigned char lit = 0;
    uint16_t cls = 0;  // index into classes_
  };
  struct Class {
    bool negated = false;
    uint64_t bits[4] = {0, 0, 0, 0};
    bool Has(unsigned char c) const { return ((bits[c >> 6] >> (c & 63)) & 1) != 0; }
  };
  enum class Kind : unsigned char { kLiteral, kSuffix, kPrefix, kEverything, kGeneral };
  struct Alternative {
    Kind kind = Kind::kGeneral;
    std::string text;  // kLiteral: whole text; kSuffix: after '*'; kPrefix: before '*'
    std::vector<Token> tokens;
  };

  static Result<Alternative> CompileOne(std::string_view pattern, std::vector<Class>& classes);
  bool MatchTokens(const std::vector<Token>& tokens, std::string_view path) const;

  std::string pattern_;
  std::vector<Alternative> alternatives_;
  std::vector<Class> classes_;
};

}  // namespace talaria::search
