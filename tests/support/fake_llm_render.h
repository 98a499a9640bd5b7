// How a FakeLlmServer turns a scripted turn into bytes: the SSE events of a streamed answer or
// the chat.completion body, then a send plan that cuts the bytes into writes (per event, fixed
// sizes, or a seeded random split) and places the turn's fault (a drop, a stall, an error event).
// Pure functions, so the shapes can be tested without a socket.
// Thread-safety: free functions, no shared state.
#pragma once

#include <string>
#include <vector>

#include "support/fake_llm_script.h"

namespace talaria::test_support {

struct FakeRenderContext {
  std::string model;
  bool include_usage = false;  // the request's stream_options.include_usage
  size_t request_index = 0;    // names the completion id (chatcmpl-fake-N)
  size_t prompt_bytes = 0;     // for the default usage numbers
};

// The turn as the model would have written it once a kTruncateToolCall fault applies (arguments
// cut, later calls dropped, finish_reason "length"); the turn unchanged otherwise.
FakeTurn ApplyTruncation(const FakeTurn& turn);

// The SSE events of a streamed answer, each a whole "data: ...\n\n" (the last "data: [DONE]"
// unless omitted). A raw_body is split at its blank lines.
std::vector<std::string> RenderStreamEvents(const FakeTurn& turn, const FakeRenderContext& ctx);

// The chat.completion JSON body of a non-streamed answer (or the raw_body).
std::string RenderCompletionBody(const FakeTurn& turn, const FakeRenderContext& ctx);

// An OpenAI-style error body: {"error": {"message", "type", "code"}}.
std::string ErrorBody(const std::string& message, const std::string& type, const std::string& code);

struct FakeSendStep {
  enum class Kind : unsigned char { kWrite, kSleep, kClose };
  Kind kind = Kind::kWrite;
  std::string bytes;  // kWrite
  int ms = 0;         // kSleep
};

// The writes that send `events` (concatenated) under the turn's chunking and fault. A kClose
// step ends the plan: the connection is dropped without finishing the response.
std::vector<FakeSendStep> PlanSend(const std::vector<std::string>& events, const FakeTurn& turn);

}  // namespace talaria::test_support
