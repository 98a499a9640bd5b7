#include "talaria/html/url_resolve.h"

#include <optional>
#include <vector>

#include "talaria/base/ascii.h"
#include "talaria/base/strings.h"

namespace talaria::html {
namespace {

struct UrlParts {
  std::optional<std::string> scheme;  // lower case, without ':'
  std::optional<std::string> authority;
  std::string path;
  std::optional<std::string> query;
  std::optional<std::string> fragment;
};

bool IsSchemeByte(char c, bool first) {
  const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  if (first) return alpha;
  return alpha || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
}

UrlParts Split(std::string_view s) {
  UrlParts parts;
  size_t i = 0;
  const size_t colon = s.find(':');
  if (colon != std::string_view::npos && colon > 0) {
    bool valid = true;
    for (size_t k = 0; k < colon && valid; ++k) valid = IsSchemeByte(s[k], k == 0);
    if (valid) {
      parts.scheme = AsciiLower(s.substr(0, colon));
      i = colon + 1;
    }
  }
  const size_t hash = s.find('#', i);
  if (hash != std::string_view::npos) {
    parts.fragment = std::string(s.substr(hash + 1));
    s = s.substr(0, hash);
  }
  const size_t question = s.find('?', i);
  if (question != std::string_view::npos) {
    parts.query = std::string(s.substr(question + 1));
    s = s.substr(0, question);
  }
  if (s.substr(i, 2) == "//") {
    const size_t slash = s.find('/', i + 2);
    const size_t end = slash == std::string_view::npos ? s.size() : slash;
    parts.authority = std::string(s.substr(i + 2, end - i - 2));
    i = end;
  }
  parts.path = std::string(s.substr(i));
  return parts;
}

// RFC 3986 5.2.4.
std::string RemoveDotSegments(std::string_view path) {
  std::vector<std::string_view> out;
  const bool absolute = !path.empty() && path[0] == '/';
  size_t i = absolute ? 1 : 0;
  bool trailing_slash = false;
  while (i <= path.size()) {
    const size_t slash = path.find('/', i);
    const size_t end = slash == std::string_view::npos ? path.size() : slash;
    const std::string_view segment = path.substr(i, end - i);
    const bool last = slash == std::string_view::npos;
    if (segment == ".") {
      trailing_slash = last;
    } else if (segment == "..") {
      if (!out.empty()) out.pop_back();
      trailing_slash = last;
    } else {
      out.push_back(segment);
      trailing_slash = false;
    }
    if (last) break;
    i = slash + 1;
  }
  std::string result = absolute ? "/" : "";
  for (size_t k = 0; k < out.size(); ++k) {
    if (k > 0) result += '/';
    result += out[k];
  }
  if (trailing_slash && !result.empty() && result.back() != '/') result += '/';
  return result;
}

std::string Merge(const UrlParts& base, std::string_view reference_path) {
  if (base.authority && base.path.empty()) return "/" + std::string(reference_path);
  const size_t slash = base.path.rfind('/');
  if (slash == std::string::npos) return std::string(reference_path);
  return base.path.substr(0, slash + 1) + std::string(reference_path);
}

std::string Join(const UrlParts& p) {
  std::string out;
  if (p.scheme) out += *p.scheme + ":";
  if (p.authority) out += "//" + *p.authority;
  out += p.path;
  if (p.query) out += "?" + *p.query;
  if (p.fragment) out += "#" + *p.fragment;
  return out;
}

std::string Clean(std::string_view s) {
  s = Trim(s, std::string_view("\t\n\f\r \0", 6));
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    if (c == '\t' || c == '\n' || c == '\r') continue;
    out += c;
  }
  return out;
}

}  // namespace

std::string ResolveUrl(std::string_view base, std::string_view reference) {
  std::string ref = Clean(reference);
  UrlParts r = Split(ref);
  const std::string cleaned_base = Clean(base);
  UrlParts b = Split(cleaned_base);
  const bool base_is_web = b.scheme && (*b.scheme == "http" || *b.scheme == "https");
  if (base_is_web && (!r.scheme || *r.scheme == "http" || *r.scheme == "https")) {
    for (char& c : ref) {
      if (c == '\\') c = '/';
    }
    r = Split(ref);
  }
  if (r.scheme) {
    r.path = RemoveDotSegments(r.path);
    return Join(r);
  }
  if (!b.scheme) return ref;  // nothing absolute to resolve against
  UrlParts t;
  t.scheme = b.scheme;
  t.fragment = r.fragment;
  if (r.authority) {
    t.authority = r.authority;
    t.path = RemoveDotSegments(r.path);
    t.query = r.query;
  } else {
    t.authority = b.authority;
    if (r.path.empty()) {
      t.path = b.path;
      t.query = r.query ? r.query : b.query;
    } else {
      t.path = RemoveDotSegments(r.path[0] == '/' ? r.path : Merge(b, r.path));
      t.query = r.query;
    }
  }
  return Join(t);
}

bool IsUsefulLinkTarget(std::string_view url) {
  url = Trim(url);
  if (url.empty() || url.size() > 4096 || url[0] == '#') return false;
  const std::string head = AsciiLower(url.substr(0, 11));
  return head.rfind("javascript:", 0) != 0 && head.rfind("data:", 0) != 0 &&
         head.rfind("vbscript:", 0) != 0;
}

}  // namespace talaria::html
