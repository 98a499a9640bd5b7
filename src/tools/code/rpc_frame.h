// Framing of the execute_code RPC: each message is a 4-byte big-endian length followed by that
// many bytes of UTF-8 JSON. Requests carry an id ({"id": 7, "tool": "read_file", "args": {...}})
// and responses echo it ({"id": 7, "result": "<tool result text>"}), so a script may have several
// calls in flight on the one socket and answers may come back in any order.
// Thread-safety: FrameReader is not thread-safe; caller synchronises.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "talaria/base/status.h"

namespace talaria::tools::code {

// Larger frames are a broken or hostile peer: the stream is abandoned.
inline constexpr size_t kMaxFrameBytes = size_t{16} << 20;
inline constexpr size_t kFrameHeaderBytes = 4;

// The length header followed by `payload`. REQUIRES: payload.size() <= kMaxFrameBytes.
std::string EncodeFrame(std::string_view payload);

// Reassembles frames from a byte stream delivered in arbitrary pieces.
class FrameReader {
 public:
  // Appends received bytes.
  void Feed(std::string_view bytes) { buffer_.append(bytes); }
  // The next complete payload, nullopt when more bytes are needed. InvalidArgument when a header
  // announces more than kMaxFrameBytes (the stream cannot be resynchronised after that).
  Result<std::optional<std::string>> Next();
  // Bytes received but not yet returned as a frame.
  size_t pending() const { return buffer_.size() - offset_; }

 private:
  std::string buffer_;
  size_t offset_ = 0;  // start of the first unreturned byte in buffer_
};

}  // namespace talaria::tools::code
