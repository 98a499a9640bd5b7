// The exec channel of a remote execute_code (an SSH session's stdin and stdout): the relay
// program that runs on the remote side, and the line framing both ends speak over it.
//
// Each message is one line: the marker "\x1eTALARIA " then a compact JSON object, then "\n"
// (JSON escapes every newline inside, so a message never spans lines). Host to relay: first the
// bundle {"files": {name: text}, "program": bootstrap}, then {"rpc": frame} for each RPC
// response. Relay to host: {"stdout": text}, {"stderr": text}, {"rpc": frame} for each RPC
// request (the same frames as the local socket's, see rpc_frame.h), and last {"exit": code}.
// Anything else on the stream (a shell's or ssh's own messages) is not a message: the host keeps
// it as diagnostic text and never acts on it.
//
// The relay (Python 3, standard library only) writes the files to a fresh private directory,
// starts the interpreter there on the bootstrap with a socketpair as descriptor 3 (so the stubs
// and the RPC hello are exactly the local ones), relays its stdout, stderr and RPC frames, and
// when the host goes away (end of stdin) kills the interpreter's whole process group and removes
// the directory.
// Thread-safety: pure functions and a not-thread-safe line splitter.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

// std::optional<Item> holds a Json by value: the complete type, not json_fwd.hpp.
#include <nlohmann/json.hpp>

#include "talaria/base/json.h"

namespace talaria::tools::code {

// The shell command that starts the relay with `python` (a name looked up in the remote PATH, or
// a path). Its stderr joins stdout, so a failure to start is seen, as diagnostic text.
std::string RemoteRelayCommand(const std::string& python);

// One message as a line (marker, compact JSON, newline).
std::string EncodeChannelLine(const Json& message);

// Splits the relay's byte stream into messages and diagnostic text.
class ChannelLineReader {
 public:
  struct Item {
    std::optional<Json> message;  // a decoded message
    std::string noise;            // or a line that is none (its newline dropped)
  };
  void Feed(std::string_view bytes) { buffer_.append(bytes); }
  // The next complete line, nullopt when more bytes are needed.
  std::optional<Item> Next();
  // What is left once the stream ended (an unterminated last line), as noise.
  std::string Rest();
  // Bytes received that are not yet a complete line.
  size_t pending() const { return buffer_.size() - offset_; }

 private:
  std::string buffer_;
  size_t offset_ = 0;
};

}  // namespace talaria::tools::code
