// URI resolution and JSON Pointer lookup for $id / $ref. Only what schema documents need:
// no network, no case or percent-encoding normalisation of URIs.
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/schema_validator_internal.h"

namespace talaria::schema_internal {
namespace {

struct UriParts {
  std::string_view scheme, authority, path, query;
  bool has_scheme = false, has_authority = false, has_query = false;
};

bool IsSchemeChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
}

// Parses everything but the fragment, which callers strip first.
UriParts ParseUri(std::string_view s) {
  UriParts p;
  const size_t colon = s.find(':');
  if (colon != std::string_view::npos && colon > 0 && colon < s.find_first_of("/?#") &&
      std::isalpha(static_cast<unsigned char>(s[0]))) {
    bool valid = true;
    for (const char c : s.substr(0, colon)) valid = valid && IsSchemeChar(c);
    if (valid) {
      p.scheme = s.substr(0, colon);
      p.has_scheme = true;
      s.remove_prefix(colon + 1);
    }
  }
  if (s.starts_with("//")) {
    s.remove_prefix(2);
    const size_t end = std::min(s.find_first_of("/?"), s.size());
    p.authority = s.substr(0, end);
    p.has_authority = true;
    s.remove_prefix(end);
  }
  const size_t q = s.find('?');
  if (q != std::string_view::npos) {
    p.query = s.substr(q + 1);
    p.has_query = true;
    s = s.substr(0, q);
  }
  p.path = s;
  return p;
}

// RFC 3986 §5.2.4.
std::string RemoveDotSegments(std::string_view in) {
  std::string out;
  while (!in.empty()) {
    if (in.starts_with("../")) {
      in.remove_prefix(3);
    } else if (in.starts_with("./") || in.starts_with("/./")) {
      in.remove_prefix(2);
    } else if (in == "/.") {
      in = "/";
    } else if (in.starts_with("/../") || in == "/..") {
      in = in.size() == 3 ? std::string_view("/") : in.substr(3);
      const size_t slash = out.rfind('/');
      out.resize(slash == std::string::npos ? 0 : slash);
    } else if (in == "." || in == "..") {
      in = {};
    } else {
      const size_t next = in.find('/', 1);
      const size_t len = next == std::string_view::npos ? in.size() : next;
      out.append(in.substr(0, len));
      in.remove_prefix(len);
    }
  }
  return out;
}

std::string MergePaths(const UriParts& base, std::string_view ref_path) {
  if (base.has_authority && base.path.empty()) return "/" + std::string(ref_path);
  const size_t slash = base.path.rfind('/');
  if (slash == std::string_view::npos) return std::string(ref_path);
  return std::string(base.path.substr(0, slash + 1)) + std::string(ref_path);
}

// RFC 6901 token unescaping: "~1" is '/', "~0" is '~'. False on a dangling '~'.
bool UnescapePointerToken(std::string_view token, std::string& out) {
  out.clear();
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] != '~') {
      out += token[i];
      continue;
    }
    if (i + 1 >= token.size() || (token[i + 1] != '0' && token[i + 1] != '1')) return false;
    out += token[++i] == '0' ? '~' : '/';
  }
  return true;
}

const Json* ArrayElement(const Json& array, std::string_view token) {
  if (token.empty() || (token.size() > 1 && token[0] == '0')) return nullptr;
  size_t index = 0;
  for (const char c : token) {
    if (c < '0' || c > '9' || index > array.size()) return nullptr;
    index = index * 10 + static_cast<size_t>(c - '0');
  }
  return index < array.size() ? &array[index] : nullptr;
}

}  // namespace

std::pair<std::string_view, std::string_view> SplitFragment(std::string_view uri) {
  const size_t hash = uri.find('#');
  if (hash == std::string_view::npos) return {uri, {}};
  return {uri.substr(0, hash), uri.substr(hash + 1)};
}

std::string ResolveUri(std::string_view base, std::string_view ref) {
  const auto [ref_doc, fragment] = SplitFragment(ref);
  const bool has_fragment = ref.find('#') != std::string_view::npos;
  const UriParts r = ParseUri(ref_doc);
  const UriParts b = ParseUri(SplitFragment(base).first);

  UriParts t;
  std::string path;
  if (r.has_scheme) {
    t = r;
    path = RemoveDotSegments(r.path);
  } else {
    t.scheme = b.scheme;
    t.has_scheme = b.has_scheme;
    if (r.has_authority) {
      t.authority = r.authority;
      t.has_authority = true;
      path = RemoveDotSegments(r.path);
      t.query = r.query;
      t.has_query = r.has_query;
    } else {
      t.authority = b.authority;
      t.has_authority = b.has_authority;
      if (r.path.empty()) {
        path = std::string(b.path);
        t.query = r.has_query ? r.query : b.query;
        t.has_query = r.has_query || b.has_query;
      } else {
        path = RemoveDotSegments(r.path.starts_with('/') ? std::string(r.path)
                                                         : MergePaths(b, r.path));
        t.query = r.query;
        t.has_query = r.has_query;
      }
    }
  }

  std::string out;
  if (t.has_scheme) (out += t.scheme) += ':';
  if (t.has_authority) (out += "//") += t.authority;
  out += path;
  if (t.has_query) (out += '?') += t.query;
  if (has_fragment) (out += '#') += fragment;
  return out;
}

const Json* FollowPointer(const Json& root, std::string_view pointer) {
  if (!pointer.empty() && pointer[0] != '/') return nullptr;
  const Json* at = &root;
  std::string token;
  while (!pointer.empty()) {
    pointer.remove_prefix(1);  // the '/'
    const size_t end = std::min(pointer.find('/'), pointer.size());
    if (!UnescapePointerToken(pointer.substr(0, end), token)) return nullptr;
    pointer.remove_prefix(end);
    if (at->is_object()) {
      const auto it = at->find(token);
      if (it == at->end()) return nullptr;
      at = &*it;
    } else if (at->is_array()) {
      at = ArrayElement(*at, token);
      if (at == nullptr) return nullptr;
    } else {
      return nullptr;
    }
  }
  return at;
}

std::string EscapePointerToken(std::string_view key) {
  std::string out;
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace talaria::schema_internal
