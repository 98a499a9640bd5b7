#include "core/path_scope.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <optional>
#include <span>
#include <utility>

namespace talaria {
namespace {

constexpr std::string_view kBlanks = " \t";

std::string_view TrimBlanks(std::string_view s) {
  const size_t b = s.find_first_not_of(kBlanks);
  if (b == s.npos) return {};
  const size_t e = s.find_last_not_of(kBlanks);
  return s.substr(b, e - b + 1);
}

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

// --- V4A headers -----------------------------------------------------------------------------

enum class Header : unsigned char {
  kNone,  // not a header line
  kBegin,
  kEnd,
  kEndOfFile,
  kUpdate,
  kAdd,
  kDelete,
  kMove,
  kMoveTo,
  kUnknown,
};

struct HeaderLine {
  Header kind = Header::kNone;
  std::string_view argument;  // what follows the header words (untrimmed)
};

// Matches `words` at the front of `rest`, each after any run of blanks (possibly empty); on a
// match, `rest` is left just after the last word.
bool MatchWords(std::string_view& rest, std::span<const std::string_view> words) {
  std::string_view r = rest;
  for (std::string_view w : words) {
    const size_t skip = r.find_first_not_of(kBlanks);
    if (skip == r.npos) return false;
    r.remove_prefix(skip);
    if (!r.starts_with(w)) return false;
    r.remove_prefix(w.size());
  }
  rest = r;
  return true;
}

// A header is a line starting with "***" in column 0 (hunk lines start with ' ', '-' or '+').
HeaderLine ClassifyLine(std::string_view line) {
  if (!line.starts_with("***")) return {};
  const std::string_view rest = line.substr(3);
  struct Form {
    Header kind;
    std::array<std::string_view, 3> words;
    size_t word_count;
    bool takes_argument;
  };
  static constexpr Form kForms[] = {
      {Header::kBegin, {"Begin", "Patch"}, 2, false},
      {Header::kEndOfFile, {"End", "of", "File"}, 3, false},
      {Header::kEnd, {"End", "Patch"}, 2, false},
      {Header::kUpdate, {"Update", "File:"}, 2, true},
      {Header::kAdd, {"Add", "File:"}, 2, true},
      {Header::kDelete, {"Delete", "File:"}, 2, true},
      {Header::kMove, {"Move", "File:"}, 2, true},
      {Header::kMoveTo, {"Move", "to:"}, 2, true},
  };
  for (const Form& form : kForms) {
    std::string_view r = rest;
    if (!MatchWords(r, std::span(form.words.data(), form.word_count))) continue;
    if (!form.takes_argument && !TrimBlanks(r).empty()) continue;
    return {form.kind, r};
  }
  return {Header::kUnknown, rest};
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

Result<std::vector<std::string>> V4aPatchPaths(std::string_view patch) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start <= patch.size();) {
    size_t nl = patch.find('\n', start);
    if (nl == patch.npos) nl = patch.size();
    std::string_view line = patch.substr(start, nl - start);
    if (line.ends_with('\r')) line.remove_suffix(1);
    lines.push_back(line);
    start = nl + 1;
  }
  size_t first = 0;
  size_t last = lines.size();
  bool have_begin = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const Header kind = ClassifyLine(lines[i]).kind;
    if (kind == Header::kBegin && !have_begin) {
      have_begin = true;
      first = i + 1;
    } else if (kind == Header::kEnd) {
      last = i;
      break;
    }
  }
  if (have_begin && last == lines.size()) {
    return Err(InvalidArgumentError("'*** Begin Patch' without '*** End Patch'"));
  }

  std::vector<std::string> paths;
  bool in_operation = false;
  auto add_path = [&paths](std::string_view raw, size_t line_no) -> Status {
    const std::string_view path = TrimBlanks(raw);
    if (path.empty()) {
      return InvalidArgumentError("line " + std::to_string(line_no) + ": empty file path");
    }
    paths.emplace_back(path);
    return Status::Ok();
  };
  for (size_t i = first; i < last; ++i) {
    const HeaderLine header = ClassifyLine(lines[i]);
    const size_t line_no = i + 1;
    switch (header.kind) {
      case Header::kNone:
      case Header::kBegin:
      case Header::kEnd:
      case Header::kEndOfFile:
        break;
      case Header::kUpdate:
      case Header::kAdd:
      case Header::kDelete:
        TALARIA_RETURN_IF_ERROR(add_path(header.argument, line_no));
        in_operation = true;
        break;
      case Header::kMove: {
        const size_t arrow = header.argument.find("->");
        if (arrow == std::string_view::npos) {
          return Err(InvalidArgumentError("line " + std::to_string(line_no) +
                                          ": Move File needs 'source -> destination'"));
        }
        TALARIA_RETURN_IF_ERROR(add_path(header.argument.substr(0, arrow), line_no));
        TALARIA_RETURN_IF_ERROR(add_path(header.argument.substr(arrow + 2), line_no));
        in_operation = true;
        break;
      }
      case Header::kMoveTo:
        if (!in_operation) {
          return Err(InvalidArgumentError("line " + std::to_string(line_no) +
                                          ": '*** Move to:' outside a file operation"));
        }
        TALARIA_RETURN_IF_ERROR(add_path(header.argument, line_no));
        break;
      case Header::kUnknown:
        return Err(InvalidArgumentError("line " + std::to_string(line_no) +
                                        ": unrecognized header '" +
                                        std::string(lines[i].substr(0, 80)) + "'"));
    }
  }
  if (paths.empty()) return Err(InvalidArgumentError("the patch names no file"));
  return paths;
}

}  // namespace talaria
