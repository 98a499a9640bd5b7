#include "talaria/search/gitignore.h"

namespace talaria::search {

void IgnoreRules::AddFile(std::string_view text) {
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;

    Rule rule;
    if (line.front() == '!') {
      rule.negate = true;
      line.remove_prefix(1);
    }
    // Trailing spaces are dropped unless escaped with a backslash.
    while (!line.empty() && line.back() == ' ') {
      size_t backslashes = 0;
      for (size_t k = line.size() - 1; k > 0 && line[k - 1] == '\\'; --k) ++backslashes;
      if (backslashes % 2 == 1) break;
      line.remove_suffix(1);
    }
    if (line.empty()) continue;
    if (line.back() == '/') {
      rule.dir_only = true;
      line.remove_suffix(1);
      if (line.empty()) continue;
    }
    // A '/' at the start or in the middle anchors the pattern to this directory.
    rule.anchored = line.find('/') != std::string_view::npos;
    if (line.front() == '/') line.remove_prefix(1);
    if (line.empty()) continue;
    auto glob = Glob::Compile(line);
    if (!glob) continue;  // git skips lines it cannot parse
    rule.glob = std::move(*glob);
    rules_.push_back(std::move(rule));
  }
}

IgnoreVerdict IgnoreRules::Check(std::string_view path, bool is_dir) const {
  const size_t slash = path.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  for (auto it = rules_.rbegin(); it != rules_.rend(); ++it) {
    if (it->dir_only && !is_dir) continue;
    if (!it->glob.Match(it->anchored ? path : base)) continue;
    return it->negate ? IgnoreVerdict::kWhitelist : IgnoreVerdict::kIgnore;
  }
  return IgnoreVerdict::kNone;
}

bool IsIgnored(const IgnoreNode* node, std::string_view rel_path, bool is_dir) {
  std::string outer;
  for (; node != nullptr; node = node->parent.get()) {
    if (node->rules.empty() || rel_path.size() <= node->prefix_len) continue;
    std::string_view path = rel_path.substr(node->prefix_len);
    if (!node->outer_prefix.empty()) {
      outer.assign(node->outer_prefix).append(rel_path);
      path = outer;
    }
    switch (node->rules.Check(path, is_dir)) {
      case IgnoreVerdict::kIgnore:
        return true;
      case IgnoreVerdict::kWhitelist:
        return false;
      case IgnoreVerdict::kNone:
        break;
    }
  }
  return false;
}

}  // namespace talaria::search
