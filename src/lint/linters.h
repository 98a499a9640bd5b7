// The per-type checks behind LintContent. Each takes the content with any BOM already removed
// and within kMaxLintBytes, and returns the issues it found (empty = clean), in file order.
// Thread-safety: thread-safe (no shared state, except the Python interpreter behind the GIL).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/lint/lint.h"

namespace talaria::lint_internal {

// Most issues a report carries; the rest are dropped (a note says how many).
inline constexpr size_t kMaxIssues = 100;

// Position and message of the first NUL byte or invalid UTF-8 sequence, if any (kind
// "UnicodeDecodeError"). `check_utf8` false looks for NUL bytes only.
std::vector<LintIssue> CheckEncoding(std::string_view content, bool check_utf8);

// 1-based character column of the byte at 0-based `byte_offset_in_line` of `line` (1-based).
int CharColumn(std::string_view content, int line, int byte_offset_in_line);

// Readable, bounded message text: invalid UTF-8 and control characters escaped, at most
// `max_bytes` bytes (an ellipsis marks a cut).
std::string CleanMessage(std::string_view text, size_t max_bytes = 300);

std::vector<LintIssue> LintJsonText(std::string_view content);
std::vector<LintIssue> LintYamlText(std::string_view content);
std::vector<LintIssue> LintTomlText(std::string_view content, std::string_view path);

// Python: compile() in the embedded interpreter. Unavailable when the interpreter could not be
// started (the caller reports kSkipped).
Result<std::vector<LintIssue>> LintPythonText(std::string_view content, std::string_view path);
Status EnsurePython();
// The classes `content` defines as JSON text (python_outline.h); the source never runs.
Result<std::string> OutlinePythonJson(std::string_view content, std::string_view path);

}  // namespace talaria::lint_internal
