#include "talaria/search/glob.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

namespace talaria::search {
namespace {

constexpr size_t kMaxPatternBytes = 4096;
constexpr size_t kMaxAlternatives = 256;

// Index of the '}' closing the '{' at `open`, skipping escapes and classes; npos if none.
size_t FindBraceClose(std::string_view p, size_t open) {
  int depth = 0;
  bool in_class = false;
  for (size_t i = open; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {
      ++i;
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      continue;
    }
    if (c == '[') {
      in_class = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth == 0) return i;
    }
  }
  return std::string_view::npos;
}

// Expands the first top-level brace group of `p` (recursively); appends to `out`.
Status ExpandBraces(std::string_view p, std::vector<std::string>& out) {
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {
      ++i;
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      continue;
    }
    if (c == '[') {
      in_class = true;
      continue;
    }
    if (c == '}') return InvalidArgumentError("unbalanced '}' in glob");
    if (c != '{') continue;
    const size_t close = FindBraceClose(p, i);
    if (close == std::string_view::npos) return InvalidArgumentError("unbalanced '{' in glob");
    // Split the body on top-level commas.
    const std::string_view head = p.substr(0, i);
    const std::string_view body = p.substr(i + 1, close - i - 1);
    const std::string_view tail = p.substr(close + 1);
    size_t start = 0;
    int depth = 0;
    bool body_class = false;
    for (size_t j = 0; j <= body.size(); ++j) {
      if (j < body.size()) {
        const char b = body[j];
        if (b == '\\') {
          ++j;
          continue;
        }
        if (body_class) {
          if (b == ']') body_class = false;
          continue;
        }
        if (b == '[') body_class = true;
        if (b == '{') ++depth;
        if (b == '}') --depth;
        if (b != ',' || depth != 0) continue;
      }
      std::string alt;
      alt.reserve(head.size() + (j - start) + tail.size());
      alt.append(head).append(body.substr(start, j - start)).append(tail);
      TALARIA_RETURN_IF_ERROR(ExpandBraces(alt, out));
      if (out.size() > kMaxAlternatives) {
        return InvalidArgumentError("glob expands to more than 256 alternatives");
      }
      start = j + 1;
    }
    return Status::Ok();
  }
  out.emplace_back(p);
  return Status::Ok();
}

}  // namespace

Result<Glob::Alternative> Glob::CompileOne(std::string_view p, std::vector<Class>& classes) {
  Alternative alt;
  std::vector<Token>& t = alt.tokens;
  const size_t n = p.size();
  size_t i = 0;
  while (i < n) {
    const char c = p[i];
    if (c == '*') {
      size_t k = i;
      while (k < n && p[k] == '*') ++k;
      const size_t run = k - i;
      const bool starts_component = i == 0 || p[i - 1] == '/';
      const bool ends_component = k == n || p[k] == '/';
      if (run >= 2 && starts_component && ends_component) {
        if (k == n) {
          t.push_back({Op::kAnyAll});
          i = k;
        } else {
          t.push_back({Op::kPrefixEnter});
          t.push_back({Op::kPrefixInner});
          i = k + 1;  // the '/' belongs to the group
        }
      } else {
        t.push_back({Op::kStar});
        i = k;
      }
      continue;
    }
    if (c == '?') {
      t.push_back({Op::kAny});
      ++i;
      continue;
    }
    if (c == '\\') {
      if (i + 1 >= n) return Err(InvalidArgumentError("glob ends with a lone '\\'"));
      t.push_back({Op::kLit, static_cast<unsigned char>(p[i + 1])});
      i += 2;
      continue;
    }
    if (c == '[') {
      Class cls;
      size_t j = i + 1;
      if (j < n && (p[j] == '!' || p[j] == '^')) {
        cls.negated = true;
        ++j;
      }
      bool first = true;
      bool closed = false;
      while (j < n) {
        unsigned char lo = static_cast<unsigned char>(p[j]);
        if (lo == ']' && !first) {
          closed = true;
          ++j;
          break;
        }
        first = false;
        if (lo == '\\') {
          if (j + 1 >= n) break;
          lo = static_cast<unsigned char>(p[++j]);
        }
        ++j;
        unsigned char hi = lo;
        if (j + 1 < n && p[j] == '-' && p[j + 1] != ']') {
          hi = static_cast<unsigned char>(p[j + 1]);
          j += 2;
          if (hi == '\\' && j < n) hi = static_cast<unsigned char>(p[j++]);
        }
        if (hi < lo) std::swap(lo, hi);
        for (unsigned v = lo; v <= hi; ++v) cls.bits[v >> 6] |= uint64_t{1} << (v & 63);
      }
      if (!closed) return Err(InvalidArgumentError("unterminated '[' in glob"));
      if (classes.size() >= 65535) return Err(InvalidArgumentError("glob has too many classes"));
      classes.push_back(cls);
      t.push_back({Op::kClass, 0, static_cast<uint16_t>(classes.size() - 1)});
      i = j;
      continue;
    }
    t.push_back({Op::kLit, static_cast<unsigned char>(c)});
    ++i;
  }

  // Fast shapes: most gitignore lines and file globs are a name, `*.ext` or `prefix*`.
  auto all_lit = [&](size_t from, size_t to) {
    for (size_t k = from; k < to; ++k) {
      if (t[k].op != Op::kLit) return false;
    }
    return true;
  };
  auto lit_text = [&](size_t from, size_t to) {
    std::string s;
    for (size_t k = from; k < to; ++k) s.push_back(static_cast<char>(t[k].lit));
    return s;
  };
  if (all_lit(0, t.size())) {
    alt.kind = Kind::kLiteral;
    alt.text = lit_text(0, t.size());
  } else if (t.size() == 1 && t[0].op == Op::kAnyAll) {
    alt.kind = Kind::kEverything;
  } else if (!t.empty() && t[0].op == Op::kStar && all_lit(1, t.size())) {
    alt.kind = Kind::kSuffix;
    alt.text = lit_text(1, t.size());
  } else if (!t.empty() && t.back().op == Op::kStar && all_lit(0, t.size() - 1)) {
    alt.kind = Kind::kPrefix;
    alt.text = lit_text(0, t.size() - 1);
  }
  return alt;
}

Result<Glob> Glob::Compile(std::string_view pattern, GlobSyntax syntax) {
  if (pattern.size() > kMaxPatternBytes) {
    return Err(InvalidArgumentError("glob is longer than 4096 bytes"));
  }
  std::vector<std::string> expanded;
  if (syntax == GlobSyntax::kBraces) {
    TALARIA_RETURN_IF_ERROR(ExpandBraces(pattern, expanded));
  } else {
    expanded.emplace_back(pattern);
  }
  Glob glob;
  glob.pattern_ = std::string(pattern);
  for (const std::string& p : expanded) {
    glob.alternatives_.push_back(TALARIA_TRY(CompileOne(p, glob.classes_)));
  }
  return glob;
}

bool Glob::Match(std::string_view path) const {
  for (const Alternative& alt : alternatives_) {
    switch (alt.kind) {
      case Kind::kLiteral:
        if (path == alt.text) return true;
        break;
      case Kind::kEverything:
        return true;
      case Kind::kSuffix:
        if (path.size() >= alt.text.size() && path.ends_with(alt.text) &&
            path.substr(0, path.size() - alt.text.size()).find('/') == std::string_view::npos) {
          return true;
        }
        break;
      case Kind::kPrefix:
        if (path.starts_with(alt.text) &&
            path.substr(alt.text.size()).find('/') == std::string_view::npos) {
          return true;
        }
        break;
      case Kind::kGeneral:
        if (MatchTokens(alt.tokens, path)) return true;
        break;
    }
  }
  return false;
}

bool Glob::MatchTokens(const std::vector<Token>& t, std::string_view path) const {
  // NFA simulation over token positions 0..T (T = accept). Epsilon edges only point forward,
  // so one ascending pass computes a closure.
  const size_t states = t.size() + 1;
  const size_t words = (states + 63) / 64;
  constexpr size_t kMaxWords = (kMaxPatternBytes + 1 + 63) / 64 + 1;
  std::array<uint64_t, kMaxWords> a{};
  std::array<uint64_t, kMaxWords> b{};
  uint64_t* cur = a.data();
  uint64_t* next = b.data();
  auto set = [](uint64_t* s, size_t i) { s[i >> 6] |= uint64_t{1} << (i & 63); };
  auto has = [](const uint64_t* s, size_t i) { return ((s[i >> 6] >> (i & 63)) & 1) != 0; };
  auto close = [&](uint64_t* s) {
    for (size_t i = 0; i < t.size(); ++i) {
      if (!has(s, i)) continue;
      switch (t[i].op) {
        case Op::kStar:
        case Op::kAnyAll:
          set(s, i + 1);
          break;
        case Op::kPrefixEnter:
          set(s, i + 1);
          set(s, i + 2);
          break;
        default:
          break;
      }
    }
  };
  set(cur, 0);
  close(cur);
  for (const char ch : path) {
    const auto c = static_cast<unsigned char>(ch);
    std::fill(next, next + words, 0);
    bool any = false;
    for (size_t w = 0; w < words; ++w) {
      uint64_t bits = cur[w];
      while (bits != 0) {
        const size_t i = w * 64 + static_cast<size_t>(__builtin_ctzll(bits));
        bits &= bits - 1;
        if (i >= t.size()) continue;
        const Token& tok = t[i];
        switch (tok.op) {
          case Op::kLit:
            if (c == tok.lit) set(next, i + 1), any = true;
            break;
          case Op::kAny:
            if (c != '/') set(next, i + 1), any = true;
            break;
          case Op::kClass: {
            const Class& cls = classes_[tok.cls];
            if (c != '/' && cls.Has(c) != cls.negated) set(next, i + 1), any = true;
            break;
          }
          case Op::kStar:
            if (c != '/') set(next, i), any = true;
            break;
          case Op::kAnyAll:
            set(next, i);
            any = true;
            break;
          case Op::kPrefixInner:
            set(next, i);
            if (c == '/') set(next, i + 1);
            any = true;
            break;
          case Op::kPrefixEnter:
            break;
        }
      }
    }
    if (!any) return false;
    close(next);
    std::swap(cur, next);
  }
  return has(cur, t.size());
}

}  // namespace talaria::search
