// V4A patches (the codex / cline format) for `patch` mode "patch": parsing, and planning every
// operation against an in-memory overlay of the files, so a patch is validated whole before
// anything is written.
//
//   *** Begin Patch
//   *** Update File: src/app.py
//   @@ def greet @@            optional context hint (narrows where the hunk applies)
//    context line              (space prefix; an empty line counts as an empty context line)
//   -removed line
//   +added line
//   *** End of File            the hunk must end at the end of the file
//   *** Add File: new.py       followed only by '+' lines
//   *** Delete File: old.py
//   *** Move File: a.py -> b.py
//   *** End Patch
//
// Hunks are located with the same matcher chain as replace mode (fuzzy_match.h), with the same
// refusal of approximate matches below kMinApplySimilarity; a hunk found in several places is
// disambiguated only by its context hint (the first match after the hint's unique line), never
// guessed. Addition-only hunks need a unique hint or *** End of File.
// Pure functions, no I/O except through the caller's reader; thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/editing/fuzzy_match.h"

namespace talaria::editing {

enum class V4aOpKind : unsigned char { kUpdate, kAdd, kDelete, kMove };

struct V4aHunkLine {
  char prefix = ' ';  // ' ' context, '-' removed, '+' added
  std::string text;
};

struct V4aHunk {
  std::string context_hint;  // from "@@ hint @@"; empty when none
  std::vector<V4aHunkLine> lines;
  bool end_of_file = false;  // "*** End of File" closed this hunk
};

struct V4aOperation {
  V4aOpKind kind = V4aOpKind::kUpdate;
  std::string path;
  std::string new_path;        // kMove only
  std::vector<V4aHunk> hunks;  // kUpdate: the hunks; kAdd: one hunk of '+' lines
};

// Parses a V4A patch. "*** Begin Patch"/"*** End Patch" may both be left out, but a Begin
// without its End is refused (a truncated patch must not half-apply). CRLF input is accepted.
// InvalidArgument "Parse error: ..." listing every problem: unknown "***" headers, "*** Move to:"
// (rejected with the Move File spelling to use), empty paths, ".." components or NUL bytes in
// paths, Update without hunks, Add lines without '+', content after Delete/Move, a patch without
// operations.
Result<std::vector<V4aOperation>> ParseV4aPatch(std::string_view patch);

// The current content of `path`: the text, std::nullopt when nothing exists there, or an error
// when that cannot be told (a directory, no permission). Called at most once per path.
using V4aReader = std::function<Result<std::optional<std::string>>(const std::string& path)>;

// One operation's effect, ready to be carried out.
struct V4aStep {
  V4aOpKind kind = V4aOpKind::kUpdate;
  std::string path;
  std::string new_path;               // kMove
  std::optional<std::string> before;  // content before the step; nullopt for kAdd
  std::optional<std::string> after;   // content written by kUpdate/kAdd; nullopt otherwise
  std::string diff;                   // unified diff of this step
};

// Where one hunk was applied.
struct V4aHunkMatch {
  std::string path;
  size_t hunk = 0;  // 1-based within its operation
  MatchStrategy strategy = MatchStrategy::kExact;
  double similarity = 1.0;
  bool already_applied = false;  // skipped: its result is already in the file
};

struct V4aPlan {
  std::vector<V4aStep> steps;  // in patch order
  std::vector<V4aHunkMatch> hunks;
  std::vector<std::string> notes;  // adjustments made (re-indent, CRLF...) and skipped hunks
  // The weakest hunk match (exact / 1.0 when every hunk matched exactly or none needed it).
  MatchStrategy strategy = MatchStrategy::kExact;
  double similarity = 1.0;
  std::vector<std::string> files_modified;  // updated paths, then "a -> b" for moves
  std::vector<std::string> files_created;
  std::vector<std::string> files_deleted;
  std::string diff;  // every step's diff, joined
};

// Simulates `ops` in order on an overlay seeded by `read` and returns the plan. Validates
// everything before returning: Update/Delete/Move sources must exist, Add targets and Move
// destinations must be free (a path deleted or moved away earlier in the patch is free), every
// hunk must be located (see the header comment), and the patch must change something.
// Errors: FailedPrecondition "Patch validation failed (no files were modified):\n  • ..." with
// one bullet per problem (continuation lines indented).
Result<V4aPlan> PlanV4aPatch(const std::vector<V4aOperation>& ops, const V4aReader& read);

}  // namespace talaria::editing
