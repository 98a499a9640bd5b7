// The live progress line `talaria batch` draws on a terminal's stderr:
//   "[3/8] running: read_file, search_files (+2) · 1.4s"
// redrawn in place as calls start and finish, and erased when the batch is done.
// Thread-safety: thread-safe (workers report events; a ticker redraws the elapsed time).
#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "talaria/core/batch_executor.h"

namespace talaria::cli {

class BatchProgress {
 public:
  BatchProgress(std::FILE* out, const std::vector<BatchCall>& calls);
  void OnEvent(const BatchEvent& event);
  void Redraw();
  // Erases the line; later redraws do nothing.
  void Finish();

 private:
  void DrawLocked();

  std::FILE* out_;
  const std::vector<BatchCall>& calls_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::mutex mu_;
  std::vector<bool> running_;  // Guarded by mu_.
  size_t done_ = 0;            // Guarded by mu_.
  bool finished_ = false;      // Guarded by mu_.
};

}  // namespace talaria::cli
