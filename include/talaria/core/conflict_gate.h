// ConflictGate: runs calls that arrive one by one (MCP tools/call) together exactly when the batch
// planner would let them share a run (AdmissionsConflict, batch_planner.h), and holds the others
// until what they conflict with has finished. A call waits for every call ahead of it, running
// or waiting, that it conflicts with: calls that conflict keep their arrival order, so a writer
// or a barrier is never starved by a stream of readers, while calls that conflict with nothing
// ahead go straight in. Every wait ends when the caller's stop token fires.
// Thread-safety: thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <stop_token>

#include "talaria/core/batch_planner.h"

namespace talaria {

class ConflictGate {
 public:
  // A place in the gate; Leave() gives it back. Move-only.
  class Pass {
   public:
    Pass(Pass&& other) noexcept : gate_(other.gate_), ticket_(other.ticket_) {
      other.gate_ = nullptr;
    }
    Pass& operator=(Pass&&) = delete;
    Pass(const Pass&) = delete;
    ~Pass() { Leave(); }
    void Leave();

   private:
    friend class ConflictGate;
    Pass(ConflictGate* gate, uint64_t ticket) : gate_(gate), ticket_(ticket) {}
    ConflictGate* gate_;
    uint64_t ticket_;
  };

  // Waits until `admission` conflicts with no call ahead of it; nullopt (holding nothing) when
  // `stop` fired first.
  std::optional<Pass> Enter(CallAdmission admission, const std::stop_token& stop);

  // Calls inside or waiting (for tests and diagnostics).
  size_t size() const;

 private:
  struct Holder {
    uint64_t ticket;
    CallAdmission admission;
  };
  bool ClearAhead(std::list<Holder>::const_iterator self) const;  // REQUIRES: mu_ held
  void Release(uint64_t ticket);

  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::list<Holder> holders_;  // arrival order, running and waiting. Guarded by mu_.
  uint64_t next_ticket_ = 0;   // Guarded by mu_.
};

}  // namespace talaria
