#include "talaria/mcp/jsonrpc.h"

#include <nlohmann/json.hpp>
#include <optional>

#include "talaria/core/tool_result.h"

namespace talaria::mcp {
namespace {

const Json& NullJson() {
  static const Json kNull;
  return kNull;
}

bool IsValidId(const Json& id) { return id.is_string() || id.is_number_integer(); }

Decoded Fail(int code, std::string message, const Json* id = nullptr) {
  Decoded d;
  d.error.code = code;
  d.error.message = std::move(message);
  if (id != nullptr && IsValidId(*id)) d.error.id = std::make_shared<const Json>(*id);
  return d;
}

// A parsed message's shape: a request, notification or response, or the error to answer.
Decoded DecodeDocument(std::shared_ptr<Json> doc) {
  if (!doc->is_object())
    return Fail(kInvalidRequest, "Invalid Request: a message must be a JSON object");
  const Json& obj = *doc;
  const auto id_it = obj.find("id");
  const bool has_id = id_it != obj.end();
  const Json* id = has_id ? &*id_it : nullptr;
  const auto version = obj.find("jsonrpc");
  if (version == obj.end() || !version->is_string() ||
      version->get_ref<const std::string&>() != "2.0") {
    return Fail(kInvalidRequest, "Invalid Request: \"jsonrpc\" must be \"2.0\"", id);
  }
  const bool has_result = obj.contains("result");
  const bool has_error = obj.contains("error");
  const auto method = obj.find("method");

  auto message = std::make_shared<Message>();
  if (method == obj.end()) {
    // A response to a request we sent. Its id may be null (an answer to an unreadable message).
    if (!has_id || !(IsValidId(*id) || id->is_null()) || has_result == has_error) {
      return Fail(kInvalidRequest, "Invalid Request: no \"method\", and not a response", id);
    }
    if (has_error && !obj["error"].is_object()) {
      return Fail(kInvalidRequest, "Invalid Request: \"error\" must be an object", id);
    }
    message->kind = MessageKind::kResponse;
    message->doc = std::move(doc);
    Decoded d;
    d.message = std::move(message);
    return d;
  }
  if (has_id && !IsValidId(*id)) {
    return Fail(kInvalidRequest, "Invalid Request: \"id\" must be a string or an integer");
  }
  if (!method->is_string())
    return Fail(kInvalidRequest, "Invalid Request: \"method\" must be a string", id);
  if (has_result || has_error) {
    return Fail(kInvalidRequest, "Invalid Request: a request cannot carry \"result\" or \"error\"",
                id);
  }
  if (const auto params = obj.find("params");
      params != obj.end() && !params->is_object() && !params->is_array()) {
    return Fail(kInvalidRequest, "Invalid Request: \"params\" must be an object or an array", id);
  }
  message->kind = has_id ? MessageKind::kRequest : MessageKind::kNotification;
  message->method = method->get<std::string>();
  message->doc = std::move(doc);
  Decoded d;
  d.message = std::move(message);
  return d;
}

// The checks every incoming text passes before it is parsed, then the parse; a Decoded carrying
// the error, or null when `out` holds the document.
std::optional<Decoded> ParseChecked(std::string_view text, const MessageLimits& limits, Json& out) {
  if (text.size() > limits.max_bytes) {
    return Fail(kInvalidRequest, "Invalid Request: message of " + std::to_string(text.size()) +
                                     " bytes exceeds the limit of " +
                                     std::to_string(limits.max_bytes));
  }
  if (size_t bad = 0; !IsValidUtf8(text, &bad)) {
    return Fail(kParseError, "Parse error: invalid UTF-8 at byte " + std::to_string(bad));
  }
  if (JsonNestingOverflowOffset(text, limits.max_depth) != std::string_view::npos) {
    return Fail(kParseError,
                "Parse error: nesting deeper than " + std::to_string(limits.max_depth));
  }
  auto parsed = ParseJson(text);
  if (!parsed)
    return Fail(kParseError, BoundErrorMessage("Parse error: " + parsed.error().message()));
  out = std::move(*parsed);
  return std::nullopt;
}

}  // namespace

const Json& Message::id() const {
  if (!doc) return NullJson();
  auto it = doc->find("id");
  return it == doc->end() ? NullJson() : *it;
}

const Json& Message::params() const {
  if (!doc) return NullJson();
  auto it = doc->find("params");
  return it == doc->end() ? NullJson() : *it;
}

Decoded DecodeMessage(std::string_view text, const MessageLimits& limits) {
  Json parsed;
  if (auto failed = ParseChecked(text, limits, parsed)) return std::move(*failed);
  if (parsed.is_array()) {
    return Fail(kInvalidRequest,
                "Invalid Request: JSON-RPC batches are allowed only under protocol 2025-03-26");
  }
  return DecodeDocument(std::make_shared<Json>(std::move(parsed)));
}

bool IsBatchText(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '[';
}

DecodedBatch DecodeBatch(std::string_view text, const MessageLimits& limits) {
  DecodedBatch batch;
  Json parsed;
  if (auto failed = ParseChecked(text, limits, parsed)) {
    batch.error = std::move(failed->error);
    return batch;
  }
  if (!parsed.is_array() || parsed.empty()) {
    batch.error =
        Fail(kInvalidRequest, parsed.is_array() ? "Invalid Request: an empty batch"
                                                : "Invalid Request: a batch must be a JSON array")
            .error;
    return batch;
  }
  batch.items.reserve(parsed.size());
  for (Json& element : parsed)
    batch.items.push_back(DecodeDocument(std::make_shared<Json>(std::move(element))));
  return batch;
}

std::string EncodeBatchRefusal(std::string_view text, const MessageLimits& limits) {
  const Decoded refused = DecodeMessage(text, limits);
  return EncodeError(refused.error.id.get(), refused.error.code, refused.error.message);
}

std::string EncodeResult(const Json& id, const Json& result) {
  Json out = Json::object();
  out["jsonrpc"] = "2.0";
  out["id"] = id;
  out["result"] = result;
  return DumpJson(out);
}

std::string EncodeError(const Json* id, int code, std::string_view message, const Json* data) {
  Json out = Json::object();
  out["jsonrpc"] = "2.0";
  out["id"] = id != nullptr ? *id : Json();
  Json error = Json::object();
  error["code"] = code;
  error["message"] = std::string(message);
  if (data != nullptr) error["data"] = *data;
  out["error"] = std::move(error);
  return DumpJson(out);
}

std::string EncodeNotification(std::string_view method, const Json& params) {
  Json out = Json::object();
  out["jsonrpc"] = "2.0";
  out["method"] = std::string(method);
  if (!params.is_null()) out["params"] = params;
  return DumpJson(out);
}

std::string EncodeRequest(const Json& id, std::string_view method, const Json& params) {
  Json out = Json::object();
  out["jsonrpc"] = "2.0";
  out["id"] = id;
  out["method"] = std::string(method);
  if (!params.is_null()) out["params"] = params;
  return DumpJson(out);
}

}  // namespace talaria::mcp
