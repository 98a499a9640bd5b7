// write_file: replace (or create) a whole file, atomically, through the workspace.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "talaria/base/sha256.h"
#include "talaria/checkpoints/checkpoint_manager.h"
#include "talaria/core/tool_registration.h"
#include "talaria/lint/lint.h"
#include "tools/files/file_support.h"
#include "tools/files/file_tracker.h"
#include "tools/files/read_output_guard.h"

namespace talaria::tools {
namespace {

constexpr std::string_view kWriteFileSchema = R"json({
  "name": "write_file",
  "description": "Write a file, replacing its whole content (parent directories are created). Use it for new files or complete rewrites; use patch for targeted edits. The write is atomic, an existing file keeps its line endings and byte-order mark, and JSON/YAML/TOML content that does not parse is refused before the file is touched. The result reports syntax problems the write introduced.",
  "parameters": {
    "type": "object",
    "properties": {
      "path": {"type": "string", "description": "File to write: relative to the working directory, or absolute inside the workspace."},
      "content": {"type": "string", "description": "The complete new content of the file."}
    },
    "required": ["path", "content"]
  }
})json";

constexpr size_t kMaxExistingBytes = 64 << 20;

bool UsesCrlf(std::string_view text) {
  size_t crlf = 0, lf = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') (i > 0 && text[i - 1] == '\r') ? ++crlf : ++lf;
  }
  return crlf > lf;
}

std::string ToCrlf(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 32);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' && (i == 0 || text[i - 1] != '\r')) out += '\r';
    out += text[i];
  }
  return out;
}

constexpr std::string_view kBom = "\xEF\xBB\xBF";

ToolResult WriteFile(const Json& args, ToolContext& ctx) {
  const safety::Workspace* ws = WorkspaceOf(ctx);
  if (ws == nullptr) return NoWorkspaceResult();
  const std::string path = args["path"].get<std::string>();
  std::string content = args["content"].get<std::string>();

  if (LooksLikeReadFileOutput(content)) {
    return ToolResult::Error("Refusing to write " + path +
                             ": the content looks like read_file output (it carries the 'N|' "
                             "line-number gutter). Write the "
                             "file's real content, without the line numbers.");
  }
  if (Status s = CheckSyntaxBeforeWrite(path, content); !s.ok()) return ErrorFromStatus(s);
  if (Status s = ws->CheckWritable(path); !s.ok()) return ErrorFromStatus(s);

  auto resolved = ws->Resolve(path);
  if (!resolved) return ErrorFromStatus(resolved.error());
  // The project as it was, before this turn's first change to it (checkpoints.enabled).
  if (auto* checkpoints = CheckpointsOf(ctx))
    checkpoints->BeforeFileMutation(resolved->display, "write_file");
  safety::PathLock lock = ws->LockPaths({resolved->display});

  // The old content, when readable: its conventions are kept and the lint delta needs it.
  safety::FileInfo before_info;
  std::optional<std::string> old;
  if (auto existing = ws->ReadAll(path, kMaxExistingBytes, &before_info))
    old = std::move(*existing);
  if (old) {
    if (UsesCrlf(*old) && !UsesCrlf(content)) content = ToCrlf(content);
    if (old->starts_with(kBom) && !content.starts_with(kBom)) content.insert(0, kBom);
  }

  std::string warning;
  if (FileTracker* tracker = TrackerOf(ctx); tracker != nullptr && old) {
    auto seen = tracker->LastSeen(ctx.task_id, resolved->display);
    if (seen && *seen != FileTracker::Cookie(before_info)) {
      warning = resolved->display +
                " was modified since you last read it; the write replaced those changes.";
    }
  }

  const std::optional<std::string> sha_before = old ? std::optional(Sha256Hex(*old)) : std::nullopt;
  const std::string sha_after = Sha256Hex(content);
  auto written = ws->WriteAtomic(path, content);
  if (!written) {
    AuditMutation(ctx, "write_file", resolved->display, 0, sha_before, std::nullopt,
                  "error: " + std::string(StatusCodeName(written.error().code())));
    return ErrorFromStatus(written.error());
  }
  AuditMutation(ctx, "write_file", written->resolved_path, written->bytes_written, sha_before,
                sha_after, "ok");
  if (FileTracker* tracker = TrackerOf(ctx))
    tracker->NoteWrite(ctx.task_id, resolved->display, FileTracker::Cookie(written->after));

  Json body = Json::object();
  body["bytes_written"] = written->bytes_written;
  body["dirs_created"] = written->dirs_created;
  // Read back: what is on disk must be what was meant (a full disk or a racing writer shows here).
  if (auto back = ws->ReadAll(path, content.size() + 1)) {
    if (Sha256Hex(*back) != sha_after) {
      return ToolResult::Error("Post-write verification failed for " + written->resolved_path +
                               ": the file's hash differs from the content written.");
    }
    body["verified"] = true;
  }
  body["lint"] =
      LintDelta(path, old ? std::optional<std::string_view>(*old) : std::nullopt, content).ToJson();
  body["resolved_path"] = written->resolved_path;
  body["files_modified"] = Json::array({written->resolved_path});
  if (!warning.empty()) body["_warning"] = warning;
  return ToolResult::FromJson(body);
}

ToolSpec MakeWriteFileSpec() {
  ToolSpec spec;
  spec.name = "write_file";
  spec.toolset = "file";
  spec.schema = kWriteFileSchema;
  spec.handler = WriteFile;
  spec.emoji = "\xE2\x9C\x8F\xEF\xB8\x8F";  // "✏️"
  spec.parallel = ParallelClass::kPathScoped;
  spec.path_args = {"path"};
  spec.path_access = PathAccess::kWrite;
  spec.annotations.destructive = true;
  spec.annotations.idempotent = true;
  return spec;
}

}  // namespace
}  // namespace talaria::tools

TALARIA_TOOL(WriteFile, talaria::tools::MakeWriteFileSpec());
