#include "cli/batch_progress.h"

namespace talaria::cli {
namespace {

constexpr size_t kNamesShown = 3;

}  // namespace

BatchProgress::BatchProgress(std::FILE* out, const std::vector<BatchCall>& calls)
    : out_(out), calls_(calls), running_(calls.size(), false) {}

void BatchProgress::OnEvent(const BatchEvent& event) {
  std::lock_guard lock(mu_);
  if (event.index >= running_.size()) return;
  if (event.kind == BatchEvent::Kind::kStarted) {
    running_[event.index] = true;
  } else {
    running_[event.index] = false;
    ++done_;
  }
  DrawLocked();
}

void BatchProgress::Redraw() {
  std::lock_guard lock(mu_);
  DrawLocked();
}

void BatchProgress::Finish() {
  std::lock_guard lock(mu_);
  if (finished_) return;
  finished_ = true;
  std::fputs("\r\x1b[K", out_);
  std::fflush(out_);
}

void BatchProgress::DrawLocked() {
  if (finished_) return;
  std::string line =
      "\r\x1b[K[" + std::to_string(done_) + "/" + std::to_string(calls_.size()) + "]";
  size_t shown = 0, more = 0;
  for (size_t i = 0; i < running_.size(); ++i) {
    if (!running_[i]) continue;
    if (shown == kNamesShown) {
      ++more;
      continue;
    }
    line += shown == 0 ? " running: " : ", ";
    line += calls_[i].name;
    ++shown;
  }
  if (more > 0) line += " (+" + std::to_string(more) + ")";
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, " \xC2\xB7 %.1fs",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count());
  line += elapsed;
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
}

}  // namespace talaria::cli
