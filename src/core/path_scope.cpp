#include "core/path_scope.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <utility>

namespace talaria {
namespace {

// "a" + "/" + "b" without doubling the slash after the root.
std::string JoinPath(std::string_view dir, std::string_view rest) {
  std::string out(dir);
  if (out.empty() || out.back() != '/') out += '/';
  out.append(rest);
  return out;
}

// The real path of `path` (which must be absolute), or nullopt when it does not exist or cannot
// be resolved (dangling link, loop, no permission, too long).
std::optional<std::string> RealPath(const std::string& path) {
  if (path.size() >= PATH_MAX) return std::nullopt;
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return std::nullopt;
  return std::string(buf);
}

}  // namespace

std::string NormalizeAbsolutePath(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == path.npos) slash = path.size();
    const std::string_view part = path.substr(start, slash - start);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = slash + 1;
  }
  if (parts.empty()) return "/";
  std::string out;
  for (std::string_view part : parts) {
    out += '/';
    out.append(part);
  }
  return out;
}

bool PathsOverlap(std::string_view a, std::string_view b) {
  if (a.size() > b.size()) std::swap(a, b);
  if (!b.starts_with(a)) return false;
  // `a` is a byte prefix of `b`: a component prefix when it ends at a component boundary.
  return a.size() == b.size() || a == "/" || b[a.size()] == '/';
}

const std::string& PathCanonicalizer::ProcessCwd() {
  if (process_cwd_.empty()) {
    char buf[PATH_MAX];
    process_cwd_ = ::getcwd(buf, sizeof buf) != nullptr ? std::string(buf) : std::string("/");
  }
  return process_cwd_;
}

std::string PathCanonicalizer::Canonicalize(std::string_view cwd, std::string_view path) {
  std::string joined;
  if (path.starts_with('/')) {
    joined = path;
  } else {
    std::string base;
    if (cwd.starts_with('/')) {
      base = cwd;
    } else if (cwd.empty()) {
      base = ProcessCwd();
    } else {
      base = JoinPath(ProcessCwd(), cwd);
    }
    joined = path.empty() ? std::move(base) : JoinPath(base, path);
  }
  return Resolve(NormalizeAbsolutePath(joined));
}

std::string PathCanonicalizer::Resolve(const std::string& lexical) {
  if (lexical == "/") return lexical;
  if (auto it = resolved_.find(lexical); it != resolved_.end()) return it->second.path;
  // Walk up to the deepest cached ancestor (or the root), then come back down one component at a
  // time: a directory shared by many paths of a batch is resolved once, and each new component
  // costs one lstat (plus a realpath when it is a symlink).
  std::vector<size_t> ends;  // ends of the uncached prefixes, deepest first
  Resolved base{"/", true};
  for (size_t cut = lexical.size(); cut > 0; cut = lexical.rfind('/', cut - 1)) {
    if (auto it = resolved_.find(lexical.substr(0, cut)); it != resolved_.end()) {
      base = it->second;
      break;
    }
    ends.push_back(cut);
  }
  for (auto e = ends.rbegin(); e != ends.rend(); ++e) {
    const size_t begin = lexical.rfind('/', *e - 1) + 1;
    const std::string_view leaf = std::string_view(lexical).substr(begin, *e - begin);
    Resolved next{JoinPath(base.path, leaf), false};
    if (base.exists) {
      struct stat st;
      if (next.path.size() < PATH_MAX && ::lstat(next.path.c_str(), &st) == 0) {
        if (!S_ISLNK(st.st_mode)) {
          next.exists = true;
        } else if (std::optional<std::string> real = RealPath(next.path)) {
          next = {std::move(*real), true};
        }  // a dangling or looping link: the path goes on lexically from here
      }
    }
    resolved_.insert_or_assign(lexical.substr(0, *e), next);
    base = std::move(next);
  }
  return base.path;
}

}  // namespace talaria
