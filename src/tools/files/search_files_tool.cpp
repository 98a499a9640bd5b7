// search_files: content search (regex) or file-name search (glob) below a workspace path, in
// process and multi-threaded (search_engine.h), with the original's result shapes: matches (or
// a path-grouped text block from 5 matches on), files, counts, truncation with a lower-bound
// total and a paging hint after the JSON, and sensitive files omitted and counted.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "talaria/confinement/workspace.h"
#include "talaria/core/tool_registration.h"
#include "talaria/search/line_matcher.h"
#include "talaria/search/search_engine.h"
#include "tools/files/file_support.h"
#include "tools/files/file_tracker.h"

namespace talaria::tools {
// The search engines this tool is a thin front for.
using namespace ::talaria::search;  // NOLINT(google-build-using-namespace)
namespace {

constexpr std::string_view kSearchFilesSchema = R"json({
  "name": "search_files",
  "description": "Search inside files or find files by name. Use this instead of grep, rg, find or ls in the terminal: it is faster and its output is structured.\n\nContent search (target='content'): a regular expression matched against each line. Output modes: matching lines with line numbers (content), paths of matching files (files_only), or match counts per file (count).\n\nFile search (target='files'): find files whose name matches a glob such as '*.py' or '*config*'.\n\nFiles ignored by .gitignore, binary files and the .git directory are skipped. Results are sorted by path.",
  "parameters": {
    "type": "object",
    "properties": {
      "pattern": {"type": "string", "description": "Regex to search file contents for, or a glob (e.g. '*.py') to match file names when target='files'"},
      "target": {"type": "string", "enum": ["content", "files"], "description": "'content' searches inside files, 'files' matches file names", "default": "content"},
      "path": {"type": "string", "description": "Directory or file to search (default: the current working directory)", "default": "."},
      "file_glob": {"type": "string", "description": "Only search files matching this glob, e.g. '*.py' (content search)"},
      "limit": {"type": "integer", "description": "Maximum number of results to return (default: 50)", "default": 50},
      "offset": {"type": "integer", "description": "Number of results to skip, for paging (default: 0)", "default": 0},
      "output_mode": {"type": "string", "enum": ["content", "files_only", "count"], "description": "For content search: 'content' shows matching lines with line numbers, 'files_only' lists the paths of matching files, 'count' gives the number of matching lines per file", "default": "content"},
      "context": {"type": "integer", "description": "Lines of context to show before and after each match (content search)", "default": 0}
    },
    "required": ["pattern"]
  }
})json";

// The original's wording, so models tuned on it read the same text.
constexpr std::string_view kMatchesFormat =
    "path-grouped: each file path on its own line, followed by indented '<line>: <content>' "
    "rows for matches in that file";
constexpr std::string_view kOmittedSuffix =
    " result(s) omitted because they target credential, token, cache, or secret-bearing "
    "environment files.";
constexpr std::string_view kMultilineWarning =
    "Pattern contains \\n \xE2\x80\x94 multiline mode (-U) was enabled automatically so the regex "
    "can match across line boundaries.";
constexpr size_t kGroupedFromMatches = 5;
constexpr auto kSearchTimeout = std::chrono::seconds(60);
constexpr auto kDeadlineMargin = std::chrono::milliseconds(250);

std::string StringArg(const Json& args, const char* name, std::string fallback) {
  auto it = args.find(name);
  if (it == args.end() || it->is_null()) return fallback;
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}

int64_t IntArg(const Json& args, const char* name, int64_t fallback) {
  auto it = args.find(name);
  if (it == args.end()) return fallback;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_number()) return static_cast<int64_t>(it->get<double>());
  return fallback;
}

// "path-grouped" text: a path line, then "  <line>: <content>" rows (trailing space trimmed).
std::string GroupMatches(const std::vector<SearchLine>& matches) {
  std::string out;
  const std::string* current = nullptr;
  for (const SearchLine& m : matches) {
    if (current == nullptr || m.path != *current) {
      if (!out.empty()) out += '\n';
      out += m.path;
      current = &m.path;
    }
    std::string_view content = m.content;
    while (!content.empty() &&
           (content.back() == ' ' || content.back() == '\t' || content.back() == '\r' ||
            content.back() == '\n' || content.back() == '\f' || content.back() == '\v')) {
      content.remove_suffix(1);
    }
    out += "\n  ";
    out += std::to_string(m.line);
    out += ": ";
    out += content;
  }
  return out;
}

// The ignore files of the directories above a search root, up to the repository root (the
// first directory holding .git) or the workspace root, outermost first — so that searching
// "frontend" still skips the node_modules/ the repository's top .gitignore names.
std::vector<SearchRequest::ParentIgnore> ParentIgnores(const safety::Workspace& ws,
                                                       const safety::ResolvedPath& root) {
  constexpr size_t kMaxIgnoreBytes = size_t{1} << 20;
  auto join = [](const std::string& dir, std::string_view name) {
    std::string p = dir;
    if (p.empty() || p.back() != '/') p += '/';
    p += name;
    return p;
  };
  std::vector<SearchRequest::ParentIgnore> out;
  if (ws.Stat(join(root.display, ".git"))) return out;  // a repository root: nothing above
  std::string rel = root.relative;
  std::string display = root.display;
  std::string down;  // from the ancestor to the search root
  while (!rel.empty()) {
    const size_t slash = rel.rfind('/');
    const std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
    rel = slash == std::string::npos ? "" : rel.substr(0, slash);
    display.resize(display.size() >= name.size() + 1 ? display.size() - name.size() - 1 : 0);
    if (display.empty()) display = "/";
    down = down.empty() ? name : name + "/" + down;
    std::string text;
    for (std::string_view file : {".gitignore", ".ignore"}) {
      if (auto t = ws.ReadAll(join(display, file), kMaxIgnoreBytes)) text += *t + "\n";
    }
    if (!text.empty()) out.push_back({std::move(text), down});
    if (ws.Stat(join(display, ".git"))) break;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

ToolResult SearchFiles(const Json& args, ToolContext& ctx) {
  const std::string pattern = StringArg(args, "pattern", "");
  const std::string target = StringArg(args, "target", "content");
  std::string path = StringArg(args, "path", ".");
  if (path.empty()) path = ".";
  const std::string file_glob = StringArg(args, "file_glob", "");
  const int64_t limit = std::max<int64_t>(1, IntArg(args, "limit", 50));
  const int64_t offset = std::max<int64_t>(0, IntArg(args, "offset", 0));
  const std::string output_mode = StringArg(args, "output_mode", "content");
  const int64_t context = std::clamp<int64_t>(IntArg(args, "context", 0), 0, 100);

  if (target != "content" && target != "files") {
    return ToolResult::Error("Invalid target '" + target + "': use 'content' or 'files'.");
  }
  if (output_mode != "content" && output_mode != "files_only" && output_mode != "count") {
    return ToolResult::Error("Invalid output_mode '" + output_mode +
                             "': use 'content', 'files_only' or 'count'.");
  }

  // Four identical searches in a row are refused; paging changes the key.
  int consecutive = 1;
  if (FileTracker* tracker = TrackerOf(ctx)) {
    std::string key = pattern;
    for (std::string_view part :
         {std::string_view(target), std::string_view(path), std::string_view(file_glob)}) {
      key.append(1, '\0').append(part);
    }
    key.append(1, '\0')
        .append(std::to_string(limit))
        .append(1, '\0')
        .append(std::to_string(offset));
    consecutive = tracker->RecordSearch(ctx.task_id, key);
  }
  if (consecutive >= 4) {
    Json body = Json::object();
    body["error"] = "BLOCKED: You have run this exact search " + std::to_string(consecutive) +
                    " times in a row. The results have NOT changed. You already have this "
                    "information. STOP re-searching and proceed with your task.";
    body["pattern"] = pattern;
    body["already_searched"] = consecutive;
    return ToolResult::ErrorJson(std::move(body));
  }

  const safety::Workspace* ws = WorkspaceOf(ctx);
  if (ws == nullptr) return NoWorkspaceResult();
  auto resolved = ws->Resolve(path);
  if (!resolved) return ErrorFromStatus(resolved.error());
  auto info = ws->Stat(path);
  if (!info) {
    if (info.error().code() == StatusCode::kNotFound) {
      return ToolResult::Error("Path not found: " + path);
    }
    return ErrorFromStatus(info.error());
  }

  SearchRequest req;
  req.pattern = pattern;
  req.target = target == "files" ? SearchTarget::kFiles : SearchTarget::kContent;
  if (req.target == SearchTarget::kFiles && pattern.find('/') == std::string::npos &&
      !pattern.starts_with('*')) {
    // As the original: a bare name matches at any depth and as a suffix ("*name").
    req.pattern = "*" + pattern;
  }
  req.file_glob = req.target == SearchTarget::kContent ? file_glob : "";
  req.limit = limit;
  req.offset = offset;
  req.output_mode = output_mode == "count"        ? SearchOutputMode::kCount
                    : output_mode == "files_only" ? SearchOutputMode::kFilesOnly
                                                  : SearchOutputMode::kContent;
  req.context = static_cast<int>(context);
  req.cancel = ctx.cancel;
  req.deadline = std::chrono::steady_clock::now() + kSearchTimeout;
  if (ctx.deadline != ToolContext::Deadline::max()) {
    req.deadline = std::min(req.deadline, ctx.deadline - kDeadlineMargin);
  }
  // Result paths start with the path as the caller wrote it (ripgrep's form), except that
  // "~" is shown expanded.
  req.display_root = path.starts_with('~') ? resolved->display : path;
  std::string abs_root = resolved->display;
  if (abs_root.empty() || abs_root.back() != '/') abs_root += '/';
  req.is_sensitive = [ws, &abs_root](std::string_view rel) {
    std::string full;
    full.reserve(abs_root.size() + rel.size());
    full.append(abs_root).append(rel);
    return ws->IsSensitiveForRead(full);
  };

  Result<SearchOutcome> outcome;
  if (S_ISDIR(info->mode)) {
    req.parent_ignores = ParentIgnores(*ws, *resolved);
    auto dir = ws->OpenDir(path);
    if (!dir) return ErrorFromStatus(dir.error());
    outcome = SearchDirectory(dir->get(), req);
  } else {
    auto file = ws->OpenRead(path);
    if (!file) return ErrorFromStatus(file.error());
    outcome = SearchFile(file->get(), req.display_root, req);
  }
  if (!outcome) {
    const Status& s = outcome.error();
    if (s.code() == StatusCode::kCancelled) {
      return ToolResult::Error("search cancelled", CallStatus::kCancelled, "cancelled");
    }
    Json body = Json::object();
    body["total_count"] = 0;
    body["error"] = "Search failed: " + s.message();
    return ToolResult::ErrorJson(std::move(body));
  }

  const SearchOutcome& out = *outcome;
  Json body = Json::object();
  body["total_count"] = out.total_count;
  if (!out.matches.empty()) {
    if (out.matches.size() >= kGroupedFromMatches) {
      body["matches_format"] = kMatchesFormat;
      body["matches_text"] = GroupMatches(out.matches);
    } else {
      Json list = Json::array();
      for (const SearchLine& m : out.matches) {
        list.push_back(Json{{"path", m.path}, {"line", m.line}, {"content", m.content}});
      }
      body["matches"] = std::move(list);
    }
  }
  if (!out.files.empty()) body["files"] = out.files;
  if (!out.counts.empty()) {
    Json counts = Json::object();
    for (const auto& [file, n] : out.counts) counts[file] = n;
    body["counts"] = std::move(counts);
  }
  if (out.truncated) {
    body["truncated"] = true;
    body["total_count_is_lower_bound"] = true;
  }
  if (!out.limit_reason.empty()) body["limit_reason"] = out.limit_reason;
  if (req.target == SearchTarget::kContent && req.output_mode != SearchOutputMode::kCount &&
      PatternMatchesNewline(pattern)) {
    body["warning"] = kMultilineWarning;
  }
  if (out.omitted > 0) body["_omitted"] = std::to_string(out.omitted) + std::string(kOmittedSuffix);
  if (consecutive >= 3) {
    body["_warning"] = "You have run this exact search " + std::to_string(consecutive) +
                       " times consecutively. The results have not changed. Use the information "
                       "you already have.";
  }

  std::string text = DumpJson(body);
  if (out.truncated) {
    text += "\n\n[Hint: Results truncated. Use offset=" + std::to_string(offset + limit) +
            " to see more, or narrow with a more specific pattern or file_glob.]";
  }
  return ToolResult::Text(std::move(text));
}

// The original also accepts target "grep" and "find"; they are rewritten before validation.
void NormalizeTargetAlias(Json& args) {
  auto it = args.find("target");
  if (it == args.end() || !it->is_string()) return;
  if (*it == "grep") *it = "content";
  if (*it == "find") *it = "files";
}

ToolSpec MakeSearchFilesSpec() {
  ToolSpec spec;
  spec.name = "search_files";
  spec.toolset = "file";
  spec.schema = kSearchFilesSchema;
  spec.handler = SearchFiles;
  spec.emoji = "\xF0\x9F\x94\x8D";  // "🔍"
  spec.max_result_chars = 100'000;
  spec.parallel = ParallelClass::kPathScoped;
  spec.path_args = {"path"};
  spec.counts_as_read = true;
  spec.path_access = PathAccess::kRead;
  spec.annotations.read_only = true;
  spec.annotations.idempotent = true;
  spec.normalize_args = NormalizeTargetAlias;
  return spec;
}

}  // namespace
}  // namespace talaria::tools

TALARIA_TOOL(SearchFiles, talaria::tools::MakeSearchFilesSpec());
