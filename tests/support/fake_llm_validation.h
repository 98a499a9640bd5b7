// What a strict OpenAI-compatible provider checks in a Chat Completions request, as a list of
// problems (kind + readable message) instead of a 400: the JSON shape, message roles and their
// order, every assistant tool call answered by exactly one tool message, tool schemas. Also the
// per-turn conditions of a script (`expect` and `match`). Used by FakeLlmServer on every
// request; callable alone on a body.
// Thread-safety: free functions, no shared state.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/fake_llm_script.h"

namespace talaria::test_support {

struct FakeLlmProblem {
  size_t request = 0;  // index of the request among those the server received
  std::string kind;    // stable code, e.g. "unanswered_tool_call" (README.md lists them)
  std::string message;
};

// Problems of a request body (already parsed; pass the parse failure as "invalid_json"
// yourself). Kinds listed in `lenient` are left out.
std::vector<FakeLlmProblem> ValidateChatRequest(const FakeJson& body,
                                                const std::vector<std::string>& lenient = {});

// Same, from the body's text (an unparsable body is one "invalid_json" problem).
std::vector<FakeLlmProblem> ValidateChatRequestText(std::string_view body,
                                                    const std::vector<std::string>& lenient = {});

// The conditions `c` fails on this request, one readable line each (empty: all hold).
// `headers` are the request's (name, value) pairs.
std::vector<std::string> CheckConditions(
    const FakeConditions& c, const FakeJson& body,
    const std::vector<std::pair<std::string, std::string>>& headers);

// The text of a message's content: a string, or the "text" of its parts; "" otherwise.
std::string ContentText(const FakeJson& message);

}  // namespace talaria::test_support
