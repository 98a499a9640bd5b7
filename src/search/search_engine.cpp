#include "talaria/search/search_engine.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <thread>

#include "talaria/base/unique_fd.h"
#include "talaria/search/gitignore.h"
#include "talaria/search/glob.h"
#include "talaria/search/line_matcher.h"

namespace talaria::search {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kBinaryProbeBytes = 8192;
constexpr size_t kWholeFileMax = size_t{16} << 20;        // read in one piece up to this size
constexpr size_t kMultilineWholeMax = size_t{256} << 20;  // multiline patterns need whole files
constexpr size_t kChunkBytes = size_t{4} << 20;
constexpr size_t kMaxIgnoreFileBytes = size_t{1} << 20;
constexpr int64_t kMaxEntries = 10'000'000;
constexpr unsigned kMaxThreads = 64;
constexpr unsigned kMaxDefaultThreads = 16;          // beyond this, more threads mostly contend
constexpr size_t kMaxLineBytes = size_t{256} << 20;  // a longer line ends the file's scan

// File systems whose "files" are kernel state, not data (never entered).
bool IsPseudoFs(int fd) {
  struct statfs sfs {};
  if (fstatfs(fd, &sfs) != 0) return true;
  switch (static_cast<uint64_t>(sfs.f_type)) {
    case 0x9fa0:      // procfs
    case 0x62656572:  // sysfs
    case 0x1cd1:      // devpts
    case 0x64626720:  // debugfs
    case 0x74726163:  // tracefs
    case 0x73636673:  // securityfs
    case 0xde5e81e4:  // efivarfs
    case 0x62656570:  // configfs
    case 0xcafe4a11:  // bpffs
    case 0x27e0eb:    // cgroup
    case 0x63677270:  // cgroup2
      return true;
    default:
      return false;
  }
}

std::string ReadSmallFile(int dir_fd, const char* name, size_t max_bytes) {
  UniqueFd fd(openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd) return {};
  struct stat st {};
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  std::string text;
  char buf[16384];
  while (text.size() < max_bytes) {
    const ssize_t r = read(fd.get(), buf, sizeof(buf));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    text.append(buf, static_cast<size_t>(r));
  }
  if (text.size() > max_bytes) text.resize(max_bytes);
  return text;
}

// Appends `text` cut to `max_chars` code points, without a trailing '\r'.
std::string ClipLine(const char* p, size_t n, size_t max_chars) {
  if (n > 0 && p[n - 1] == '\r') --n;
  size_t chars = 0;
  size_t i = 0;
  while (i < n) {
    if ((static_cast<unsigned char>(p[i]) & 0xC0) != 0x80) {
      if (chars == max_chars) break;
      ++chars;
    }
    ++i;
  }
  return std::string(p, i);
}

// A glob as ripgrep's --glob applies it: without '/', to the base name; with one, to the path
// below the root or any tail of it that starts at a component (a leading '/' anchors).
struct PathGlob {
  Glob glob;
  bool has_slash = false;
  bool anchored = false;

  static Result<PathGlob> Compile(std::string_view pattern) {
    PathGlob g;
    g.anchored = !pattern.empty() && pattern.front() == '/';
    if (g.anchored) pattern.remove_prefix(1);
    g.has_slash = pattern.find('/') != std::string_view::npos;
    auto glob = Glob::Compile(pattern, GlobSyntax::kBraces);
    if (!glob) return Err(glob.error());
    g.glob = std::move(*glob);
    return g;
  }

  bool Match(std::string_view rel) const {
    if (!has_slash && !anchored) {
      const size_t slash = rel.rfind('/');
      return glob.Match(slash == std::string_view::npos ? rel : rel.substr(slash + 1));
    }
    if (glob.Match(rel)) return true;
    if (anchored) return false;
    for (size_t k = rel.find('/'); k != std::string_view::npos; k = rel.find('/', k + 1)) {
      if (glob.Match(rel.substr(k + 1))) return true;
    }
    return false;
  }
};

Status WithLocation(const Status& s, const std::string& path, int64_t line) {
  return Status(s.code(), s.message() + " (at " + path + ":" + std::to_string(line) + ")");
}

struct LineHit {
  int64_t line = 0;
  std::string content;
  bool is_context = false;
};

struct FileHits {
  std::vector<LineHit> lines;  // content mode
  int64_t count = 0;           // matching lines
  bool matched = false;
};

enum class NodeKind : unsigned char { kFile, kDir, kOmitted };

struct Node {
  NodeKind kind = NodeKind::kFile;
  bool ready = false;  // dir: expanded; file: searched (guarded by the search mutex)
  std::string name;
  Node* parent = nullptr;
  std::vector<uint32_t> key;  // depth-first position: the scheduling priority
  // Directories.
  std::string rel;  // path below the root ("" for the root), no trailing '/'
  UniqueFd fd;      // open while children still need it
  dev_t dev = 0;
  std::shared_ptr<const IgnoreNode> ignore;
  std::vector<std::unique_ptr<Node>> children;
  size_t pending = 0;
  // Files.
  FileHits hits;
};

std::string RelOf(const Node& n) {
  if (n.kind == NodeKind::kDir) return n.rel;
  if (n.parent == nullptr || n.parent->rel.empty()) return n.name;
  std::string r;
  r.reserve(n.parent->rel.size() + 1 + n.name.size());
  r.append(n.parent->rel).append(1, '/').append(n.name);
  return r;
}

struct KeyGreater {
  bool operator()(const Node* a, const Node* b) const { return a->key > b->key; }
};

// Per-thread state: the read buffer and the regex scratch.
struct ThreadScratch {
  std::unique_ptr<char[]> buf;
  size_t cap = 0;
  LineMatcher::ScratchPtr matcher;

  char* Reserve(size_t n, size_t keep) {
    if (n <= cap) return buf.get();
    size_t new_cap = std::max(n, cap * 2);
    auto fresh = std::make_unique_for_overwrite<char[]>(new_cap);
    if (keep > 0) std::memcpy(fresh.get(), buf.get(), keep);
    buf = std::move(fresh);
    cap = new_cap;
    return buf.get();
  }
};

// Scans one open file for the request's pattern; fills `hits`.
class FileScanner {
 public:
  FileScanner(const LineMatcher& matcher, const SearchRequest& req, int64_t cap,
              ThreadScratch& scratch, const std::function<bool()>& should_stop)
      : m_(matcher), req_(req), cap_(cap), ts_(scratch), should_stop_(should_stop) {}

  // Ok with hits filled (binary files: nothing matched). ResourceExhausted from the regex
  // (message gains the line number).
  // The line on which the regex failed (after Scan returned an error).
  int64_t error_line() const { return error_line_; }

  Status Scan(int fd, uint64_t size_hint, FileHits& hits, int64_t* bytes) {
    hits_ = &hits;
    const size_t whole_max = m_.multiline() ? kMultilineWholeMax : kWholeFileMax;
    const size_t want = size_hint < whole_max ? static_cast<size_t>(size_hint) + 1 : kChunkBytes;
    size_t room = std::max<size_t>(want, 64 * 1024);
    char* buf = ts_.Reserve(room, 0);
    room = ts_.cap;
    size_t filled = 0;
    uint64_t offset = 0;  // pread: the caller's file offset is neither used nor moved
    bool eof = false;
    bool first = true;
    while (!done_) {
      // Fill.
      while (!eof && filled < room) {
        const ssize_t r = pread(fd, buf + filled, room - filled, static_cast<off_t>(offset));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
          eof = true;
          break;
        }
        filled += static_cast<size_t>(r);
        offset += static_cast<uint64_t>(r);
        *bytes += r;
        // A short read of a regular file that reached its size is the end: skip the extra
        // read(2) that would return 0.
        if (filled < room && size_hint > 0 && filled >= size_hint) eof = true;
      }
      if (first) {
        first = false;
        if (std::memchr(buf, '\0', std::min(filled, kBinaryProbeBytes)) != nullptr) {
          hits = FileHits{};
          return Status::Ok();
        }
      }
      size_t region = filled;
      if (!eof) {
        const void* nl = memrchr(buf, '\n', filled);
        if (nl == nullptr) {                 // one line longer than the buffer: grow it
          if (room >= kMaxLineBytes) break;  // give up on this file rather than on memory
          buf = ts_.Reserve(room * 2, filled);
          room = ts_.cap;
          continue;
        }
        region = static_cast<size_t>(static_cast<const char*>(nl) - buf) + 1;
      }
      TALARIA_RETURN_IF_ERROR(ProcessRegion(buf, region, eof));
      if (eof || done_) break;
      if (should_stop_()) break;
      std::memmove(buf, buf + region, filled - region);
      filled -= region;
    }
    return Status::Ok();
  }

 private:
  void Emit(int64_t line, const char* p, size_t n, bool is_context) {
    hits_->lines.push_back({line, ClipLine(p, n, req_.max_line_chars), is_context});
    last_emitted_ = line;
    if (static_cast<int64_t>(hits_->lines.size()) >= cap_) done_ = true;
  }

  size_t LineEnd(const char* buf, size_t n, size_t at) const {
    const void* nl = at < n ? std::memchr(buf + at, '\n', n - at) : nullptr;
    return nl == nullptr ? n : static_cast<size_t>(static_cast<const char*>(nl) - buf);
  }

  // After-context of the previous match, up to line `before` (exclusive).
  void EmitAfter(const char* buf, size_t n, int64_t before) {
    while (!done_ && last_emitted_ < after_until_ && last_emitted_ + 1 < before && after_pos_ < n) {
      const size_t e = LineEnd(buf, n, after_pos_);
      Emit(last_emitted_ + 1, buf + after_pos_, e - after_pos_, true);
      after_pos_ = e + 1;
    }
  }

  Status ProcessRegion(const char* buf, size_t n, bool eof) {
    const SearchOutputMode mode = req_.output_mode;
    const auto ctx = static_cast<int64_t>(req_.context);
    const bool lines_needed = mode == SearchOutputMode::kContent;
    size_t pos = 0;
    size_t counted_pos = 0;
    int64_t counted_line = line_base_;  // line number at counted_pos
    after_pos_ = 0;
    while (!done_ && pos < n) {
      size_t s = 0;
      size_t e = 0;
      auto found = m_.Next(buf, n, pos, &s, &e, *ts_.matcher);
      if (!found) {
        error_line_ = counted_line;
        if (s > counted_pos)
          error_line_ += static_cast<int64_t>(CountNewlines(buf + counted_pos, s - counted_pos));
        return found.error();
      }
      if (!*found) break;
      const int64_t span_lines =
          m_.multiline() ? 1 + static_cast<int64_t>(CountNewlines(buf + s, e - s)) : 1;
      hits_->matched = true;
      hits_->count += span_lines;
      if (mode == SearchOutputMode::kFilesOnly) {
        done_ = true;
        break;
      }
      pos = e + 1;
      if (!lines_needed) continue;

      counted_line += static_cast<int64_t>(CountNewlines(buf + counted_pos, s - counted_pos));
      counted_pos = s;
      const int64_t first_line = counted_line;
      if (ctx > 0) {
        EmitAfter(buf, n, first_line);
        // Before-context: lines max(last_emitted+1, first_line-ctx) .. first_line-1.
        const int64_t from = std::max(last_emitted_ + 1, first_line - ctx);
        if (from < first_line && !done_) {
          // Lines of the previous region come from its saved tail.
          for (const auto& [line, text] : tail_) {
            if (line >= from && line < line_base_ && !done_)
              Emit(line, text.data(), text.size(), true);
          }
          const int64_t in_region_from = std::max(from, line_base_);
          std::vector<std::pair<size_t, size_t>> spans;  // walking backwards
          size_t cursor = s;
          for (int64_t l = first_line - 1; l >= in_region_from; --l) {
            const size_t end = cursor - 1;  // the '\n' ending line l
            const void* nl = end > 0 ? memrchr(buf, '\n', end) : nullptr;
            const size_t start =
                nl == nullptr ? 0 : static_cast<size_t>(static_cast<const char*>(nl) - buf) + 1;
            spans.emplace_back(start, end);
            cursor = start;
          }
          for (auto it = spans.rbegin(); it != spans.rend() && !done_; ++it) {
            Emit(first_line - static_cast<int64_t>(spans.rend() - it), buf + it->first,
                 it->second - it->first, true);
          }
        }
      }
      // The match line(s).
      size_t q = s;
      for (int64_t k = 0; k < span_lines && !done_; ++k) {
        const size_t le = LineEnd(buf, n, q);
        Emit(first_line + k, buf + q, le - q, false);
        q = le + 1;
      }
      after_until_ = last_emitted_ + ctx;
      after_pos_ = e + 1;
      // Keep counted_pos at a line start: the line after the last match line.
      counted_line = first_line + span_lines - 1;
      counted_pos = e;
      if (counted_pos < n) {
        ++counted_pos;
        ++counted_line;
      }
    }
    if (!lines_needed || done_) return Status::Ok();
    if (ctx > 0) EmitAfter(buf, n, INT64_MAX);
    if (eof) return Status::Ok();
    // Advance the line base past this region and keep its last `ctx` lines.
    const int64_t next_base =
        counted_line + static_cast<int64_t>(CountNewlines(buf + counted_pos, n - counted_pos));
    tail_.clear();
    if (ctx > 0) {
      size_t end = n;  // region ends just after a '\n'
      std::vector<std::pair<int64_t, std::string>> rev;
      for (int64_t l = next_base - 1; l >= std::max<int64_t>(1, next_base - ctx) && end > 0; --l) {
        const size_t line_end = end - 1;
        const void* nl = line_end > 0 ? memrchr(buf, '\n', line_end) : nullptr;
        const size_t start =
            nl == nullptr ? 0 : static_cast<size_t>(static_cast<const char*>(nl) - buf) + 1;
        rev.emplace_back(l, std::string(buf + start, line_end - start));
        end = start;
      }
      tail_.assign(rev.rbegin(), rev.rend());
    }
    line_base_ = next_base;
    return Status::Ok();
  }

  const LineMatcher& m_;
  const SearchRequest& req_;
  const int64_t cap_;
  int64_t error_line_ = 0;
  ThreadScratch& ts_;
  const std::function<bool()>& should_stop_;
  FileHits* hits_ = nullptr;
  bool done_ = false;
  int64_t line_base_ = 1;     // number of the first line of the current region
  int64_t last_emitted_ = 0;  // last line number emitted (content mode)
  int64_t after_until_ = 0;   // after-context reaches this line
  size_t after_pos_ = 0;      // start of line last_emitted_+1 in the current region
  std::vector<std::pair<int64_t, std::string>> tail_;  // last lines of the previous region
};

class Search {
 public:
  explicit Search(const SearchRequest& req) : req_(req) {}

  Status Prepare() {
    if (req_.target == SearchTarget::kFiles) {
      auto g = PathGlob::Compile(req_.pattern);
      if (!g)
        return InvalidArgumentError("invalid glob '" + req_.pattern + "': " + g.error().message());
      name_glob_ = std::move(*g);
    } else {
      auto m = LineMatcher::Create(req_.pattern, req_.match_limit);
      if (!m) return m.error();
      matcher_ = std::move(*m);
      if (!req_.file_glob.empty()) {
        std::string_view g = req_.file_glob;
        const bool negated = g.front() == '!';
        if (negated) g.remove_prefix(1);
        auto compiled = PathGlob::Compile(g);
        if (!compiled) {
          return InvalidArgumentError("invalid file_glob '" + req_.file_glob +
                                      "': " + compiled.error().message());
        }
        (negated ? exclude_glob_ : include_glob_) = std::move(*compiled);
      }
    }
    offset_ = std::clamp<int64_t>(req_.offset, 0, kMaxEntries);
    limit_ = std::clamp<int64_t>(req_.limit, 1, kMaxEntries);
    needed_ = offset_ + limit_ + 1;
    if (!req_.display_root.empty()) {
      prefix_ = req_.display_root;
      if (prefix_.back() != '/') prefix_.push_back('/');
    }
    return Status::Ok();
  }

  Result<SearchOutcome> RunTree(int dir_fd) {
    auto root = std::make_unique<Node>();
    root->kind = NodeKind::kDir;
    // A fresh open file description: a dup would share (and move) the caller's directory
    // offset, so a second search on the same fd would list nothing.
    root->fd = UniqueFd(openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root->fd)
      return Err(InternalError(std::string("reopening the directory: ") + std::strerror(errno)));
    struct stat st {};
    if (fstat(root->fd.get(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Err(InvalidArgumentError("not a directory"));
    }
    root->dev = st.st_dev;
    for (const SearchRequest::ParentIgnore& p : req_.parent_ignores) {
      auto node = std::make_shared<IgnoreNode>();
      node->rules.AddFile(p.text);
      if (node->rules.empty()) continue;
      node->outer_prefix = p.path_to_root;
      if (!node->outer_prefix.empty() && node->outer_prefix.back() != '/')
        node->outer_prefix += '/';
      node->parent = std::move(root->ignore);
      root->ignore = std::move(node);
    }
    root_ = root.get();
    stack_.push_back({root_, 0});
    queue_.push(root_);

    unsigned threads = req_.threads;
    if (threads == 0) threads = std::min(std::thread::hardware_concurrency(), kMaxDefaultThreads);
    threads = std::clamp(threads, 1U, kMaxThreads);
    {
      std::vector<std::jthread> pool;
      pool.reserve(threads - 1);
      for (unsigned i = 1; i < threads; ++i) pool.emplace_back([this] { Worker(); });
      Worker();
    }  // joined
    return Finish();
  }

  Result<SearchOutcome> RunFile(int file_fd, std::string_view display_path) {
    struct stat st {};
    if (fstat(file_fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      return Err(InvalidArgumentError("not a regular file"));
    }
    single_path_ = std::string(display_path);
    auto node = std::make_unique<Node>();
    node->name = std::string(display_path);
    if (req_.target == SearchTarget::kFiles) {
      const size_t slash = display_path.rfind('/');
      const std::string_view base =
          slash == std::string_view::npos ? display_path : display_path.substr(slash + 1);
      node->hits.matched = name_glob_->Match(base);
    } else {
      ThreadScratch ts;
      ts.matcher = matcher_->NewScratch();
      std::function<bool()> stop = [this] { return Interrupted(); };
      FileScanner scanner(*matcher_, req_, needed_, ts, stop);
      int64_t bytes = 0;
      Status s = scanner.Scan(file_fd, static_cast<uint64_t>(st.st_size), node->hits, &bytes);
      if (!s.ok()) return Err(WithLocation(s, single_path_, scanner.error_line()));
      outcome_.files_searched = 1;
      outcome_.bytes_searched = bytes;
    }
    if (cancelled_) return Err(CancelledError("search cancelled"));
    Commit(*node);
    return Finish();
  }

 private:
  struct Frame {
    Node* dir;
    size_t index;
  };

  bool Interrupted() {
    if (req_.cancel.stop_requested()) {
      cancelled_ = true;
      return true;
    }
    if (req_.deadline != Clock::time_point::max() && Clock::now() >= req_.deadline) {
      timed_out_ = true;
      return true;
    }
    return stop_flag_.load(std::memory_order_relaxed);
  }

  void Worker() {
    ThreadScratch ts;
    if (matcher_) ts.matcher = matcher_->NewScratch();
    std::function<bool()> should_stop = [this] { return Interrupted(); };
    std::unique_lock lock(mu_);
    while (true) {
      cv_.wait(lock, [&] { return stop_ || !queue_.empty() || active_ == 0; });
      if (stop_ || queue_.empty()) break;
      if (Interrupted()) {
        StopLocked();
        break;
      }
      Node* node = queue_.top();
      queue_.pop();
      ++active_;
      lock.unlock();

      // Work outside the lock. The node and its parent stay alive: the cursor only frees
      // what it has passed, and it cannot pass a node that is not ready.
      Status status;
      if (node->kind == NodeKind::kDir) {
        Expand(*node);
      } else {
        status = SearchNode(*node, ts, should_stop);
      }

      lock.lock();
      --active_;
      if (!status.ok() && error_.ok()) {
        error_ = status;
        StopLocked();
      }
      node->ready = true;
      if (node->kind == NodeKind::kDir) {
        size_t tasks = 0;
        for (auto& child : node->children) {
          if (child->kind == NodeKind::kDir ||
              (child->kind == NodeKind::kFile && req_.target == SearchTarget::kContent)) {
            queue_.push(child.get());
            ++tasks;
          } else {
            child->ready = true;
          }
        }
        node->pending = tasks;
        if (tasks == 0) node->fd.reset();
        if (tasks > 1)
          cv_.notify_all();
        else if (tasks == 1)
          cv_.notify_one();
      }
      if (Node* parent = node->parent; parent != nullptr && --parent->pending == 0) {
        parent->fd.reset();
      }
      Advance();
      if (queue_.empty() && active_ == 0) {
        stop_ = true;
        cv_.notify_all();
      }
    }
  }

  void StopLocked() {
    stop_ = true;
    stop_flag_.store(true, std::memory_order_relaxed);
    cv_.notify_all();
  }

  // Lists a directory (opening it through its parent's fd) and builds its sorted children.
  void Expand(Node& dir) {
    if (dir.parent != nullptr) {
      dir.fd = UniqueFd(openat(dir.parent->fd.get(), dir.name.c_str(),
                               O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
      if (!dir.fd) return;  // vanished, swapped for a symlink, or unreadable: skip
      struct stat st {};
      if (fstat(dir.fd.get(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        dir.fd.reset();
        return;
      }
      dir.dev = st.st_dev;
      if (dir.dev != dir.parent->dev && IsPseudoFs(dir.fd.get())) {
        dir.fd.reset();
        return;
      }
      dir.ignore = dir.parent->ignore;
    }

    struct Entry {
      std::string name;
      unsigned char type;
    };
    std::vector<Entry> entries;
    alignas(8) char buf[32768];
    bool has_gitignore = false;
    bool has_ignore = false;
    while (true) {
      const ssize_t n = getdents64(dir.fd.get(), buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      for (ssize_t off = 0; off < n;) {
        const auto* d = reinterpret_cast<const struct dirent64*>(buf + off);
        off += d->d_reclen;
        const char* name = d->d_name;
        if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
        if (std::strcmp(name, ".git") == 0) continue;
        // The temp file of an atomic write in flight (or one a crash left behind).
        if (name[0] == '.' && std::strstr(name, ".talaria-tmp-") != nullptr) continue;
        if (std::strcmp(name, ".gitignore") == 0) has_gitignore = true;
        if (std::strcmp(name, ".ignore") == 0) has_ignore = true;
        entries.push_back({name, d->d_type});
      }
    }

    if (has_gitignore || has_ignore) {
      auto node = std::make_shared<IgnoreNode>();
      if (has_gitignore)
        node->rules.AddFile(ReadSmallFile(dir.fd.get(), ".gitignore", kMaxIgnoreFileBytes));
      if (has_ignore)
        node->rules.AddFile(ReadSmallFile(dir.fd.get(), ".ignore", kMaxIgnoreFileBytes));
      if (!node->rules.empty()) {
        node->parent = dir.ignore;
        node->prefix_len = dir.rel.empty() ? 0 : dir.rel.size() + 1;
        dir.ignore = std::move(node);
      }
    }

    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.name < b.name; });
    dir.children.reserve(entries.size());
    for (Entry& e : entries) {
      unsigned char type = e.type;
      if (type == DT_UNKNOWN) {
        struct stat st {};
        if (fstatat(dir.fd.get(), e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
      }
      if (type != DT_DIR && type != DT_REG) continue;  // symlinks and special files
      std::string rel = dir.rel.empty() ? e.name : dir.rel + "/" + e.name;
      auto child = std::make_unique<Node>();
      if (type == DT_DIR) {
        if (IsIgnored(dir.ignore.get(), rel, true)) continue;
        if (exclude_glob_ && exclude_glob_->Match(rel)) continue;
        child->kind = NodeKind::kDir;
        child->rel = std::move(rel);
      } else {
        if (!FileSelected(dir, rel)) continue;
        const bool sensitive = req_.is_sensitive && req_.is_sensitive(rel);
        child->kind = sensitive ? NodeKind::kOmitted : NodeKind::kFile;
        if (req_.target == SearchTarget::kFiles) child->hits.matched = true;
      }
      child->name = std::move(e.name);
      child->parent = &dir;
      child->key = dir.key;
      child->key.push_back(static_cast<uint32_t>(dir.children.size()));
      dir.children.push_back(std::move(child));
    }
  }

  bool FileSelected(const Node& dir, const std::string& rel) const {
    if (req_.target == SearchTarget::kFiles) {
      // The name pattern acts like ripgrep's --glob: it also overrides ignore files.
      return name_glob_->Match(rel);
    }
    if (exclude_glob_ && exclude_glob_->Match(rel)) return false;
    if (include_glob_) return include_glob_->Match(rel);
    return !IsIgnored(dir.ignore.get(), rel, false);
  }

  Status SearchNode(Node& file, ThreadScratch& ts, const std::function<bool()>& should_stop) {
    UniqueFd fd(openat(file.parent->fd.get(), file.name.c_str(),
                       O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd) return Status::Ok();  // vanished or unreadable: nothing to report
    struct stat st {};
    if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return Status::Ok();
    FileScanner scanner(*matcher_, req_, needed_, ts, should_stop);
    int64_t bytes = 0;
    Status s = scanner.Scan(fd.get(), static_cast<uint64_t>(st.st_size), file.hits, &bytes);
    files_searched_.fetch_add(1, std::memory_order_relaxed);
    bytes_searched_.fetch_add(bytes, std::memory_order_relaxed);
    if (!s.ok()) return WithLocation(s, prefix_ + RelOf(file), scanner.error_line());
    return Status::Ok();
  }

  // Moves the depth-first cursor over every ready node, committing results in order.
  void Advance() {
    while (!stack_.empty() && !stop_) {
      Frame& f = stack_.back();
      if (!f.dir->ready) return;
      if (f.index == f.dir->children.size()) {
        f.dir->children.clear();
        f.dir->children.shrink_to_fit();
        stack_.pop_back();
        continue;
      }
      Node* child = f.dir->children[f.index].get();
      if (child->kind == NodeKind::kDir) {
        ++f.index;
        stack_.push_back({child, 0});
        continue;
      }
      if (!child->ready) return;
      ++f.index;
      Commit(*child);
      child->hits = FileHits{};
      if (entries_ >= needed_) {
        stopped_early_ = true;
        StopLocked();
      }
    }
  }

  void Commit(const Node& node) {
    if (node.kind == NodeKind::kOmitted) {
      ++outcome_.omitted;
      return;
    }
    const FileHits& h = node.hits;
    if (!h.matched) return;
    auto path = [&] { return single_path_.empty() ? prefix_ + RelOf(node) : single_path_; };
    auto in_page = [&] { return entries_ >= offset_ && entries_ < offset_ + limit_; };
    if (req_.target == SearchTarget::kFiles || req_.output_mode == SearchOutputMode::kFilesOnly) {
      if (in_page()) outcome_.files.push_back(path());
      ++entries_;
      return;
    }
    if (req_.output_mode == SearchOutputMode::kCount) {
      if (in_page()) outcome_.counts.emplace_back(path(), h.count);
      ++entries_;
      count_sum_ += h.count;
      return;
    }
    std::string p;
    for (const LineHit& l : h.lines) {
      if (in_page()) {
        if (p.empty()) p = path();
        outcome_.matches.push_back({p, l.line, l.content, l.is_context});
      }
      ++entries_;
    }
  }

  Result<SearchOutcome> Finish() {
    if (!error_.ok()) return Err(error_);
    if (cancelled_) return Err(CancelledError("search cancelled"));
    outcome_.total_count =
        req_.target == SearchTarget::kContent && req_.output_mode == SearchOutputMode::kCount
            ? count_sum_
            : entries_;
    outcome_.total_is_lower_bound = stopped_early_ || timed_out_;
    outcome_.truncated = entries_ > offset_ + limit_ || outcome_.total_is_lower_bound;
    if (timed_out_) outcome_.limit_reason = "search_timeout";
    if (single_path_.empty()) {
      outcome_.files_searched = files_searched_.load();
      outcome_.bytes_searched = bytes_searched_.load();
    }
    return std::move(outcome_);
  }

  const SearchRequest& req_;
  std::unique_ptr<LineMatcher> matcher_;
  std::optional<PathGlob> name_glob_;
  std::optional<PathGlob> include_glob_;
  std::optional<PathGlob> exclude_glob_;
  int64_t offset_ = 0;
  int64_t limit_ = 0;
  int64_t needed_ = 0;
  std::string prefix_;
  std::string single_path_;

  std::mutex mu_;
  std::condition_variable cv_;
  // Guarded by mu_ (with every Node's ready/children/pending/fd after it is queued).
  std::priority_queue<Node*, std::vector<Node*>, KeyGreater> queue_;
  size_t active_ = 0;
  bool stop_ = false;
  bool stopped_early_ = false;
  std::vector<Frame> stack_;
  Node* root_ = nullptr;
  int64_t entries_ = 0;
  int64_t count_sum_ = 0;
  Status error_;
  SearchOutcome outcome_;

  std::atomic<bool> stop_flag_{false};
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> timed_out_{false};
  std::atomic<int64_t> files_searched_{0};
  std::atomic<int64_t> bytes_searched_{0};
};

}  // namespace

Result<SearchOutcome> SearchDirectory(int dir_fd, const SearchRequest& request) {
  Search search(request);
  TALARIA_RETURN_IF_ERROR(search.Prepare());
  return search.RunTree(dir_fd);
}

Result<SearchOutcome> SearchFile(int file_fd, std::string_view display_path,
                                 const SearchRequest& request) {
  Search search(request);
  TALARIA_RETURN_IF_ERROR(search.Prepare());
  return search.RunFile(file_fd, display_path);
}

}  // namespace talaria::search
