#include "talaria/base/redact.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <array>
#include <memory>
#include <vector>

namespace talaria {
namespace {

constexpr std::string_view kMark = "[REDACTED]";

struct Rule {
  const char* pattern;
  // How many leading characters of the match stay visible (a token's kind, e.g. "ghp_").
  int keep = 0;
  // Group 1 is kept and only group 2 is replaced (names of assignments, URL users).
  bool keep_group1 = false;
};

// Token formats first (most specific), then the structural rules.
constexpr std::array<Rule, 13> kRules = {{
    {R"(sk-(?:proj-|ant-|or-)?[A-Za-z0-9_\-]{20,})", 5},
    {R"(gh[pousr]_[A-Za-z0-9]{30,})", 4},
    {R"(github_pat_[A-Za-z0-9_]{22,})", 11},
    {R"((?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|A3T[A-Z0-9])[A-Z0-9]{16})", 4},
    {R"(xox[abprs]-[A-Za-z0-9\-]{10,})", 5},
    {R"(AIza[0-9A-Za-z_\-]{35})", 4},
    {R"([sr]k_(?:live|test)_[0-9A-Za-z]{16,})", 8},
    {R"(hf_[A-Za-z0-9]{30,})", 3},
    {R"(eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})", 3},
    {R"(-----BEGIN [A-Z ]*PRIVATE KEY-----(?s:.*?)-----END [A-Z ]*PRIVATE KEY-----)", 0},
    {R"((?i)(authorization:\s*(?:bearer|basic|token)\s+)([A-Za-z0-9._~+/=\-]{8,}))", 0, true},
    {R"(([a-zA-Z][a-zA-Z0-9+.\-]*://[^:/@\s]+:)([^@/\s]{3,})@)", 0, true},
    {R"((?i)(\b[A-Z0-9_]*(?:API_?KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIALS?|PRIVATE_KEY)[A-Z0-9_]*["']?\s*[=:]\s*["']?)([^\s"',;]{6,}))",
     0, true},
}};

struct Compiled {
  std::unique_ptr<RE2> re;
  Rule rule;
};

const std::vector<Compiled>& Rules() {
  static const std::vector<Compiled>* rules = [] {
    auto* out = new std::vector<Compiled>();
    RE2::Options options;
    options.set_log_errors(false);
    for (const Rule& r : kRules) out->push_back({std::make_unique<RE2>(r.pattern, options), r});
    return out;
  }();
  return *rules;
}

// One pass of `c` over `text`.
std::string Apply(const Compiled& c, std::string_view text) {
  std::string out;
  re2::StringPiece input(text.data(), text.size());
  std::array<re2::StringPiece, 3> groups;
  size_t pos = 0;
  const int ngroups = c.rule.keep_group1 ? 3 : 1;
  while (pos <= text.size() &&
         c.re->Match(input, pos, text.size(), RE2::UNANCHORED, groups.data(), ngroups)) {
    const size_t start = static_cast<size_t>(groups[0].data() - text.data());
    const size_t end = start + groups[0].size();
    out.append(text.substr(pos, start - pos));
    if (c.rule.keep_group1) {
      out.append(groups[1].data(), groups[1].size());
    } else {
      out.append(
          text.substr(start, std::min<size_t>(static_cast<size_t>(c.rule.keep), groups[0].size())));
    }
    out.append(kMark);
    if (c.rule.keep_group1) {
      const size_t g2_end = static_cast<size_t>(groups[2].data() - text.data()) + groups[2].size();
      out.append(text.substr(g2_end, end - g2_end));  // the URL rule's trailing '@'
    }
    pos = end > start ? end : end + 1;
    if (end == start && start < text.size()) out += text[start];
  }
  if (pos < text.size()) out.append(text.substr(pos));
  return out;
}

}  // namespace

std::string RedactSecrets(std::string_view text) {
  std::string current(text);
  for (const Compiled& c : Rules()) {
    if (!c.re->ok()) continue;
    if (!RE2::PartialMatch(current, *c.re)) continue;
    current = Apply(c, current);
  }
  return current;
}

bool ContainsSecret(std::string_view text) {
  // Every rule in one automaton: one pass over the text instead of one per rule.
  static const RE2::Set* set = [] {
    RE2::Options options;
    options.set_log_errors(false);
    auto* out = new RE2::Set(options, RE2::UNANCHORED);
    for (const Rule& r : kRules) out->Add(r.pattern, nullptr);
    if (!out->Compile()) {
      delete out;
      return static_cast<RE2::Set*>(nullptr);
    }
    return out;
  }();
  if (set == nullptr) return RedactSecrets(text) != text;
  return set->Match(re2::StringPiece(text.data(), text.size()), nullptr);
}

}  // namespace talaria
