// Argument repair: the JSON text a model wrote for a tool call, made into a JSON object when a
// local, meaning-preserving repair can do it — and refused otherwise, never replaced by {}.
//
// Repairs, each seen from real models: chat-template tokens leaked into the text (`<|call|>`,
// `<|im_end|>`) and markdown fences; a JSON object serialized inside a JSON string; Python-style
// single quotes and True/False/None; trailing commas; raw control characters inside strings;
// closing brackets left off at the end. Text that ends inside a string is not closed: that is
// a cut-off value (a file's content half written), and running it would do harm.
// Thread-safety: free functions, no shared state.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "talaria/base/json.h"
#include "talaria/base/status.h"

namespace talaria::agent {

struct RepairedArguments {
  Json args;              // always an object
  bool repaired = false;  // the text was not already a JSON object
};

// Errors: InvalidArgument with a message for the model (what is wrong, a preview of the text,
// and that the call did not run). Blank text is {} (a call without arguments).
Result<RepairedArguments> RepairArguments(std::string_view raw);

// The arguments in a canonical form (keys sorted at every level, compact): two calls with the
// same canonical arguments are the same call.
std::string CanonicalArguments(const Json& args);

}  // namespace talaria::agent
