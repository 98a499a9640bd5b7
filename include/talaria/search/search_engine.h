// SearchEngine: search_files' in-process replacement for ripgrep — a multi-threaded walk of a
// directory tree from an already opened directory fd, with content search (PCRE2 with JIT and
// match limits, or a SIMD literal scan for plain strings) or file-name search (globs).
//
// Walk rules: only regular files and real directories are visited; symlinks (to files or
// directories) are never followed and special files (FIFOs, devices, sockets) never opened;
// every open is openat(parent_fd, one_name, O_NOFOLLOW), so nothing outside the starting
// directory is reachable and no path string is re-resolved. `.git` is always skipped;
// .gitignore and .ignore files are honoured at every level (see gitignore.h); pseudo file
// systems (procfs, sysfs, ...) mounted inside the tree are not entered; hidden files are
// searched (unlike ripgrep's default) so that sensitive ones can be reported as omitted.
// Files whose first 8 KB hold a NUL byte are binary and skipped.
//
// Output order is deterministic whatever the thread count or scheduling: depth-first with the
// entries of each directory sorted bytewise by name (ripgrep's --sort path), then by line.
// Work is scheduled in that order and committed in that order, so the walk stops as soon as
// the first offset+limit+1 entries are known; the total is then a lower bound.
// Thread-safety: SearchDirectory/SearchFile are thread-safe (no shared state between calls);
// the request's callback is called from the engine's worker threads concurrently.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "talaria/base/status.h"

namespace talaria::search {

enum class SearchTarget : unsigned char { kContent, kFiles };
enum class SearchOutputMode : unsigned char { kContent, kFilesOnly, kCount };

// Content-search patterns are PCRE2 (UTF-8, invalid UTF-8 tolerated); a pattern without regex
// syntax (after unescaping `\.` style escapes) runs as a literal scan instead.
inline constexpr uint32_t kDefaultMatchLimit = 2'000'000;

struct SearchRequest {
  // Content: a regex. Files: a glob (see glob.h; braces allowed).
  std::string pattern;
  SearchTarget target = SearchTarget::kContent;
  // Content search only: files whose name (no '/' in the glob) or path below the root
  // matches; a leading '!' excludes instead. Braces allowed. A positive glob overrides
  // .gitignore for the files it names (ripgrep's --glob rule).
  std::string file_glob;
  int64_t limit = 50;
  int64_t offset = 0;
  SearchOutputMode output_mode = SearchOutputMode::kContent;
  // Lines of context before and after each match (content output only).
  int context = 0;
  // How result paths begin: the path the caller searched, as it was given (ripgrep's form):
  // "." gives "./src/a.py", "src/" gives "src/a.py". Empty: paths relative to the root.
  std::string display_root;
  // Ignore files of directories above the root, outermost first: the text of the directory's
  // .gitignore followed by its .ignore, and the path from that directory down to the root
  // (e.g. "src/app"). Their rules apply as in a walk started there (ripgrep reads the parents
  // up to the repository root the same way).
  struct ParentIgnore {
    std::string text;
    std::string path_to_root;
  };
  std::vector<ParentIgnore> parent_ignores;
  // Worker threads including the caller; 0 = std::thread::hardware_concurrency() (at most
  // 16). Explicit values are capped at 64.
  unsigned threads = 0;
  // Files for which this returns true (argument: path relative to the root, '/'-separated)
  // are never opened; each one that would have been a candidate is counted in `omitted`.
  std::function<bool(std::string_view relative_path)> is_sensitive;
  // Cancellation ends the search with Cancelled; the deadline ends it with the partial
  // results found so far (limit_reason "search_timeout").
  std::stop_token cancel;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // Match content is cut to this many characters (code points), as the original does.
  size_t max_line_chars = 500;
  // PCRE2 match limit per match attempt (a hostile pattern fails instead of hanging).
  uint32_t match_limit = kDefaultMatchLimit;
};

struct SearchLine {
  std::string path;
  int64_t line = 0;
  std::string content;
  bool is_context = false;
};

struct SearchOutcome {
  // One page (offset, limit) of the entries of the output mode:
  std::vector<SearchLine> matches;                      // content: match and context lines
  std::vector<std::string> files;                       // files_only, and target=files
  std::vector<std::pair<std::string, int64_t>> counts;  // count: matching lines per file
  // Entries found (count mode: matching lines summed over files).
  int64_t total_count = 0;
  // More entries exist beyond this page, or the search stopped early.
  bool truncated = false;
  // The walk stopped before the end (enough entries for the page, or the deadline).
  bool total_is_lower_bound = false;
  // "search_timeout" when the deadline cut the search short.
  std::string limit_reason;
  // Candidate files refused by is_sensitive (never opened).
  int64_t omitted = 0;
  // Statistics, for benchmarks and logs.
  int64_t files_searched = 0;
  int64_t bytes_searched = 0;
};

// Searches the tree below `dir_fd` (borrowed; not closed; any open directory fd).
// Errors: InvalidArgument (a regex or glob that does not compile, with the reason and offset),
// ResourceExhausted (the regex hit its match limit or JIT stack limit on some line: the
// message names the file and line), Cancelled, Internal.
Result<SearchOutcome> SearchDirectory(int dir_fd, const SearchRequest& request);

// Searches one regular file (`file_fd` borrowed). Result paths are `display_path`. For
// target=files the glob is matched against the file's base name. .gitignore does not apply
// (the file was named explicitly). Errors as SearchDirectory.
Result<SearchOutcome> SearchFile(int file_fd, std::string_view display_path,
                                 const SearchRequest& request);

}  // namespace talaria::search
