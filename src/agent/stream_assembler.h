// StreamAssembler: builds one assistant turn out of Chat Completions stream chunks (the `data`
// of each SSE event), whatever the provider's quirks:
// - text (`delta.content`, a string or Mistral's array of text/thinking parts) and reasoning
//   (`delta.reasoning_content`, or `delta.reasoning` as a string or an object with text/content);
// - tool calls per `index`: an id at an index already holding a call with another id opens a
//   new call (Ollama reuses index 0 for parallel calls); the name is set once, never appended
//   (some providers resend it in every delta); arguments are concatenated; a delta without
//   `index` is placed by its id (a new id opens a call; Mistral sends several in one delta), or
//   continues the last call when it has no id either;
// - the usage chunk (`choices: []`), chunks with no choices at all, a missing [DONE], an error
//   object inside the stream (top level or an `event: error`), `finish_reason` from whichever
//   chunk carries one (a later null never erases it).
// ParseCompletion reads a non-streaming chat.completion body into the same structure.
// Thread-safety: not thread-safe; one assembler per response.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>  // AssembledTurn holds an optional Json: the full type

#include "agent/chunk_scanner.h"
#include "talaria/agent/chat.h"
#include "talaria/base/json.h"
#include "talaria/base/status.h"

namespace talaria::agent {

class StreamObserver;

// One response's parts as the server sent them, before the client's finishing touches (ids
// for calls without one, the Hermes text format).
struct AssembledTurn {
  std::string content;
  std::string reasoning;
  std::string refusal;
  std::vector<ToolCall> tool_calls;  // in order of first appearance; `id` "" when none was sent
  std::string finish_reason;         // the last non-null one; "" when none arrived
  Usage usage;
  bool usage_seen = false;
  std::string model;
  std::optional<Json> error;  // an error object the server sent instead of (or after) output
  bool any_chunk = false;     // at least one chunk (or a whole body) was read
  bool done = false;          // [DONE] arrived
};

// A non-streaming chat.completion body. InvalidArgument when it is not JSON or not an object.
Result<AssembledTurn> ParseCompletion(std::string_view body, int choice = 0);

class StreamAssembler {
 public:
  // More calls than this in one response is an error (the turn's `error`).
  static constexpr size_t kMaxToolCalls = 512;

  // `choice` is the choice index assembled (0 unless a test reads the others of an n>1
  // stream); `observer` (may be null) is told text, reasoning and new calls as they arrive.
  explicit StreamAssembler(StreamObserver* observer = nullptr, int choice = 0)
      : observer_(observer), choice_(choice) {}

  // One event of the stream: its name ("" for the default) and data. InvalidArgument when the
  // data is neither [DONE] nor a JSON object.
  Status OnEvent(std::string_view event, std::string_view data);

  // The turn so far; once the stream ended, calls cut off by the end are marked truncated.
  AssembledTurn Finish();
  const AssembledTurn& turn() const { return turn_; }

 private:
  friend Result<AssembledTurn> ParseCompletion(std::string_view body, int choice);
  void OnScannedChunk(const ScannedChunk& chunk);
  void OnChunk(const Json& chunk);
  void OnDelta(const Json& delta);
  void AddText(std::string_view text);
  void AddReasoning(std::string_view text);
  void OnToolCallDelta(const ScannedCall& entry);
  size_t OpenCall();

  StreamObserver* observer_;
  int choice_;
  AssembledTurn turn_;
  ScannedChunk scanned_;  // reused: its strings keep their capacity from chunk to chunk
  ScannedCall call_delta_;
  std::vector<std::pair<int64_t, size_t>> slot_of_index_;  // raw index -> call
};

// `text` as JSON through base's ParseJson (nesting bounded: nlohmann's copy and dump recurse),
// or a discarded value when it does not parse.
Json ParseBoundedJson(std::string_view text);

// Reads usage from a chunk's or body's `usage` object.
Usage ParseUsage(const Json& usage);

// Marks the calls an ended response cut off: with finish_reason "length" the last call was
// still being written; with no finish_reason at all, a last call whose arguments are not
// complete JSON.
void MarkTruncatedCalls(AssembledTurn& turn);

}  // namespace talaria::agent
