#include "talaria/core/tool_result.h"

#include <ostream>

#include <nlohmann/json.hpp>

namespace talaria {

std::string_view CallStatusName(CallStatus status) {
  switch (status) {
    case CallStatus::kOk:
      return "ok";
    case CallStatus::kError:
      return "error";
    case CallStatus::kBlocked:
      return "blocked";
    case CallStatus::kCancelled:
      return "cancelled";
    case CallStatus::kTimedOut:
      return "timeout";
  }
  return "error";
}

std::ostream& operator<<(std::ostream& os, CallStatus status) {
  return os << CallStatusName(status);
}

std::string BoundErrorMessage(std::string_view message) {
  if (message.size() <= kMaxToolErrorChars) return std::string(message);
  size_t cut = kMaxToolErrorChars;
  // Step back over UTF-8 continuation bytes so the cut never splits a character.
  while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;
  std::string out(message.substr(0, cut));
  out += kTruncationMarker;
  return out;
}

ToolResult ToolResult::Text(std::string text) {
  ToolResult r;
  r.text = std::move(text);
  return r;
}

ToolResult ToolResult::WithContent(std::string text, Json blocks) {
  ToolResult r;
  r.text = std::move(text);
  r.content = std::make_shared<const Json>(std::move(blocks));
  return r;
}

ToolResult ToolResult::FromJson(const Json& value) {
  if (value.is_object() && value.contains("error") && !value["error"].is_null()) {
    return ErrorJson(value);
  }
  return Text(DumpJson(value));
}

ToolResult ToolResult::Error(std::string_view message, CallStatus status, std::string error_type) {
  Json body = Json::object();
  body["error"] = BoundErrorMessage(message);
  ToolResult r;
  r.text = DumpJson(body);
  r.status = status;
  r.error_type = std::move(error_type);
  return r;
}

ToolResult ToolResult::ErrorJson(Json fields, CallStatus status, std::string error_type) {
  if (!fields.is_object()) fields = Json::object({{"error", DumpJson(fields)}});
  auto it = fields.find("error");
  if (it != fields.end() && it->is_string()) {
    *it = BoundErrorMessage(it->get_ref<const std::string&>());
  }
  ToolResult r;
  r.text = DumpJson(fields);
  r.status = status;
  r.error_type = std::move(error_type);
  return r;
}

}  // namespace talaria
