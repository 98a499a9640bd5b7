// Batch planner: cuts one model turn's ordered tool calls into segments the executor runs one
// after another: parallel runs of calls that may run at the same time, and sequential stretches.
// Calls are never reordered; a segment holds consecutive call indices.
//
// Admission of one call (decided from its ToolEntry, so plugins and MCP tools declare their own):
//   - barrier (sequential): unknown tool, ParallelClass::kNever, arguments that are not a JSON
//     object, a path argument that is not a string, arguments whose paths the tool's
//     call_paths() cannot tell (an unreadable patch), or a path-scoped call with no path at all;
//   - kSafe: joins the current parallel run;
//   - kPathScoped: joins the current run unless one of its scopes overlaps (one canonical path is
//     a component-wise prefix of the other) a scope of a call already in the run and either side
//     writes; then the run ends and this call opens the next one. Reader/reader overlap is fine.
// Scopes come from the entry's call_paths() when it names them (a patch's files named inside its
// text), else from its path_args() (a missing argument takes its schema "default" when it has a
// string one, like a search's "."; an empty string is the cwd). Paths are canonicalised against the
// call's cwd: cwd-joined, lexically normalised, then the real path of the deepest existing ancestor
// plus the components that do not exist yet. Runs of fewer than 2 calls become sequential, and
// adjacent sequential stretches merge.
//
// The plan reflects the filesystem at planning time; it decides scheduling, not access (file
// tools still resolve every path through the Workspace when they run).
// Thread-safety: free functions over one registry snapshot; safe to call concurrently.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/core/registry.h"
#include "talaria/core/tool_entry.h"

namespace talaria {

// One call of a batch, as the model sent it. Views: they must outlive the planning call.
struct PlannedCall {
  std::string_view name;
  std::string_view raw_args;  // the model's JSON text; empty or blank means {}
  std::string_view cwd;       // where the call runs; empty = the process's working directory
};

struct PlannedSegment {
  bool parallel = false;      // true: a run of >= 2 calls that may run at the same time
  std::vector<size_t> calls;  // consecutive indices into the planned batch, ascending
};

// How the planner admitted one call, for `talaria batch --plan` and for debugging.
enum class Admission : unsigned char {
  kBarrier,     // runs alone, in order (see `reason`)
  kSafe,        // ParallelClass::kSafe
  kPathScoped,  // ParallelClass::kPathScoped with the scopes below
};

struct PathScope {
  std::string path;  // canonical: absolute, normalised, symlinks of existing ancestors resolved
  PathAccess access = PathAccess::kRead;
};

struct CallAdmission {
  Admission admission = Admission::kBarrier;
  std::string reason;             // why a barrier ("unknown tool", ...); empty otherwise
  std::vector<PathScope> scopes;  // kPathScoped only
};

struct BatchPlan {
  std::vector<PlannedSegment> segments;  // cover every call exactly once, in order
  std::vector<CallAdmission> calls;      // one per planned call, same order
};

// The segments of `calls` (empty input: no segments). Never fails: every call the planner cannot
// judge becomes a barrier. Reads the registry once (one snapshot) and the filesystem (lstat and
// realpath on the scoped paths' ancestors).
std::vector<PlannedSegment> PlanBatch(std::span<const PlannedCall> calls, const Registry& registry);

// PlanBatch plus how each call was admitted.
BatchPlan PlanBatchDetailed(std::span<const PlannedCall> calls, const Registry& registry);

// How the planner admits one call whose arguments are already parsed: what PlanBatchDetailed
// records per call, for a front end that runs calls as they arrive (the MCP server, through a
// ConflictGate) rather than a batch at once.
CallAdmission AdmitCall(const ToolEntry& entry, const Json& args, std::string_view cwd);

// Whether two admitted calls must not run at the same time: a barrier conflicts with every call;
// path-scoped calls conflict when one's canonical path is a component-wise prefix of the other's
// and either side writes; safe calls conflict with barriers only. The rule the batch planner
// splits runs by.
bool AdmissionsConflict(const CallAdmission& a, const CallAdmission& b);

// The plan as JSON for `talaria batch --plan`: an array with one object per segment,
//   {"parallel": bool, "calls": [indices], "tools": [names],
//    "admissions": [{"class": "barrier"|"safe"|"path_scoped", "reason"?: text,
//                    "scopes"?: [{"path": p, "access": "read"|"write"}]}]}
// ("admissions" parallel to "calls"). REQUIRES: `plan` was planned from `calls`.
Json PlanToJson(const BatchPlan& plan, std::span<const PlannedCall> calls);

// The plan as human-readable lines, one per segment:
//   "1 parallel   #0 read_file, #1 search_files"
//   "2 sequential #2 terminal (never parallel)"
// REQUIRES: `plan` was planned from `calls`.
std::string FormatPlan(const BatchPlan& plan, std::span<const PlannedCall> calls);

}  // namespace talaria
