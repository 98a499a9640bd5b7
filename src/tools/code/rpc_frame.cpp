#include "tools/code/rpc_frame.h"

#include <cstdint>

namespace talaria::tools::code {

std::string EncodeFrame(std::string_view payload) {
  const auto n = static_cast<uint32_t>(payload.size());
  std::string frame;
  frame.reserve(kFrameHeaderBytes + payload.size());
  frame += static_cast<char>((n >> 24) & 0xFF);
  frame += static_cast<char>((n >> 16) & 0xFF);
  frame += static_cast<char>((n >> 8) & 0xFF);
  frame += static_cast<char>(n & 0xFF);
  frame += payload;
  return frame;
}

Result<std::optional<std::string>> FrameReader::Next() {
  if (pending() < kFrameHeaderBytes) return std::optional<std::string>();
  const auto* p = reinterpret_cast<const unsigned char*>(buffer_.data() + offset_);
  const size_t n = (size_t{p[0]} << 24) | (size_t{p[1]} << 16) | (size_t{p[2]} << 8) | size_t{p[3]};
  if (n > kMaxFrameBytes) {
    return Err(InvalidArgumentError("execute_code RPC: frame of " + std::to_string(n) +
                                    " bytes exceeds the limit of " +
                                    std::to_string(kMaxFrameBytes)));
  }
  if (pending() < kFrameHeaderBytes + n) return std::optional<std::string>();
  std::string payload = buffer_.substr(offset_ + kFrameHeaderBytes, n);
  offset_ += kFrameHeaderBytes + n;
  // Compact once the consumed prefix dominates, so the buffer stays proportional to what is
  // pending rather than to everything ever received.
  if (offset_ == buffer_.size()) {
    buffer_.clear();
    offset_ = 0;
  } else if (offset_ > buffer_.size() / 2) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  return std::optional<std::string>(std::move(payload));
}

}  // namespace talaria::tools::code
