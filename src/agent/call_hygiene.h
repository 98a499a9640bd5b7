// Call hygiene: what the loop does with each tool call of one model response before anything
// runs — repair the name, repair and canonicalize the arguments, refuse what cannot be
// repaired or was cut off, and run exact duplicates once.
//
// A call that is refused is never executed (never with {} in place of its arguments, which the
// original did): its tool message is the refusal, so the model can correct itself. Schema
// validation happens afterwards on the dispatcher's path (its result says what is wrong and the
// handler never runs).
// Thread-safety: free functions, no shared state.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "agent/tool_name_repair.h"
#include "talaria/agent/chat.h"

namespace talaria::agent {

struct PreparedCall {
  enum class Disposition : unsigned char {
    kRun,        // goes to the batch
    kDuplicate,  // the same call as an earlier one of this response: shares its result
    kRejected,   // never runs; `rejection` is its tool message
  };
  Disposition disposition = Disposition::kRun;
  std::string id;           // the model's call id
  std::string name;         // the tool (repaired), or the model's spelling when rejected
  std::string arguments;    // kRun: the arguments the dispatcher gets (compact JSON text)
  std::string canonical;    // kRun/kDuplicate: the dedupe and guardrail key's arguments
  size_t duplicate_of = 0;  // kDuplicate: the index of the call it repeats
  std::string rejection;    // kRejected: the tool message text ({"error": ...})
  bool name_repaired = false;
  bool arguments_repaired = false;
};

// One entry per call, in order. `offered` are the tools of the session (the unknown-tool message
// lists them); `lookup` resolves a spelling to an offered tool.
std::vector<PreparedCall> PrepareCalls(std::span<const ToolCall> calls,
                                       std::span<const std::string> offered,
                                       const ToolNameLookup& lookup);

// The tool message of a call the response cut off (ToolCall::truncated).
std::string TruncatedCallMessage(std::string_view name);

}  // namespace talaria::agent
