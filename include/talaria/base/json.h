// The one JSON DOM talaria uses: nlohmann::ordered_json (stable key order = stable prompts).
//
// Public headers include only this file (json_fwd.hpp); the full json.hpp goes through the
// precompiled header of each module. Parsing never throws: it returns a Result.
// Thread-safety: free functions, no shared state.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "talaria/base/status.h"

namespace talaria {

using Json = nlohmann::ordered_json;

// Nesting deeper than this is refused: hostile input must not blow the stack.
inline constexpr int kMaxJsonDepth = 256;

// Byte offset of the bracket where array/object nesting of `text` first exceeds `limit`
// (strings skipped, escapes honoured), or npos. A scan without parsing: a recursive parser must
// never see text nested deeper than it can take.
size_t JsonNestingOverflowOffset(std::string_view text, int limit = kMaxJsonDepth);

// True when `text` is exactly one JSON value (RFC 8259: strings of valid UTF-8 with valid escapes
// and paired surrogates, numbers by the grammar, whitespace around) nested at most `limit` deep.
// A scan that builds nothing — the check before text is spliced into a message as it is.
bool IsValidJsonText(std::string_view text, int limit = kMaxJsonDepth);

// Parses `text` as one JSON document. InvalidArgument on a syntax error or excessive nesting;
// the message names the byte offset.
Result<Json> ParseJson(std::string_view text);

// The string field `key` of `object`, or "" when `object` is not an object or the field is
// missing or not a string.
std::string JsonStringField(const Json& object, std::string_view key);

// Compact serialization (no spaces); invalid UTF-8 in strings is replaced, never thrown on.
std::string DumpJson(const Json& value);

// Serialization with Python json.dumps' default separators (", " and ": "), for results whose
// exact text the original produced (models tuned on it see the same bytes).
std::string DumpJsonPythonStyle(const Json& value);

// Quotes and escapes `s` as a JSON string literal (invalid UTF-8 replaced), byte for byte what
// DumpJson writes for the same string.
std::string JsonQuote(std::string_view s);
// The same, appended to `out`: copies runs of plain bytes at once (nlohmann's serializer decodes
// every byte, which made escaping a large tool result the main cost of an MCP round trip).
void AppendJsonQuoted(std::string& out, std::string_view s);

}  // namespace talaria
