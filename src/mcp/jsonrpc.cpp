#include "talaria/mcp/jsonrpc.h"

#include <nlohmann/json.hpp>

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

bool IsValidUtf8(std::string_view text, size_t* bad_offset) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    char32_t cp = 0;
    char32_t min = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07, min = 0x10000;
    }
    bool ok = len != 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are all ill-formed.
    if (ok && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;
    if (!ok) {
      if (bad_offset != nullptr) *bad_offset = i;
      return false;
    }
    i += len;
  }
  return true;
}

Decoded DecodeMessage(std::string_view text, const MessageLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return Fail(kInvalidRequest, "Invalid Request: message of " + std::to_string(text.size()) +
                                     " bytes exceeds the limit of " + std::to_string(limits.max_bytes));
  }
  if (size_t bad = 0; !IsValidUtf8(text, &bad)) {
    return Fail(kParseError, "Parse error: invalid UTF-8 at byte " + std::to_string(bad));
  }
  if (JsonNestingOverflowOffset(text, limits.max_depth) != std::string_view::npos) {
    return Fail(kParseError, "Parse error: nesting deeper than " + std::to_string(limits.max_depth));
  }
  auto parsed = ParseJson(text);
  if (!parsed) return Fail(kParseError, BoundErrorMessage("Parse error: " + parsed.error().message()));
  auto doc = std::make_shared<Json>(std::move(*parsed));
  if (doc->is_array()) {
    return Fail(kInvalidRequest, "Invalid Request: JSON-RPC batches are not supported");
  }
  if (!doc->is_object()) return Fail(kInvalidRequest, "Invalid Request: a message must be a JSON object");

  const Json& obj = *doc;
  const auto id_it = obj.find("id");
  const bool has_id = id_it != obj.end();
  const Json* id = has_id ? &*id_it : nullptr;
  const auto version = obj.find("jsonrpc");
  if (version == obj.end() || !version->is_string() || version->get_ref<const std::string&>() != "2.0") {
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
  if (!method->is_string()) return Fail(kInvalidRequest, "Invalid Request: \"method\" must be a string", id);
  if (has_result || has_error) {
    return Fail(kInvalidRequest, "Invalid Request: a request cannot carry \"result\" or \"error\"", id);
  }
  if (const auto params = obj.find("params"); params != obj.end() && !params->is_object() && !params->is_array()) {
    return Fail(kInvalidRequest, "Invalid Request: \"params\" must be an object or an array", id);
  }
  message->kind = has_id ? MessageKind::kRequest : MessageKind::kNotification;
  message->method = method->get<std::string>();
  message->doc = std::move(doc);
  Decoded d;
  d.message = std::move(message);
  return d;
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
