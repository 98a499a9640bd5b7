#include "output_watch.h"

#include <algorithm>

namespace talaria::env {

bool NoticeBreaker::Admit(Clock::time_point now) {
  if (now < cooled_until_) return false;
  while (!recent_.empty() && now - recent_.front() >= limits_.window) recent_.pop_front();
  if (recent_.size() >= limits_.max_notices) {
    cooled_until_ = now + limits_.cooldown;
    recent_.clear();
    return false;
  }
  recent_.push_back(now);
  return true;
}

OutputWatch::OutputWatch(std::vector<std::string> patterns, WatchLimits limits) : limits_(limits) {
  for (auto& p : patterns) {
    if (!p.empty()) patterns_.push_back(std::move(p));
  }
}

bool OutputWatch::Matches(std::string_view line) const {
  return std::any_of(patterns_.begin(), patterns_.end(), [line](const std::string& p) {
    return line.find(p) != std::string_view::npos;
  });
}

OutputWatch::Outcome OutputWatch::Feed(std::string_view chunk, Clock::time_point now,
                                       NoticeBreaker& breaker) {
  Outcome out;
  if (!active()) return out;
  std::string matched;
  size_t matched_count = 0;
  auto consider = [&](std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!Matches(line)) return;
    ++matched_count;
    if (matched.size() < limits_.max_excerpt_bytes) {
      if (!matched.empty()) matched += '\n';
      matched.append(line.substr(
          0, limits_.max_excerpt_bytes - std::min(matched.size(), limits_.max_excerpt_bytes)));
    }
  };
  while (!chunk.empty()) {
    const size_t nl = chunk.find('\n');
    const std::string_view piece = chunk.substr(0, nl);
    if (carry_.size() < limits_.max_line_bytes) {
      carry_.append(piece.substr(0, limits_.max_line_bytes - carry_.size()));
    }
    if (nl == std::string_view::npos) break;
    consider(carry_);
    carry_.clear();
    chunk.remove_prefix(nl + 1);
  }
  if (matched_count == 0) return out;

  const bool in_interval = noticed_once_ && now - last_notice_ < limits_.interval;
  if (in_interval || !breaker.Admit(now)) {
    // One strike per interval, however many lines were dropped in it.
    if (in_interval && struck_window_ != last_notice_) {
      struck_window_ = last_notice_;
      if (++strikes_ >= limits_.max_strikes) {
        disabled_ = true;
        out.event = Event::kDisabled;
      }
    }
    return out;
  }
  noticed_once_ = true;
  last_notice_ = now;
  out.event = Event::kMatched;
  out.lines = std::move(matched);
  if (++hits_ >= limits_.max_hits) disabled_ = true;
  return out;
}

}  // namespace talaria::env
