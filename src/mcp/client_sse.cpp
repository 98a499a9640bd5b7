#include "mcp/client_sse.h"

#include <cctype>

namespace talaria::mcp::client_internal {

bool SseParser::HandleLine(std::string_view line,
                           const std::function<bool(const SseEvent&)>& on_event) {
  if (line.empty()) {
    const bool dispatch = has_data_;
    SseEvent event;
    event.type = type_.empty() ? "message" : std::move(type_);
    event.data = std::move(data_);
    event.id = last_id_;
    has_data_ = false;
    data_.clear();
    type_.clear();
    return !dispatch || on_event(event);
  }
  if (line.front() == ':') return true;  // a comment
  const size_t colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    type_.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) last_id_.assign(value);
  } else if (field == "retry") {
    bool digits = !value.empty() && value.size() <= 9;
    for (const char c : value) digits = digits && std::isdigit(static_cast<unsigned char>(c));
    if (digits) retry_ = std::chrono::milliseconds(std::stoll(std::string(value)));
  }
  return true;
}

bool SseParser::Feed(std::string_view bytes, const std::function<bool(const SseEvent&)>& on_event) {
  if (failed_) return false;
  while (!bytes.empty()) {
    if (skip_lf_) {
      skip_lf_ = false;
      if (bytes.front() == '\n') {
        bytes.remove_prefix(1);
        continue;
      }
    }
    const size_t end = bytes.find_first_of("\r\n");
    const std::string_view piece = bytes.substr(0, end);
    if (line_.size() + piece.size() + data_.size() > max_event_bytes_) {
      failed_ = true;
      return false;
    }
    if (end == std::string_view::npos) {
      line_.append(piece);
      return true;
    }
    skip_lf_ = bytes[end] == '\r';
    bytes.remove_prefix(end + 1);
    bool go_on;
    if (line_.empty()) {
      go_on = HandleLine(piece, on_event);
    } else {
      line_.append(piece);
      go_on = HandleLine(line_, on_event);
      line_.clear();
    }
    if (!go_on) return true;
  }
  return true;
}

}  // namespace talaria::mcp::client_internal
