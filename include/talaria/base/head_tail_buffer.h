// HeadTailBuffer: keeps the first 40 % and the last 60 % of a byte stream of any length in fixed
// memory, then renders them with a marker naming what was left out (cuts on UTF-8 boundaries).
// The capture behind RunProcess's output limits, and behind anything else that relays a child's
// output (execute_code over SSH).
// Thread-safety: not thread-safe; caller synchronises.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace talaria {

class HeadTailBuffer {
 public:
  explicit HeadTailBuffer(size_t cap)
      : head_cap_(cap / 5 * 2 + (cap % 5) * 2 / 5), tail_cap_(cap - head_cap_) {}

  void Append(std::string_view data);
  // Bytes appended so far, kept or not.
  size_t total() const { return total_; }
  // Everything when it fit; else head + "\n... [OUTPUT TRUNCATED - N chars omitted out of T
  // total] ...\n" + tail.
  std::string Finish() &&;

 private:
  size_t head_cap_;
  size_t tail_cap_;
  std::string head_;
  std::string tail_;  // ring buffer once it reaches tail_cap_; oldest byte at pos_
  size_t pos_ = 0;
  size_t total_ = 0;
};

}  // namespace talaria
