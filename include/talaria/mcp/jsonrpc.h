// JSON-RPC 2.0 as MCP uses it: decoding one incoming message with hostile-input limits, and
// encoding responses, errors and notifications as single compact lines.
//
// Decoding never throws and never trusts its input: the size cap is checked first, then UTF-8,
// then nesting depth (by a scan, before the recursive parser sees the text), then the JSON-RPC
// shape. A failure carries the JSON-RPC error code and, when it could be recovered, the id of
// the offending request, so the caller can answer it.
// Thread-safety: free functions and value types; no shared state.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/base/utf8.h"  // IsValidUtf8, which DecodeMessage applies

namespace talaria::mcp {

// JSON-RPC 2.0 error codes.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

inline constexpr size_t kDefaultMaxMessageBytes = size_t{16} << 20;  // 16 MiB
inline constexpr int kDefaultMaxMessageDepth = 64;

struct MessageLimits {
  size_t max_bytes = kDefaultMaxMessageBytes;
  // Arrays and objects nested deeper than this are refused (the parser recurses per level).
  int max_depth = kDefaultMaxMessageDepth;
};

enum class MessageKind : unsigned char {
  kRequest,       // has method and id: gets exactly one response
  kNotification,  // has method, no id: never answered
  kResponse,      // has id and result or error: an answer to a request we sent
};

// One decoded message. The parsed document is shared, so copies are cheap.
struct Message {
  MessageKind kind = MessageKind::kRequest;
  std::string method;               // empty for responses
  std::shared_ptr<const Json> doc;  // the whole message object; never null after decoding

  // The id (string or integer); null for notifications.
  const Json& id() const;
  // "params" when present (an object or array), else null.
  const Json& params() const;
};

// Why a message was refused, as the JSON-RPC error to send back.
struct MessageError {
  int code = kInvalidRequest;
  std::string message;
  // The request's id when it could be read and was valid; null otherwise (the answer then
  // carries "id": null).
  // A refused message is always answered, even when it lacked an id: a broken message is not
  // a valid notification (JSON-RPC 2.0, section 5.1 examples).
  std::shared_ptr<const Json> id;
};

// The outcome of DecodeMessage: a Message or the error to answer with.
struct Decoded {
  std::shared_ptr<const Message> message;  // null on failure
  MessageError error;                      // meaningful when message is null
  bool ok() const { return message != nullptr; }
};

// Decodes one JSON-RPC message (a single object; an array is a batch, refused here with
// kInvalidRequest: DecodeBatch decodes one where protocol 2025-03-26 allows it). Errors:
// kInvalidRequest for text over limits.max_bytes (not read at all); kParseError for invalid UTF-8,
// excessive nesting or a syntax error; kInvalidRequest for a wrong shape (jsonrpc not "2.0", id
// neither string nor integer, method not a string, params neither object nor array, both result and
// error, ...).
Decoded DecodeMessage(std::string_view text, const MessageLimits& limits = {});

// Whether `text` is a JSON array (its first non-blank character is '['): a JSON-RPC batch.
bool IsBatchText(std::string_view text);

// The outcome of DecodeBatch: one Decoded per element, in order, or the error that refuses the
// batch as a whole (then `items` is empty).
struct DecodedBatch {
  std::vector<Decoded> items;
  std::optional<MessageError> error;  // set when the batch as a whole is refused
  bool ok() const { return !error.has_value(); }
};

// The one protocol version under which a session may send JSON-RPC batches (added in it,
// removed in 2025-06-18).
inline constexpr std::string_view kBatchProtocolVersion = "2025-03-26";

// Decodes a JSON-RPC batch (protocol 2025-03-26 only; the caller decides when to accept one).
// The whole text obeys `limits` as one message would (errors as DecodeMessage's); an empty
// array is kInvalidRequest; each element is then decoded like a message of its own, so a bad
// element gets its own error and the others are served.
DecodedBatch DecodeBatch(std::string_view text, const MessageLimits& limits = {});

// The error answer to a batch sent under a protocol without batches: what the text would get as
// a single message, so hostile text (bad UTF-8, absurd nesting) gets its parse error and a
// well-formed array the batch refusal.
std::string EncodeBatchRefusal(std::string_view text, const MessageLimits& limits = {});

// Compact one-line encodings (no trailing newline); strings with invalid UTF-8 are replaced.
std::string EncodeResult(const Json& id, const Json& result);
// `id` null: "id": null. `data` null: no data member.
std::string EncodeError(const Json* id, int code, std::string_view message,
                        const Json* data = nullptr);
std::string EncodeNotification(std::string_view method, const Json& params);
// A request the server sends to the client (elicitation/create, sampling/createMessage, ...).
std::string EncodeRequest(const Json& id, std::string_view method, const Json& params);

// MCP's own error codes.
inline constexpr int kResourceNotFound = -32002;

}  // namespace talaria::mcp
