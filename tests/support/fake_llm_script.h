// The script a FakeLlmServer replays: scripted turns (each the answer to one Chat Completions
// request), with per-turn streaming shape, faults and expectations. The JSON format is described
// in tests/support/README.md ("Fake LLM server"); ParseFakeLlmScript rejects unknown keys so a
// typo in a script fails loudly instead of silently meaning nothing.
// Thread-safety: value types and free functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace talaria::test_support {

using FakeJson = nlohmann::ordered_json;

struct FakeToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // JSON text as the model writes it (may be malformed on purpose)
};

// How a streamed turn is cut into SSE events and bytes.
struct FakeStreamShape {
  enum class Chunking : unsigned char { kEvents, kFixed, kRandom };
  enum class CallStyle : unsigned char { kStandard, kOllama, kIdOnly, kIndexOnly };
  enum class UsageMode : unsigned char { kAuto, kSeparate, kFinal, kNone };
  Chunking chunking = Chunking::kEvents;  // one write per SSE event, or byte pieces
  size_t size = 7;                        // kFixed: bytes per write; kRandom: max bytes per write
  uint32_t seed = 1;                      // kRandom
  int gap_ms = 0;                         // pause between writes (so reads see each piece)
  size_t text_piece = 16;                 // bytes of content/reasoning per delta (UTF-8 safe)
  size_t args_piece = 0;                  // bytes of arguments per delta; 0: whole in one
  bool interleave = false;                // round-robin the deltas of parallel calls
  bool repeat_name = false;               // send function.name again on every argument delta
  bool calls_in_one_delta = false;        // every call, whole, in one delta's tool_calls array
  CallStyle call_style = CallStyle::kStandard;
  UsageMode usage = UsageMode::kAuto;  // kAuto: a choices:[] chunk when include_usage was asked
  bool omit_done = false;              // no "data: [DONE]"
  bool role_chunk = true;              // a first delta {"role":"assistant","content":""}
};

struct FakeFault {
  enum class Kind : unsigned char {
    kNone,
    kHttp,              // status + body (+ Retry-After): 429, 500, 401, 400, 503 ...
    kDrop,              // close the connection at a point of the body
    kStall,             // stop sending for `ms`, then go on
    kErrorEvent,        // an {"error": ...} event mid-stream, then the stream ends
    kTruncateToolCall,  // a call's arguments cut off, finish_reason "length"
  };
  Kind kind = Kind::kNone;
  int status = 0;
  std::string message;
  std::optional<double> retry_after;  // seconds, sent as Retry-After
  std::string body;                   // kHttp: the body verbatim (default: an OpenAI error)
  // Where in the body (kDrop, kStall, kErrorEvent): after this many SSE events, or bytes.
  std::optional<size_t> after_events;
  std::optional<size_t> after_bytes;
  int ms = 0;                  // kStall
  std::optional<size_t> call;  // kTruncateToolCall: which call (default the last)
  std::optional<size_t> at;    // kTruncateToolCall: bytes of arguments kept (default half)
};

// Checks on the request a turn answers (`expect`: failures are problems; `match`: the turn is
// only taken by a request that passes).
struct FakeConditions {
  std::optional<std::string> last_role;
  std::optional<std::string> last_content_contains;
  std::optional<std::string> last_tool_call_id;
  std::optional<std::string> any_content_contains;  // some message's text content
  std::optional<std::string> system_contains;
  std::vector<std::string> tools_include;
  std::vector<std::string> tools_exclude;
  std::optional<bool> no_tools;
  std::optional<FakeJson> tool_choice;  // compared as JSON
  std::optional<size_t> message_count;
  std::optional<bool> stream;
  std::optional<std::string> model;
  std::optional<std::string> header_contains;  // "Name: text" — a header holds the text
  // Top-level body fields, each compared as JSON; null: the request leaves the field out.
  std::vector<std::pair<std::string, FakeJson>> fields;
  bool empty() const;
};

struct FakeTurn {
  std::string text;
  std::string reasoning;
  // Or "reasoning"; "reasoning.text" / "reasoning.content": {"reasoning": {"text": ...}}.
  std::string reasoning_field = "reasoning_content";
  std::vector<FakeToolCall> tool_calls;
  std::string finish_reason;  // default: "tool_calls" with calls, else "stop"
  std::optional<FakeJson> usage;
  std::optional<std::string> raw_body;  // sent verbatim instead of the rendered body
  FakeStreamShape shape;
  FakeFault fault;
  FakeConditions expect;
  FakeConditions match;
  std::string label;  // for logs and messages
  // `hold`: the answer waits until the server has received this many requests in all (0: no
  // wait), at most hold_timeout_ms; then a "hold_timeout" problem. Shows that requests overlap
  // (parallel subagents) without a timing assertion: served one by one, they never get there.
  size_t hold_until_requests = 0;
  int hold_timeout_ms = 10'000;
};

struct FakeLlmScript {
  std::string model = "fake-model";
  std::vector<FakeTurn> turns;
  // When the turns are spent: answer with `exhausted_turn` or, when it is absent, a 500.
  std::optional<FakeTurn> exhausted_turn;
  bool strict = false;               // invalid requests get HTTP 400 (and use no turn)
  std::vector<std::string> lenient;  // problem kinds not reported (e.g. "arguments_not_json")
  FakeStreamShape default_shape;     // the base every turn's "stream" object overrides
};

// Parses a script: an object {"turns": [...], ...}, a bare array of turns, or JSON lines (one
// turn per line). Returns nullopt and sets *error (naming the turn and key) on a bad script.
std::optional<FakeLlmScript> ParseFakeLlmScript(std::string_view text, std::string* error);
std::optional<FakeLlmScript> ParseFakeLlmScriptJson(const FakeJson& json, std::string* error);
std::optional<FakeLlmScript> LoadFakeLlmScriptFile(const std::string& path, std::string* error);

}  // namespace talaria::test_support
