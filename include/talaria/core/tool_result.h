// ToolResult: what one tool call returns to the model — the text, and how the call ended.
//
// A failure is data, not an exception: the text is the original's JSON shape
// ({"error": "..."} plus optional fields) and `status` says which kind of ending it was.
// Thread-safety: value type.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>

#include "talaria/base/json.h"

namespace talaria {

enum class CallStatus : unsigned char {
  kOk,         // the handler ran and succeeded
  kError,      // invalid arguments, unknown tool, or the handler reported/threw an error
  kBlocked,    // a policy or a pre hook refused the call; the handler never ran
  kCancelled,  // cancelled before or while running
  kTimedOut,   // the call's deadline passed
};

std::string_view CallStatusName(CallStatus status);
// For test failure messages and logs.
std::ostream& operator<<(std::ostream& os, CallStatus status);

// Error texts reaching the model are bounded (the original's _MAX_TOOL_ERROR_CHARS).
inline constexpr size_t kMaxToolErrorChars = 2048;
inline constexpr std::string_view kTruncationMarker =
    "\xE2\x80\xA6 [truncated]";  // "… [truncated]"

// Cuts `message` to kMaxToolErrorChars (at a UTF-8 boundary) and appends the marker.
std::string BoundErrorMessage(std::string_view message);

struct ToolResult {
  std::string text;
  CallStatus status = CallStatus::kOk;
  // Machine-readable reason for non-ok endings (e.g. "plugin_block", "invalid_arguments").
  std::string error_type;
  // Rich content for clients that render more than text: a JSON array of MCP content blocks
  // (text, image, audio, resource, resource_link). Null: `text` is the whole result. `text`
  // stays what the model, the hooks and the budget see, so a tool sets both (a short text
  // rendering of the content).
  std::shared_ptr<const Json> content;
  // Where the text came from when it is not ours (an MCP server's registered tool name, a URL).
  // Non-empty: the dispatcher wraps the text as untrusted content *after* the result budget, so
  // a large result still spills whole to a pageable file and the preview the model sees is
  // wrapped. Handlers set it instead of wrapping themselves.
  std::string untrusted_source;

  bool ok() const { return status == CallStatus::kOk; }

  // A successful result whose text is returned verbatim.
  static ToolResult Text(std::string text);
  // A successful result with rich content (see `content`); `blocks` must be a JSON array.
  static ToolResult WithContent(std::string text, Json blocks);
  // A successful result serialized from JSON. A top-level "error" key makes it an error result
  // (the original classifies results the same way).
  static ToolResult FromJson(const Json& value);
  // {"error": "<bounded message>"} with status kError (or `status` when given).
  static ToolResult Error(std::string_view message, CallStatus status = CallStatus::kError,
                          std::string error_type = {});
  // `fields` must be an object; its "error" field is bounded; status kError.
  static ToolResult ErrorJson(Json fields, CallStatus status = CallStatus::kError,
                              std::string error_type = {});
};

}  // namespace talaria
