#include "talaria/core/conflict_gate.h"

#include <utility>

namespace talaria {

void ConflictGate::Pass::Leave() {
  if (gate_ == nullptr) return;
  gate_->Release(ticket_);
  gate_ = nullptr;
}

bool ConflictGate::ClearAhead(std::list<Holder>::const_iterator self) const {
  for (auto it = holders_.begin(); it != self; ++it) {
    if (AdmissionsConflict(it->admission, self->admission)) return false;
  }
  return true;
}

std::optional<ConflictGate::Pass> ConflictGate::Enter(CallAdmission admission,
                                                      const std::stop_token& stop) {
  std::unique_lock lock(mu_);
  const uint64_t ticket = next_ticket_++;
  holders_.push_back(Holder{ticket, std::move(admission)});
  const auto self = std::prev(holders_.end());
  if (cv_.wait(lock, stop, [&] { return ClearAhead(self); })) return Pass(this, ticket);
  holders_.erase(self);
  lock.unlock();
  cv_.notify_all();  // calls behind this one may have waited for it
  return std::nullopt;
}

void ConflictGate::Release(uint64_t ticket) {
  {
    std::lock_guard lock(mu_);
    for (auto it = holders_.begin(); it != holders_.end(); ++it) {
      if (it->ticket == ticket) {
        holders_.erase(it);
        break;
      }
    }
  }
  cv_.notify_all();
}

size_t ConflictGate::size() const {
  std::lock_guard lock(mu_);
  return holders_.size();
}

}  // namespace talaria
