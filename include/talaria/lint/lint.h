// Post-write syntax lint: in-process checks by file type and the "delta" that reports only the
// errors an edit introduced (reference: hermes-tools.md §1.14, tools/file_operations_lint.py).
//
// Checks, chosen by the path's extension (case-insensitive):
//   .json         talaria's JSON grammar and nesting limit (ParseJson's), run through nlohmann's
//                 SAX interface so no DOM is built; position of the first error;
//   .yaml / .yml  yaml-cpp event parse of every document (no node tree, aliases not expanded),
//                 plus duplicate keys within one mapping;
//   .toml         toml++, position of the first error;
//   .py           Debian's libpython3.11 embedded in this process (isolated, no `site`),
//                 compile(source, path, "exec") — the same checks as `python3 -m py_compile`.
// Any other extension is skipped. JSON, YAML and TOML text must also be UTF-8 without NUL bytes;
// Python text must not contain NUL bytes (its own codec rules apply, including coding cookies).
// A leading UTF-8 BOM is ignored. Input larger than kMaxLintBytes is skipped, not parsed.
//
// Nothing here throws, aborts or touches the file system: hostile content (deep nesting, huge
// files, invalid UTF-8, NUL bytes) yields an error report. The first Python lint in a process
// initialises the interpreter (~12 ms) and it stays up for the life of the process; an
// interpreter that fails to start turns every later Python lint into kSkipped.
// Thread-safety: thread-safe. JSON/YAML/TOML run fully in parallel; Python lints serialise on
// the GIL (a 300-line file compiles in ~2 ms, but CPython needs seconds for a multi-megabyte
// one, as `py_compile` does). The parsers recurse on deeply nested input; a caller with less
// than 4 MiB of stack left (a small-stack worker) has the parse moved to a helper thread with
// 16 MiB, so no stack size is required of callers.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/base/status.h"

namespace talaria {

// Content larger than this is not parsed (LintContent: kSkipped; the pre-write gate lets it
// through): parse time and memory grow with size, and no hand-written config is this big.
inline constexpr size_t kMaxLintBytes = size_t{64} << 20;

// One problem found in the content.
struct LintIssue {
  enum class Category : unsigned char {
    kSyntax,        // the content does not parse
    kDuplicateKey,  // parses, but a mapping repeats a key (YAML; the later value would win)
  };

  int line = 0;    // 1-based; 0 when the parser gave no position
  int column = 0;  // 1-based, in characters (code points); 0 when unknown
  // The parser's message without position, e.g. "'(' was never closed".
  std::string message;
  // The error class, named as the reference's Python linters name it: "JSONDecodeError",
  // "YAMLError", "TOMLDecodeError", "SyntaxError", "IndentationError", "TabError"; plus
  // "DuplicateKeyError" for kDuplicateKey and "UnicodeDecodeError" for the UTF-8/NUL pre-check.
  std::string kind;
  Category category = Category::kSyntax;

  // "SyntaxError: '(' was never closed (line 1, column 5)" — the position part is left out when
  // the line is unknown. One line of the report's `output`.
  std::string ToString() const;
};

struct LintReport {
  enum class Status : unsigned char {
    kOk,           // the content is clean
    kError,        // there are errors (for LintDelta: errors this edit introduced)
    kSkipped,      // no check for this file type, or the content is too large; see `message`
    kPreexisting,  // LintDelta only: errors remain, but every one was already there before
  };

  Status status = Status::kOk;
  // The issues as text, one per line (empty when kOk/kSkipped). For a delta with new errors it
  // starts with "New lint errors introduced by this edit (pre-existing errors filtered out):".
  std::string output;
  // Why a lint was skipped, or the reference's note for kPreexisting; usually empty otherwise.
  std::string message;
  // kError: the errors reported (for a delta, only the new ones); kPreexisting: all of them.
  std::vector<LintIssue> issues;

  bool ok() const { return status == Status::kOk; }

  // The reference's lint dict, which write_file and patch return under "lint":
  //   kOk          {"status": "ok", "output": ""}
  //   kError       {"status": "error", "output": "..."}           (+ "message" when non-empty)
  //   kPreexisting {"status": "error", "output": "...", "message": "Pre-existing lint errors —
  //                 this edit didn't introduce new ones but the file is still broken."}
  //   kSkipped     {"status": "skipped", "message": "..."}
  // kPreexisting keeps the reference's wire shape (status "error" plus that message), so models
  // tuned on the original read it unchanged; C++ callers tell it apart by the enum.
  Json ToJson() const;
};

// The reference's note for LintReport::Status::kPreexisting.
inline constexpr std::string_view kPreexistingLintMessage =
    "Pre-existing lint errors \xE2\x80\x94 this edit didn't introduce new ones but the file is "
    "still broken.";
// First line of a delta report's output when the edit introduced errors.
inline constexpr std::string_view kNewLintErrorsHeader =
    "New lint errors introduced by this edit (pre-existing errors filtered out):";

// The check LintContent would run for `path` (its extension, lower-case, with the dot; Python's
// os.path.splitext rules, so ".bashrc" has none), or "" when there is none.
std::string LintExtension(std::string_view path);

// True when `path` has an in-process check (.json .yaml .yml .toml .py).
bool HasLinter(std::string_view path);

// Lints `content` as the type given by `path`'s extension ("src/app.py", "config.yaml"; only the
// extension matters and nothing is read from disk). Returns kOk, kError (issues, in file order,
// at most 100) or kSkipped (message says why); never kPreexisting.
LintReport LintContent(std::string_view path, std::string_view content);

// The post-write delta. Lints `new_content`; when that finds errors and `old_content` is known
// and lints with errors too, the old errors are carried through a line diff of the two contents
// (common prefix/suffix, then Myers) and a new error counts as pre-existing when an old error
// with the same kind and message lands on its line — so an error that merely moved with
// inserted or deleted lines is not reported as new. Errors on lines the edit changed are new.
// Returns kOk, kSkipped, kError (only the introduced errors; output starts with
// kNewLintErrorsHeader unless the old content was clean, unknown or unlintable, in which case
// it is the plain LintContent report) or kPreexisting (output lists the remaining errors,
// message is kPreexistingLintMessage). Parsers that stop at the first error cannot see errors
// after it, so kPreexisting means "nothing new visible", as in the reference.
LintReport LintDelta(std::string_view path, std::optional<std::string_view> old_content,
                     std::string_view new_content);

// The fail-closed gate write_file runs before touching disk, for .json .yaml .yml .toml only.
// OK when the content parses, the type has no gate (.py and everything else: a broken file is
// reported after the write instead) or the content exceeds kMaxLintBytes. YAML duplicate keys
// do not block the write (they are a lint error, not a parse failure). Otherwise
// InvalidArgument with the reference's text:
//   "Refusing to write '<path>': candidate content fails .<ext> syntax validation (<first
//    error>). The file was NOT created or modified. Fix the content and retry."
Status CheckSyntaxBeforeWrite(std::string_view path, std::string_view content);

// Starts the embedded interpreter now instead of at the first Python lint (a server can call
// this at startup to keep the ~12 ms off its first write). Unavailable when it cannot start;
// the error repeats on every later call.
Status InitPythonLinter();

}  // namespace talaria
