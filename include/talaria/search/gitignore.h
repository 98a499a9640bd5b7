// Gitignore: the rules of one directory's .gitignore and .ignore files, chained to the rules of
// its ancestors, as the search walker needs them.
//
// Semantics follow git (gitignore(5)): blank lines and `#` comments are skipped, `\#` and `\!`
// escape, trailing spaces are dropped unless escaped, `!` re-includes, a trailing `/` matches
// directories only, a pattern with a `/` before its end is anchored to the file's directory
// (a leading `/` is removed), otherwise it matches the basename at any depth; `**` as in
// glob.h. Within one directory .ignore outranks .gitignore (ripgrep's order); deeper files
// outrank shallower ones; within a file the last matching line wins. A directory that is
// ignored is not descended into, so nothing below it can be re-included (git's rule too).
// Lines that do not compile (e.g. an unterminated `[`) are skipped, like git does.
// Thread-safety: immutable after construction; shared between walker threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/search/glob.h"

namespace talaria::search {

enum class IgnoreVerdict : unsigned char { kNone, kIgnore, kWhitelist };

class IgnoreRules {
 public:
  // Appends the rules of one ignore file's text (call once per file, lowest precedence first).
  void AddFile(std::string_view text);
  bool empty() const { return rules_.empty(); }

  // The verdict of the last matching rule for `path` (relative to this directory, '/'
  // separated, no leading "./").
  IgnoreVerdict Check(std::string_view path, bool is_dir) const;

 private:
  struct Rule {
    Glob glob;
    bool negate = false;
    bool dir_only = false;
    bool anchored = false;
  };
  std::vector<Rule> rules_;
};

// One directory's rules plus a link to its parent's. For a directory at or below the search
// root, `prefix_len` is the length of its path relative to the root including the trailing
// '/' (0 for the root). For a directory above the root, `outer_prefix` is the path from it down
// to the root plus '/' (e.g. "src/app/"), prepended to paths before matching.
struct IgnoreNode {
  std::shared_ptr<const IgnoreNode> parent;
  IgnoreRules rules;
  size_t prefix_len = 0;
  std::string outer_prefix;
};

// True when `rel_path` (relative to the search root) is ignored by the chain ending at `node`
// (which may be null: nothing is ignored).
bool IsIgnored(const IgnoreNode* node, std::string_view rel_path, bool is_dir);

}  // namespace talaria::search
