// An incremental text/event-stream (SSE) parser for the Streamable HTTP client: bytes go in as
// they arrive, complete events come out. Rules as in the WHATWG spec: lines end in LF, CR or
// CRLF (also split across reads); "data:" lines accumulate, joined by "\n"; "event:" names the
// event; "id:" sets the last event id (kept across events, for Last-Event-ID on reconnect);
// "retry:" sets the reconnection delay; ":" lines are comments (keep-alives); an empty line
// dispatches the event (nothing when it has no data). One leading space after the colon is
// dropped.
// A hostile server can send one endless line or event: past `max_event_bytes` Feed fails and the
// caller drops the stream.
// Thread-safety: not thread-safe; one parser per stream.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace talaria::mcp::client_internal {

struct SseEvent {
  std::string type;  // "message" unless the server named it
  std::string data;
  std::string id;  // the last event id as of this event
};

class SseParser {
 public:
  explicit SseParser(size_t max_event_bytes) : max_event_bytes_(max_event_bytes) {}

  // Parses `bytes`, calling `on_event` for each complete event; `on_event` returns false to stop
  // (Feed then returns true without reading further). False when an event or line is over the
  // cap; the parser is unusable afterwards.
  bool Feed(std::string_view bytes, const std::function<bool(const SseEvent&)>& on_event);

  const std::string& last_event_id() const { return last_id_; }
  std::optional<std::chrono::milliseconds> retry() const { return retry_; }

 private:
  // False when `on_event` asked to stop.
  bool HandleLine(std::string_view line, const std::function<bool(const SseEvent&)>& on_event);

  size_t max_event_bytes_;
  std::string line_;      // the line being read
  bool skip_lf_ = false;  // the last byte was CR: an LF right after it ends nothing
  bool has_data_ = false;
  std::string data_;
  std::string type_;
  std::string last_id_;
  std::optional<std::chrono::milliseconds> retry_;
  bool failed_ = false;
};

}  // namespace talaria::mcp::client_internal
