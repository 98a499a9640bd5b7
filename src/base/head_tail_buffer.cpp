#include "talaria/base/head_tail_buffer.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace talaria {
namespace {

// Length of the UTF-8 sequence introduced by `lead` (1 for ASCII and for stray bytes).
size_t LeadByteSequenceLength(unsigned char lead) {
  if (lead >= 0xF0 && lead < 0xF8) return 4;
  if (lead >= 0xE0) return lead < 0xF0 ? 3 : 1;
  if (lead >= 0xC0) return 2;
  return 1;
}

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Drops an incomplete UTF-8 sequence from the end of `s`.
void TrimIncompleteUtf8Tail(std::string& s) {
  const size_t n = s.size();
  const size_t limit = n >= 4 ? n - 4 : 0;
  for (size_t i = n; i > limit;) {
    --i;
    const auto c = static_cast<unsigned char>(s[i]);
    if (IsContinuation(c)) continue;
    if (i + LeadByteSequenceLength(c) > n) s.erase(i);
    return;
  }
}

// Drops continuation bytes (the rest of a sequence that began before the cut) from the front.
void TrimOrphanUtf8Head(std::string& s) {
  size_t skip = 0;
  while (skip < 3 && skip < s.size() && IsContinuation(static_cast<unsigned char>(s[skip]))) {
    ++skip;
  }
  s.erase(0, skip);
}

}  // namespace

void HeadTailBuffer::Append(std::string_view data) {
  total_ += data.size();
  if (head_.size() < head_cap_) {
    const size_t n = std::min(head_cap_ - head_.size(), data.size());
    head_.append(data.substr(0, n));
    data.remove_prefix(n);
  }
  if (data.empty() || tail_cap_ == 0) return;
  if (data.size() >= tail_cap_) {
    tail_.assign(data.substr(data.size() - tail_cap_));
    pos_ = 0;
    return;
  }
  if (tail_.size() < tail_cap_) {
    const size_t n = std::min(tail_cap_ - tail_.size(), data.size());
    tail_.append(data.substr(0, n));
    data.remove_prefix(n);
  }
  while (!data.empty()) {  // ring is full: overwrite the oldest bytes
    const size_t n = std::min(tail_cap_ - pos_, data.size());
    std::memcpy(tail_.data() + pos_, data.data(), n);
    pos_ = (pos_ + n) % tail_cap_;
    data.remove_prefix(n);
  }
}

std::string HeadTailBuffer::Finish() && {
  std::string tail = tail_.substr(pos_) + tail_.substr(0, pos_);
  if (head_.size() + tail.size() == total_) return std::move(head_) + tail;
  TrimIncompleteUtf8Tail(head_);
  TrimOrphanUtf8Head(tail);
  const size_t omitted = total_ - head_.size() - tail.size();
  return std::move(head_) + "\n... [OUTPUT TRUNCATED - " + std::to_string(omitted) +
         " chars omitted out of " + std::to_string(total_) + " total] ...\n" + tail;
}

}  // namespace talaria
