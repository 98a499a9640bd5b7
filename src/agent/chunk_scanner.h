// ScanChunk: the common shapes of a chat.completion.chunk read without building a JSON DOM —
// the stream's hot path (a DOM per chunk kept parsing at ~20 MB/s; the scanner reads the same
// chunks several times faster). It reads only what the assembler uses (model, each choice's
// index, finish_reason and delta: content, reasoning_content, reasoning, refusal, tool_calls
// with index, id, function.name, function.arguments) and skips everything else. Anything out
// of the ordinary — an error or usage object, content parts, a reasoning object, arguments
// sent as an object, a number where a string belongs, a syntax error — makes it return false,
// and the chunk goes to the DOM path (StreamAssembler), which handles every shape.
// Thread-safety: free function.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace talaria::agent {

struct ScannedCall {
  bool has_index = false;
  int64_t index = 0;
  std::string id;
  std::string name;
  std::string arguments;
};

struct ScannedChoice {
  bool has_index = false;
  int64_t index = 0;
  std::string content;
  std::string reasoning_content;
  std::string reasoning;
  std::string refusal;
  std::string finish_reason;
  std::vector<ScannedCall> calls;
};

struct ScannedChunk {
  std::string model;
  std::vector<ScannedChoice> choices;
};

// Reads `data` into `out` (cleared first). False when `data` is not one JSON object of the
// shapes above.
bool ScanChunk(std::string_view data, ScannedChunk& out);

}  // namespace talaria::agent
