#include "agent/sse_parser.h"

#include <cstring>

namespace talaria::agent {

Status SseParser::Feed(std::string_view chunk) {
  if (skip_lf_ && !chunk.empty()) {
    skip_lf_ = false;
    if (chunk.front() == '\n') chunk.remove_prefix(1);
  }
  while (!chunk.empty()) {
    // memchr twice beats a per-byte loop looking for either end; most streams use LF only.
    const char* base = chunk.data();
    const auto* lf = static_cast<const char*>(std::memchr(base, '\n', chunk.size()));
    const size_t scan = lf != nullptr ? static_cast<size_t>(lf - base) : chunk.size();
    const auto* cr = static_cast<const char*>(std::memchr(base, '\r', scan));
    const char* end = cr != nullptr ? cr : lf;
    if (end == nullptr) {
      if (partial_.size() + chunk.size() > max_event_bytes_) {
        return ResourceExhaustedError("an event-stream line is longer than " +
                                      std::to_string(max_event_bytes_) + " bytes");
      }
      partial_.append(chunk);
      return Status::Ok();
    }
    const size_t line_len = static_cast<size_t>(end - base);
    size_t consumed = line_len + 1;
    if (*end == '\r') {
      if (consumed < chunk.size()) {
        if (chunk[consumed] == '\n') ++consumed;
      } else {
        skip_lf_ = true;
      }
    }
    Status status;
    if (partial_.empty()) {
      status = ProcessLine(chunk.substr(0, line_len));
    } else {
      partial_.append(chunk.substr(0, line_len));
      std::string line = std::move(partial_);
      partial_.clear();
      status = ProcessLine(line);
    }
    if (!status.ok()) return status;
    chunk.remove_prefix(consumed);
  }
  return Status::Ok();
}

Status SseParser::Finish() {
  skip_lf_ = false;
  if (!partial_.empty()) {
    std::string line = std::move(partial_);
    partial_.clear();
    TALARIA_RETURN_IF_ERROR(ProcessLine(line));
  }
  return Dispatch();
}

Status SseParser::ProcessLine(std::string_view line) {
  if (line.empty()) return Dispatch();
  if (line.front() == ':') return Status::Ok();  // a comment
  const size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (data_.size() + value.size() + 1 > max_event_bytes_) {
      return ResourceExhaustedError("an event-stream event is longer than " +
                                    std::to_string(max_event_bytes_) + " bytes");
    }
    if (has_data_) data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_.assign(value);
  }
  return Status::Ok();
}

Status SseParser::Dispatch() {
  if (!has_data_) {
    event_.clear();  // an event without data is not dispatched
    return Status::Ok();
  }
  Status status = handler_->OnEvent(event_, data_);
  data_.clear();
  event_.clear();
  has_data_ = false;
  return status;
}

}  // namespace talaria::agent
