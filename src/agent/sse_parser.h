// SseParser: the text/event-stream framing (WHATWG "server-sent events"), fed in pieces of any
// size as the body arrives. Lines end in LF, CR or CRLF (a CRLF split across two pieces is one
// line end); `data:` lines of one event are joined with "\n"; `event:` names the event; lines
// starting with ':' are comments (keep-alives); `id:` and `retry:` are ignored. An event is
// dispatched at a blank line, and by Finish for a body that ends without one.
// Thread-safety: not thread-safe; one parser per stream.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "talaria/base/status.h"

namespace talaria::agent {

class SseParser {
 public:
  // Receives each event; return a non-OK status to stop parsing (Feed returns it).
  class Handler {
   public:
    virtual ~Handler() = default;
    virtual Status OnEvent(std::string_view event, std::string_view data) = 0;
  };

  // An event's data may hold at most `max_event_bytes` (a hostile server must not grow memory
  // without bound); a longer one is ResourceExhausted.
  explicit SseParser(Handler* handler, size_t max_event_bytes = size_t{64} << 20)
      : handler_(handler), max_event_bytes_(max_event_bytes) {}

  // Parses `chunk`, dispatching the events it completes.
  Status Feed(std::string_view chunk);
  // The body ended: a last line without its line end, and an event without its blank line,
  // are dispatched.
  Status Finish();

 private:
  Status ProcessLine(std::string_view line);
  Status Dispatch();

  Handler* handler_;
  size_t max_event_bytes_;
  std::string partial_;  // a line whose end has not arrived yet
  std::string data_;     // the current event's data lines, joined
  std::string event_;    // the current event's name
  bool has_data_ = false;
  bool skip_lf_ = false;  // the previous piece ended in CR: a leading LF belongs to it
};

}  // namespace talaria::agent
