// patch: targeted edits of files in the workspace — mode "replace" (old_string -> new_string
// through the fuzzy matcher chain) or mode "patch" (a V4A multi-file patch, validated whole
// before any file changes).
//
// Every read and write goes through the session's Workspace, under its per-path locks (all the
// paths of a multi-file patch, taken together in sorted order); writes are atomic, every
// mutation is audited, and the result names the matcher that located each edit.
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "talaria/base/sha256.h"
#include "talaria/checkpoints/checkpoint_manager.h"
#include "talaria/core/tool_registration.h"
#include "talaria/editing/fuzzy_match.h"
#include "talaria/editing/unified_diff.h"
#include "talaria/editing/v4a.h"
#include "talaria/lint/lint.h"
#include "tools/files/file_support.h"
#include "tools/files/file_tracker.h"

namespace talaria::tools {
// The editing engines this tool is a thin front for.
using namespace ::talaria::editing;  // NOLINT(google-build-using-namespace)
namespace {

constexpr std::string_view kPatchSchema = R"json({
  "name": "patch",
  "description": "Edit files in place. mode 'replace' (default): find old_string in the file at path and put new_string there; old_string must identify one place (add surrounding lines to make it unique) unless replace_all is true. Small differences in whitespace, indentation, escaping or typographic quotes are tolerated; the result names the matcher used and its similarity, and approximate matches that are not close enough are refused with the nearest candidate shown. mode 'patch': apply a V4A patch that can update, add, delete and move several files at once; it is checked as a whole and nothing is written unless every part applies. Results include a unified diff and syntax problems the edit introduced.",
  "parameters": {
    "type": "object",
    "properties": {
      "mode": {
        "type": "string",
        "enum": ["replace", "patch"],
        "default": "replace",
        "description": "'replace' for one find-and-replace edit in one file; 'patch' for a V4A patch."
      },
      "path": {
        "type": "string",
        "description": "replace mode: the file to edit, relative to the working directory or absolute inside the workspace."
      },
      "old_string": {
        "type": "string",
        "description": "replace mode: the exact text to replace, copied from the file with enough surrounding lines to be unique."
      },
      "new_string": {
        "type": "string",
        "description": "replace mode: the replacement text; an empty string deletes old_string."
      },
      "replace_all": {
        "type": "boolean",
        "default": false,
        "description": "replace mode: replace every occurrence instead of requiring exactly one."
      },
      "patch": {
        "type": "string",
        "description": "patch mode: the V4A patch text:\n*** Begin Patch\n*** Update File: path/to/file\n@@ optional context hint, e.g. a function signature @@\n context line (leading space)\n-removed line\n+added line\n*** Add File: path/to/new_file\n+content line\n*** Delete File: path/to/old_file\n*** Move File: old/path -> new/path\n*** End Patch\nPut '*** End of File' after a hunk that must end at the end of the file."
      }
    }
  }
})json";

// Files larger than this are not edited (matching and diffing hold several copies in memory).
constexpr size_t kMaxPatchFileBytes = size_t{32} << 20;
constexpr std::string_view kPatchBom = "\xEF\xBB\xBF";
constexpr std::string_view kTool = "patch";
constexpr std::string_view kAlreadyAppliedNote =
    "File already contains the target text (every change in this patch is already present), so "
    "nothing was written; do not re-send this patch.";

ToolResult Failure(std::string_view message, std::string error_type = "patch_failed",
                   std::string_view hint = {}) {
  Json body = Json::object();
  body["success"] = false;
  body["error"] = std::string(message);
  if (!hint.empty()) body["_hint"] = std::string(hint);
  return ToolResult::ErrorJson(std::move(body), CallStatus::kError, std::move(error_type));
}

ToolResult FailureFromStatus(const Status& status) {
  return Failure(status.message(), std::string(StatusCodeName(status.code())));
}

Json MatchJson(MatchStrategy strategy, double similarity) {
  Json m = Json::object();
  m["strategy"] = std::string(MatchStrategyName(strategy));
  m["similarity"] = std::round(similarity * 1000.0) / 1000.0;
  return m;
}

// A file's text as the matchers see it: the UTF-8 BOM set aside (and restored on write).
struct FileText {
  std::string bom;
  std::string text;
  safety::FileInfo info;

  std::string WithBom(std::string_view content) const { return bom + std::string(content); }
};

// nullopt when nothing exists at `path`.
Result<std::optional<FileText>> ReadForPatch(const safety::Workspace& ws, const std::string& path) {
  FileText file;
  auto content = ws.ReadAll(path, kMaxPatchFileBytes, &file.info);
  if (!content) {
    if (content.error().code() == StatusCode::kNotFound) return std::optional<FileText>();
    if (content.error().code() == StatusCode::kResourceExhausted) {
      return Err(ResourceExhaustedError(
          path + " is larger than " + std::to_string(kMaxPatchFileBytes >> 20) +
          " MiB; patch does not edit files that large (use write_file or the terminal)"));
    }
    return Err(content.error());
  }
  if (content->find('\0') != std::string::npos) {
    return Err(InvalidArgumentError(path + " is a binary file (it contains NUL bytes); patch edits "
                                           "text files only"));
  }
  if (std::string_view(*content).starts_with(kPatchBom)) {
    file.bom = std::string(kPatchBom);
    content->erase(0, kPatchBom.size());
  }
  file.text = std::move(*content);
  return std::optional<FileText>(std::move(file));
}

// The fail-closed syntax gate of write_file, as a delta: an edit may not turn a JSON/YAML/TOML
// file that parses into one that does not (a file already broken may still be edited; the lint
// delta then reports what the edit changed).
Status GateSyntax(const std::string& path, std::optional<std::string_view> before,
                  std::string_view after) {
  Status s = CheckSyntaxBeforeWrite(path, after);
  if (s.ok()) return s;
  if (before && !CheckSyntaxBeforeWrite(path, *before).ok()) return Status::Ok();
  return s;
}

std::optional<std::string> ShaOf(const std::optional<std::string>& content) {
  if (!content) return std::nullopt;
  return Sha256Hex(*content);
}

// "_warning" text when the file changed since this task last read (or wrote) it.
std::string StaleWarning(const ToolContext& ctx, const std::string& display,
                         const safety::FileInfo& info) {
  FileTracker* tracker = TrackerOf(ctx);
  if (tracker == nullptr) return {};
  auto seen = tracker->LastSeen(ctx.task_id, display);
  if (!seen || *seen == FileTracker::Cookie(info)) return {};
  return display +
         " was modified since you last read it; the edit was applied to its current "
         "content.";
}

// Reads back what was written: what is on disk must be what was meant.
Status VerifyWritten(const safety::Workspace& ws, const std::string& path,
                     std::string_view expected) {
  auto back = ws.ReadAll(path, expected.size() + 1);
  if (!back) return back.error();
  if (*back != expected) {
    return InternalError("Post-write verification failed for " + path +
                         ": the file differs from the content written");
  }
  return Status::Ok();
}

std::optional<std::string> PatchStringArg(const Json& args, const char* name) {
  auto it = args.find(name);
  if (it == args.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// ---------------------------------------------------------------------------------------------
// mode "replace"

// The hint after the `misses`-th failure in a row to find old_string in `display`: gentle at
// first, then (from the 3rd, as the original) a firm redirect away from guessing.
std::string MissHint(int misses, std::string_view display) {
  if (misses < 3) {
    return "Re-read the file with read_file and copy old_string exactly (or use write_file to "
           "rewrite "
           "the file).";
  }
  return "This is failure #" + std::to_string(misses) + " in a row to find old_string in " +
         std::string(display) +
         ". Stop retrying with remembered text: read the exact region again with read_file, copy a "
         "longer, "
         "unique anchor verbatim (whitespace included), or rewrite the whole file with write_file.";
}

ToolResult Replace(const Json& args, ToolContext& ctx, const safety::Workspace& ws) {
  std::optional<std::string> path = PatchStringArg(args, "path");
  std::optional<std::string> old_string = PatchStringArg(args, "old_string");
  std::optional<std::string> new_string = PatchStringArg(args, "new_string");
  if (!path || path->empty())
    return Failure("path is required for mode 'replace'", "invalid_arguments");
  if (!old_string) return Failure("old_string is required for mode 'replace'", "invalid_arguments");
  if (!new_string) {
    return Failure(
        "new_string is required for mode 'replace' (use an empty string to delete "
        "old_string)",
        "invalid_arguments");
  }
  const ReplaceAll replace_all =
      args.value("replace_all", false) ? ReplaceAll::kYes : ReplaceAll::kNo;

  if (Status s = ws.CheckWritable(*path); !s.ok()) return FailureFromStatus(s);
  auto resolved = ws.Resolve(*path);
  if (!resolved) return FailureFromStatus(resolved.error());
  const std::string display = resolved->display;
  if (auto* checkpoints = CheckpointsOf(ctx)) checkpoints->BeforeFileMutation(display, "patch");
  safety::PathLock lock = ws.LockPaths({display});

  auto read = ReadForPatch(ws, *path);
  if (!read) return FailureFromStatus(read.error());
  if (!*read) {
    return Failure("File not found: " + *path, "NotFound",
                   "Check the path with search_files, or create the file with write_file.");
  }
  const FileText& file = **read;

  FileTracker* tracker = TrackerOf(ctx);
  auto outcome = FuzzyReplace(file.text, *old_string, *new_string, replace_all);
  if (!outcome) {
    std::string hint;
    if (outcome.error().code() == StatusCode::kNotFound) {
      const int misses = tracker != nullptr ? tracker->RecordPatchMiss(ctx.task_id, display) : 1;
      hint = MissHint(misses, display);
    }
    return Failure(outcome.error().message(), std::string(StatusCodeName(outcome.error().code())),
                   hint);
  }
  if (tracker != nullptr) tracker->ClearPatchMisses(ctx.task_id, display);
  if (outcome->no_change) {
    Json body = Json::object();
    body["success"] = true;
    body["no_change"] = true;
    body["note"] =
        outcome->notes.empty() ? std::string(kAlreadyAppliedNote) : outcome->notes.front();
    body["resolved_path"] = display;
    return ToolResult::FromJson(body);
  }

  const std::string before = file.WithBom(file.text);
  const std::string after = file.WithBom(outcome->content);
  if (Status s = GateSyntax(*path, before, after); !s.ok()) return FailureFromStatus(s);
  if (ctx.cancelled())
    return Failure("cancelled before writing; the file was not modified", "cancelled");

  const std::string warning = StaleWarning(ctx, display, file.info);
  auto written = ws.WriteAtomic(*path, after);
  if (!written) {
    AuditMutation(ctx, kTool, display, 0, ShaOf(before), std::nullopt,
                  "error: " + std::string(StatusCodeName(written.error().code())));
    return FailureFromStatus(written.error());
  }
  AuditMutation(ctx, kTool, written->resolved_path, written->bytes_written, ShaOf(before),
                ShaOf(after), "ok");
  if (tracker != nullptr)
    tracker->NoteWrite(ctx.task_id, display, FileTracker::Cookie(written->after));
  if (Status s = VerifyWritten(ws, *path, after); !s.ok()) return FailureFromStatus(s);

  Json body = Json::object();
  body["success"] = true;
  body["diff"] = UnifiedFileDiff(*path, before, after);
  body["files_modified"] = Json::array({written->resolved_path});
  body["lint"] = LintDelta(*path, std::optional<std::string_view>(before), after).ToJson();
  body["resolved_path"] = written->resolved_path;
  body["match"] = MatchJson(outcome->strategy, outcome->similarity);
  if (outcome->replacements > 1) body["replacements"] = outcome->replacements;
  if (!outcome->notes.empty()) body["notes"] = outcome->notes;
  if (!warning.empty()) body["_warning"] = warning;
  return ToolResult::FromJson(body);
}

// ---------------------------------------------------------------------------------------------
// mode "patch"

class PatchRun {
 public:
  PatchRun(ToolContext& ctx, const safety::Workspace& ws) : ctx_(ctx), ws_(ws) {}

  ToolResult Run(const std::string& patch_text) {
    auto parsed = ParseV4aPatch(patch_text);
    if (!parsed) return Failure(parsed.error().message(), "parse_error");
    std::vector<V4aOperation> ops = std::move(*parsed);

    // Resolve every path to its display form (one key per file, whatever the spelling) and
    // check that each target may be written, before reading anything.
    std::vector<std::string> problems;
    auto canonical = [&](std::string& path) {
      auto resolved = ws_.Resolve(path);
      if (!resolved) {
        problems.push_back(path + ": " + resolved.error().message());
        return;
      }
      if (Status s = ws_.CheckWritable(path); !s.ok()) {
        problems.push_back(path + ": " + s.message());
        return;
      }
      labels_.emplace(resolved->display, path);
      path = resolved->display;
    };
    for (V4aOperation& op : ops) {
      canonical(op.path);
      if (op.kind == V4aOpKind::kMove) canonical(op.new_path);
    }
    if (!problems.empty()) return ValidationFailure(problems);

    std::vector<std::string> keys;
    for (const V4aOperation& op : ops) {
      keys.push_back(op.path);
      if (op.kind == V4aOpKind::kMove) keys.push_back(op.new_path);
    }
    if (auto* checkpoints = CheckpointsOf(ctx_)) {
      for (const std::string& key : keys) checkpoints->BeforeFileMutation(key, "patch");
    }
    safety::PathLock lock = ws_.LockPaths(keys);

    V4aReader reader = [this](const std::string& path) -> Result<std::optional<std::string>> {
      auto read = ReadForPatch(ws_, path);
      if (!read) return Err(read.error());
      if (!*read) return std::optional<std::string>();
      boms_[path] = (*read)->bom;
      infos_[path] = (*read)->info;
      return std::optional<std::string>((*read)->text);
    };
    auto plan = PlanV4aPatch(ops, reader);
    if (!plan) return Failure(plan.error().message(), "validation_failed");

    // A moved file keeps its byte-order mark through later edits at its new path.
    for (const V4aStep& step : plan->steps) {
      if (step.kind == V4aOpKind::kMove) boms_[step.new_path] = Bom(step.path);
    }

    if (plan->steps.empty()) {
      Json body = Json::object();
      body["success"] = true;
      body["no_change"] = true;
      body["note"] = std::string(kAlreadyAppliedNote);
      return ToolResult::FromJson(body);
    }

    // The syntax gate for every file the patch writes, before the first write.
    for (const V4aStep& step : plan->steps) {
      if (!step.after) continue;
      std::optional<std::string_view> before;
      if (step.before) before = *step.before;
      if (Status s = GateSyntax(step.path, before, *step.after); !s.ok()) {
        problems.push_back(Label(step.path) + ": " + s.message());
      }
    }
    if (!problems.empty()) return ValidationFailure(problems);
    if (ctx_.cancelled()) {
      return Failure("cancelled before writing; no files were modified", "cancelled");
    }

    std::vector<std::string> warnings;
    for (const V4aStep& step : plan->steps) {
      if (step.kind != V4aOpKind::kUpdate) continue;
      auto info = infos_.find(step.path);
      if (info == infos_.end()) continue;
      std::string w = StaleWarning(ctx_, step.path, info->second);
      if (!w.empty() && std::find(warnings.begin(), warnings.end(), w) == warnings.end()) {
        warnings.push_back(std::move(w));
      }
    }

    for (const V4aStep& step : plan->steps) {
      if (Status s = Execute(step); !s.ok()) return ApplyFailure(step, s);
    }

    Json body = Json::object();
    body["success"] = true;
    std::string diff;
    Json lint = Json::object();
    for (const V4aStep& step : plan->steps) {
      diff += Diff(step);
      if (step.after && HasLinter(step.path)) {
        std::optional<std::string_view> before;
        std::string before_text, after_text = Bom(step.path) + *step.after;
        if (step.before) {
          before_text = Bom(step.path) + *step.before;
          before = before_text;
        }
        lint[step.path] = LintDelta(step.path, before, after_text).ToJson();
      }
    }
    body["diff"] = diff;
    body["files_modified"] = plan->files_modified;
    if (!plan->files_created.empty()) body["files_created"] = plan->files_created;
    if (!plan->files_deleted.empty()) body["files_deleted"] = plan->files_deleted;
    if (!lint.empty()) body["lint"] = lint;
    std::set<std::string> touched;
    for (const V4aStep& step : plan->steps) {
      touched.insert(step.path);
      if (!step.new_path.empty()) touched.insert(step.new_path);
    }
    if (touched.size() == 1) body["resolved_path"] = *touched.begin();
    body["match"] = MatchJson(plan->strategy, plan->similarity);
    Json hunks = Json::array();
    for (const V4aHunkMatch& h : plan->hunks) {
      Json entry = Json::object();
      entry["path"] = h.path;
      entry["hunk"] = h.hunk;
      entry["strategy"] = std::string(MatchStrategyName(h.strategy));
      entry["similarity"] = std::round(h.similarity * 1000.0) / 1000.0;
      if (h.already_applied) entry["already_applied"] = true;
      hunks.push_back(std::move(entry));
    }
    if (!hunks.empty()) body["hunks"] = std::move(hunks);
    if (!plan->notes.empty()) body["notes"] = plan->notes;
    if (!warnings.empty()) {
      std::string joined;
      for (const auto& w : warnings) joined += (joined.empty() ? "" : " ") + w;
      body["_warning"] = joined;
    }
    return ToolResult::FromJson(body);
  }

 private:
  std::string Label(const std::string& display) const {
    auto it = labels_.find(display);
    return it == labels_.end() ? display : it->second;
  }
  std::string Bom(const std::string& display) const {
    auto it = boms_.find(display);
    return it == boms_.end() ? std::string() : it->second;
  }

  // The step's diff with the paths as the patch spelled them.
  std::string Diff(const V4aStep& step) const {
    const std::string label = Label(step.path);
    switch (step.kind) {
      case V4aOpKind::kUpdate:
        return UnifiedFileDiff(label, *step.before, *step.after);
      case V4aOpKind::kAdd: {
        std::string d = UnifiedDiff("", *step.after, "/dev/null", "b/" + label);
        return d.empty() ? "--- /dev/null\n+++ b/" + label + "\n" : d;
      }
      case V4aOpKind::kDelete: {
        std::string d = UnifiedDiff(*step.before, "", "a/" + label, "/dev/null");
        return d.empty() ? "--- a/" + label + "\n+++ /dev/null\n" : d;
      }
      case V4aOpKind::kMove:
        return "# Moved: " + label + " -> " + Label(step.new_path) + "\n";
    }
    return {};
  }

  ToolResult ValidationFailure(const std::vector<std::string>& problems) {
    std::string message = "Patch validation failed (no files were modified):";
    for (const auto& p : problems) message += "\n  \xE2\x80\xA2 " + p;
    return Failure(message, "validation_failed");
  }

  Status Execute(const V4aStep& step) {
    const std::string& path = step.path;
    switch (step.kind) {
      case V4aOpKind::kUpdate:
      case V4aOpKind::kAdd: {
        const std::string content = Bom(path) + *step.after;
        std::optional<std::string> before;
        if (step.before) before = Bom(path) + *step.before;
        if (step.kind == V4aOpKind::kAdd) {
          // Validation saw the path free; refuse to clobber something that appeared since.
          if (auto st = ws_.Stat(path); st || st.error().code() != StatusCode::kNotFound) {
            return AlreadyExistsError(Label(path) +
                                      ": a file appeared at this path after "
                                      "validation; not overwriting it");
          }
        }
        auto written = ws_.WriteAtomic(path, content);
        if (!written) {
          AuditMutation(ctx_, kTool, path, 0, ShaOf(before), std::nullopt,
                        "error: " + std::string(StatusCodeName(written.error().code())));
          return written.error();
        }
        AuditMutation(ctx_, kTool, path, written->bytes_written, ShaOf(before), ShaOf(content),
                      "ok");
        done_.push_back(&step);
        if (FileTracker* tracker = TrackerOf(ctx_)) {
          tracker->NoteWrite(ctx_.task_id, path, FileTracker::Cookie(written->after));
        }
        return VerifyWritten(ws_, path, content);
      }
      case V4aOpKind::kDelete: {
        const std::optional<std::string> before = Bom(path) + *step.before;
        if (Status s = ws_.Remove(path); !s.ok()) {
          AuditMutation(ctx_, kTool, path, 0, ShaOf(before), std::nullopt,
                        "error: " + std::string(StatusCodeName(s.code())));
          return s;
        }
        AuditMutation(ctx_, kTool, path, 0, ShaOf(before), std::nullopt, "ok: deleted");
        done_.push_back(&step);
        return Status::Ok();
      }
      case V4aOpKind::kMove: {
        const std::optional<std::string> content = Bom(path) + *step.before;
        if (Status s = ws_.Rename(path, step.new_path); !s.ok()) {
          AuditMutation(ctx_, kTool, path, 0, ShaOf(content), std::nullopt,
                        "error: " + std::string(StatusCodeName(s.code())));
          return s;
        }
        AuditMutation(ctx_, kTool, path, 0, ShaOf(content), std::nullopt,
                      "ok: moved to " + step.new_path);
        AuditMutation(ctx_, kTool, step.new_path, content->size(), std::nullopt, ShaOf(content),
                      "ok: moved from " + path);
        done_.push_back(&step);
        return Status::Ok();
      }
    }
    return InternalError("unknown patch step");
  }

  // Undoes the carried-out steps, newest first. Returns what could not be undone.
  std::vector<std::string> RollBack() {
    std::vector<std::string> failures;
    for (auto it = done_.rbegin(); it != done_.rend(); ++it) {
      const V4aStep& step = **it;
      Status s;
      switch (step.kind) {
        case V4aOpKind::kUpdate:
        case V4aOpKind::kDelete:
          if (auto w = ws_.WriteAtomic(step.path, Bom(step.path) + *step.before); !w) s = w.error();
          break;
        case V4aOpKind::kAdd:
          s = ws_.Remove(step.path);
          break;
        case V4aOpKind::kMove:
          s = ws_.Rename(step.new_path, step.path);
          break;
      }
      AuditMutation(ctx_, kTool, step.path, 0, std::nullopt, std::nullopt,
                    s.ok() ? "ok: rolled back" : "error: rollback failed");
      if (!s.ok()) failures.push_back(Label(step.path) + ": " + s.message());
    }
    done_.clear();
    return failures;
  }

  ToolResult ApplyFailure(const V4aStep& step, const Status& status) {
    const size_t applied = done_.size();
    std::vector<std::string> failures = RollBack();
    std::string message =
        "Applying the patch failed at " + Label(step.path) + ": " + status.message();
    if (applied == 0) {
      message += "\nNo files were modified.";
    } else if (failures.empty()) {
      message += "\nThe " + std::to_string(applied) +
                 " change(s) made before the failure were rolled back; no files were modified.";
    } else {
      message += "\nRolling back failed for (state may be inconsistent; check with git diff):";
      for (const auto& f : failures) message += "\n  \xE2\x80\xA2 " + f;
    }
    return Failure(message, "apply_failed");
  }

  ToolContext& ctx_;
  const safety::Workspace& ws_;
  std::map<std::string, std::string> labels_;  // display path -> as the patch spelled it
  std::map<std::string, std::string> boms_;
  std::map<std::string, safety::FileInfo> infos_;
  std::vector<const V4aStep*> done_;  // carried out so far, for rollback
};

ToolResult PatchHandler(const Json& args, ToolContext& ctx) {
  const safety::Workspace* ws = WorkspaceOf(ctx);
  if (ws == nullptr) return Failure("no workspace is attached to this session", "no_workspace");
  const std::string mode = args.value("mode", std::string("replace"));
  if (mode == "replace") return Replace(args, ctx, *ws);
  if (mode == "patch") {
    std::optional<std::string> patch = PatchStringArg(args, "patch");
    if (!patch || patch->empty()) {
      return Failure("patch is required for mode 'patch'", "invalid_arguments");
    }
    return PatchRun(ctx, *ws).Run(*patch);
  }
  return Failure("unknown mode '" + mode + "'; use 'replace' or 'patch'", "invalid_arguments");
}

// In mode "patch" the files are named inside the V4A text, not in `path`: the batch planner
// scopes the call by what the same parser the handler uses reads there. A patch it cannot
// parse touches nothing, so any error only makes the call run alone.
Result<std::optional<std::vector<std::string>>> PatchCallPaths(const Json& args) {
  auto mode = args.find("mode");
  if (mode == args.end()) return std::nullopt;
  if (!mode->is_string()) return Err(InvalidArgumentError("mode is not a string"));
  if (mode->get_ref<const std::string&>() != "patch") return std::nullopt;
  auto patch = args.find("patch");
  if (patch == args.end() || !patch->is_string()) {
    return Err(InvalidArgumentError("patch mode without a patch text"));
  }
  Result<std::vector<V4aOperation>> ops = ParseV4aPatch(patch->get_ref<const std::string&>());
  if (!ops) return Err(InvalidArgumentError("unreadable V4A patch: " + ops.error().message()));
  std::vector<std::string> paths;
  for (const V4aOperation& op : *ops) {
    paths.push_back(op.path);
    if (op.kind == V4aOpKind::kMove) paths.push_back(op.new_path);
  }
  return paths;
}

ToolSpec MakePatchSpec() {
  ToolSpec spec;
  spec.name = "patch";
  spec.toolset = "file";
  spec.schema = kPatchSchema;
  spec.handler = PatchHandler;
  spec.emoji = "\xF0\x9F\xA9\xB9";  // "🩹"
  spec.max_result_chars = 100'000;
  spec.parallel = ParallelClass::kPathScoped;
  spec.path_args = {"path"};
  spec.path_access = PathAccess::kWrite;
  spec.call_paths = PatchCallPaths;
  spec.annotations.destructive = true;
  return spec;
}

}  // namespace
}  // namespace talaria::tools

TALARIA_TOOL(Patch, talaria::tools::MakePatchSpec());
