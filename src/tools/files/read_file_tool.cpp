// read_file: a window of a text file with an `N|line` gutter, as the original shows it.
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "talaria/core/budget.h"
#include "talaria/core/tool_registration.h"
#include "tools/files/file_support.h"
#include "tools/files/file_tracker.h"
#include "tools/files/similar_names.h"
#include "tools/files/text_decode.h"

namespace talaria::tools {
namespace {

constexpr std::string_view kReadFileSchema = R"json({
  "name": "read_file",
  "description": "Read a text file with line numbers. Output lines look like 'N|content' (the number and '|' are not part of the file). Reads 500 lines by default; use offset and limit to page through large files (the result tells you the next offset). Binary files are refused with their type named. Prefer search_files to locate code in large files first.",
  "parameters": {
    "type": "object",
    "properties": {
      "path": {"type": "string", "description": "File to read: relative to the working directory, or absolute inside the workspace."},
      "offset": {"type": "integer", "minimum": 1, "default": 1, "description": "1-based line number to start reading from (default 1)."},
      "limit": {"type": "integer", "minimum": 1, "maximum": 2000, "default": 500, "description": "Maximum number of lines to return (default 500, max 2000)."}
    },
    "required": ["path"]
  }
})json";

constexpr size_t kMaxLineChars = 2000;
constexpr size_t kSafetyLimitChars = 100'000;
constexpr size_t kLargeFileBytes = 512 * 1024;
constexpr size_t kMaxUtf16Bytes = 64 << 20;
// Files up to this size get their window's content reserved whole (a window is at most 2,000
// lines: beyond this it is rarely the whole file).
constexpr uint64_t kReserveUpTo = 256 << 10;

// Appends `line` to `out` as "N|line", clipping it at kMaxLineChars code points.
void AppendNumbered(std::string& out, int64_t number, std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  out += std::to_string(number);
  out += '|';
  if (line.size() <= kMaxLineChars) {  // no more code points than bytes: nothing to clip
    out.append(line);
    out += '\n';
    return;
  }
  size_t chars = 0;
  size_t cut = line.size();
  for (size_t i = 0; i < line.size(); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80 && chars++ == kMaxLineChars) {
      cut = i;
      break;
    }
  }
  out.append(line.substr(0, cut));
  if (cut < line.size()) out += "... [truncated]";
  out += '\n';
}

struct Window {
  std::string content;
  int64_t total_lines = 0;
  int64_t shown_from = 0;
  int64_t shown_to = 0;
};

// Streams `text` chunks: counts every line, keeps only [offset, offset + limit).
class WindowCollector {
 public:
  // `file_size` (as opened) sizes the content up front when the window starts at the top: the
  // file's bytes plus a gutter of a few bytes a line, instead of growing by doubling and copying.
  WindowCollector(int64_t offset, int64_t limit, uint64_t file_size)
      : first_(offset), last_(offset + limit - 1) {
    if (offset == 1 && file_size <= kReserveUpTo)
      w_.content.reserve(file_size + file_size / 8 + 64);
  }
  void Feed(std::string_view chunk) {
    size_t start = 0;
    while (start < chunk.size()) {
      const size_t nl = chunk.find('\n', start);
      const std::string_view piece =
          chunk.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
      if (nl != std::string_view::npos && !open_line_) {
        EndLine(piece);  // a whole line inside the chunk: numbered straight from it, no copy
        start = nl + 1;
        continue;
      }
      if (InWindow()) partial_.append(piece);
      if (nl == std::string_view::npos) {
        open_line_ = true;
        return;
      }
      EndLine(partial_);
      start = nl + 1;
    }
  }
  Window Finish() {
    if (open_line_) EndLine(partial_);
    if (w_.shown_to > 0 && !w_.content.empty() && w_.content.back() == '\n') w_.content.pop_back();
    return std::move(w_);
  }

 private:
  bool InWindow() const { return w_.total_lines + 1 >= first_ && w_.total_lines + 1 <= last_; }
  // Ends the current line, whose text is `line` (partial_ or a piece of the chunk).
  void EndLine(std::string_view line) {
    const int64_t number = ++w_.total_lines;
    if (number >= first_ && number <= last_) {
      if (w_.shown_from == 0) w_.shown_from = number;
      w_.shown_to = number;
      AppendNumbered(w_.content, number, line);
    }
    partial_.clear();
    open_line_ = false;
  }

  int64_t first_;
  int64_t last_;
  Window w_;
  std::string partial_;
  bool open_line_ = false;
};

ToolResult NotFound(const safety::Workspace& ws, std::string_view path) {
  Json body = Json::object();
  body["error"] = "File not found: " + std::string(path);
  body["similar_files"] = SimilarFiles(ws, path, 5);
  return ToolResult::ErrorJson(std::move(body));
}

ToolResult ReadFile(const Json& args, ToolContext& ctx) {
  const safety::Workspace* ws = WorkspaceOf(ctx);
  if (ws == nullptr) return NoWorkspaceResult();
  const std::string path = args["path"].get<std::string>();
  const int64_t offset = args.value("offset", int64_t{1});
  const int64_t limit = args.value("limit", int64_t{500});

  safety::ResolvedPath resolved;
  safety::FileInfo info;
  auto fd = ws->OpenRead(path, &resolved, &info);
  if (!fd) {
    if (fd.error().code() == StatusCode::kNotFound) return NotFound(*ws, path);
    return ErrorFromStatus(fd.error());
  }

  FileTracker* tracker = TrackerOf(ctx);
  FileTracker::ReadVerdict verdict;
  if (tracker != nullptr) {
    verdict = tracker->RecordRead(ctx.task_id, resolved.display,
                                  std::to_string(offset) + ":" + std::to_string(limit),
                                  FileTracker::Cookie(info));
    if (verdict.consecutive >= 4) {
      Json body = Json::object();
      body["error"] =
          "BLOCKED: You have read this exact file region " + std::to_string(verdict.consecutive) +
          " times in a row. The content has not changed. Use the content you already have, "
          "or read a different region.";
      body["already_read"] = verdict.consecutive;
      return ToolResult::ErrorJson(std::move(body), CallStatus::kError, "read_loop");
    }
    if (verdict.unchanged && verdict.unchanged_stubs > 2) {
      return ToolResult::Error(
          "BLOCKED: " + resolved.display +
              " has not changed since you last read it, and you were already told twice. "
              "Use the content from the earlier read.",
          CallStatus::kError, "read_loop");
    }
  }
  auto with_warning = [&](Json body) {
    if (verdict.consecutive == 3) {
      body["_warning"] =
          "You have read this exact file region 3 times in a row. If you need it again, "
          "use the content you already have.";
    }
    return body;
  };
  if (verdict.unchanged) {
    Json body = Json::object();
    body["status"] = "unchanged";
    body["message"] =
        "File unchanged since last read. The content from the earlier read_file result is still "
        "current; refer to it instead of re-reading.";
    body["path"] = resolved.display;
    body["dedup"] = true;
    body["content_returned"] = false;
    return ToolResult::FromJson(with_warning(std::move(body)));
  }

  // The first block decides encoding and binary-ness; the rest streams after it.
  // Buffers left uninitialised: zero-filling them cost more than reading a small file.
  constexpr size_t kHeadBytes = 8192;
  const auto head_buffer = std::make_unique_for_overwrite<char[]>(kHeadBytes);
  ssize_t got;
  do {
    got = ::pread(fd->get(), head_buffer.get(), kHeadBytes, 0);
  } while (got < 0 && errno == EINTR);
  if (got < 0) return ToolResult::Error("Read failed: " + std::string(std::strerror(errno)));
  const std::string_view head(head_buffer.get(), static_cast<size_t>(got));
  const TextEncoding encoding = DetectEncoding(head);
  if (auto kind = DescribeBinary(head, encoding)) {
    return ToolResult::Error(BinaryFileMessage(*kind, info.size), CallStatus::kError,
                             "binary_file");
  }

  WindowCollector collector(offset, limit, info.size);
  if (encoding == TextEncoding::kUtf16Le || encoding == TextEncoding::kUtf16Be) {
    auto bytes = ws->ReadAll(path, kMaxUtf16Bytes);
    if (!bytes) return ErrorFromStatus(bytes.error());
    collector.Feed(
        Utf16ToUtf8(std::string_view(*bytes).substr(2), encoding == TextEncoding::kUtf16Be));
  } else {
    const size_t bom = encoding == TextEncoding::kUtf8Bom ? 3 : 0;
    collector.Feed(head.substr(std::min(bom, head.size())));
    // A file that fit the head and had that size when opened needs no second read.
    const bool more = head.size() == kHeadBytes || head.size() < info.size;
    // The rest as it was when opened, plus a byte to see the end (or growth) at once.
    const size_t rest = info.size > head.size() ? static_cast<size_t>(info.size) - head.size() : 0;
    const size_t buffer_size = more ? std::clamp<size_t>(rest + 1, 4096, 64 * 1024) : 0;
    const auto buffer = std::make_unique_for_overwrite<char[]>(buffer_size);
    off_t pos = static_cast<off_t>(head.size());
    while (more) {
      if (ctx.cancelled())
        return ToolResult::Error("read_file cancelled", CallStatus::kCancelled, "cancelled");
      const ssize_t n = ::pread(fd->get(), buffer.get(), buffer_size, pos);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return ToolResult::Error("Read failed: " + std::string(std::strerror(errno)));
      if (n == 0) break;
      collector.Feed(std::string_view(buffer.get(), static_cast<size_t>(n)));
      pos += n;
    }
  }
  Window w = collector.Finish();

  // A content of no more bytes than the limit has no more characters either: not counted.
  const size_t chars =
      w.content.size() <= kSafetyLimitChars ? 0 : static_cast<size_t>(CountChars(w.content));
  if (chars > kSafetyLimitChars) {
    Json body = Json::object();
    body["error"] = "Read produced " + std::to_string(chars) +
                    " characters which exceeds the safety limit (100,000 chars). Use offset and "
                    "limit to read a "
                    "smaller range.";
    body["path"] = resolved.display;
    body["total_lines"] = w.total_lines;
    body["file_size"] = info.size;
    return ToolResult::ErrorJson(std::move(body));
  }

  Json body = Json::object();
  body["content"] = std::move(w.content);
  body["total_lines"] = w.total_lines;
  body["file_size"] = info.size;
  if (info.size == 0) {
    body["hint"] = "File is empty (0 bytes).";
  } else if (offset > w.total_lines) {
    body["hint"] = "Offset " + std::to_string(offset) + " is past the end of the file (" +
                   std::to_string(w.total_lines) + " lines).";
  } else if (w.shown_to < w.total_lines) {
    body["truncated"] = true;
    body["hint"] = "Use offset=" + std::to_string(w.shown_to + 1) +
                   " to continue reading (showing " + std::to_string(w.shown_from) + "-" +
                   std::to_string(w.shown_to) + " of " + std::to_string(w.total_lines) + " lines)";
  }
  if (info.size > kLargeFileBytes && limit > 200) {
    body["_hint"] =
        "This file is large (" + HumanBytes(info.size) +
        "); locate the part you need with search_files, then read it with offset and limit.";
  }
  return ToolResult::FromJson(with_warning(std::move(body)));
}

// The spill note of an oversized result tells the model to page it with this tool.
[[maybe_unused]] const bool kPagingHintDeclared =
    (DeclareSpillPagingHint("Page through it with read_file using offset and limit (or process it "
                            "with execute_code)"),
     true);

ToolSpec MakeReadFileSpec() {
  ToolSpec spec;
  spec.name = "read_file";
  spec.toolset = "file";
  spec.schema = kReadFileSchema;
  spec.handler = ReadFile;
  spec.emoji = "\xF0\x9F\x93\x96";  // "📖"
  spec.parallel = ParallelClass::kPathScoped;
  spec.path_args = {"path"};
  spec.counts_as_read = true;
  spec.never_spill = true;  // spill files are paged with read_file itself
  spec.path_access = PathAccess::kRead;
  spec.annotations.read_only = true;
  spec.annotations.idempotent = true;
  return spec;
}

}  // namespace
}  // namespace talaria::tools

TALARIA_TOOL(ReadFile, talaria::tools::MakeReadFileSpec());
