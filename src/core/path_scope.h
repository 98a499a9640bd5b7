// Path scopes for the batch planner (core-internal): canonical paths and component-wise overlap.
//
// Canonicalisation answers "could these two calls touch the same file?", not "may this call touch
// that file?": it is a scheduling hint read at planning time, never a security boundary (the file
// tools resolve every path through the Workspace with openat2 when they run).
// Thread-safety: the free functions are thread-safe; a PathCanonicalizer is not thread-safe
// (caller synchronises); use one per planning pass.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "talaria/base/status.h"

namespace talaria {

// Removes "", "." and ".." components of `path` lexically (".." at the root stays at the root).
// REQUIRES: `path` is absolute. Returns "/" or "/a/b" (never a trailing slash).
std::string NormalizeAbsolutePath(std::string_view path);

// True when `a` and `b` (canonical: absolute, normalised) are equal or one is a component-wise
// prefix of the other: "/a/b" overlaps "/a/b/c" and "/a/b", but not "/a/bc".
bool PathsOverlap(std::string_view a, std::string_view b);

// Canonicalises paths against a working directory: absolute = cwd-joined, lexically normalised,
// then the real path (symlinks resolved) of the deepest existing ancestor plus the components that
// do not exist yet. Resolved prefixes are cached for the canonicalizer's lifetime, so a batch
// naming many files in one directory resolves that directory once (one lstat per new component).
class PathCanonicalizer {
 public:
  PathCanonicalizer() = default;
  PathCanonicalizer(const PathCanonicalizer&) = delete;
  PathCanonicalizer& operator=(const PathCanonicalizer&) = delete;

  // `cwd` empty means the process's working directory; a relative `cwd` is taken against it.
  // An empty `path` means `cwd` itself. Never fails: what cannot be resolved stays lexical.
  std::string Canonicalize(std::string_view cwd, std::string_view path);

 private:
  struct Resolved {
    std::string path;  // the canonical path
    bool exists;       // false once a component was missing (so are all below it)
  };

  // The canonical form of the absolute, normalised `lexical`: the real path of its deepest
  // existing ancestor plus the components below it.
  std::string Resolve(const std::string& lexical);
  const std::string& ProcessCwd();

  std::unordered_map<std::string, Resolved> resolved_;  // lexical prefix -> canonical path
  std::string process_cwd_;                             // "" until first needed
};

}  // namespace talaria
