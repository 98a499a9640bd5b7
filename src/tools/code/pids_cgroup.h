// A pids cgroup for one execute_code run: a child of a cgroup talaria may write (its own, when
// cgroup v2 delegates the pids controller to it or the v1 pids hierarchy is writable; or one
// configured as code_execution.pids_cgroup), with pids.max set, which the interpreter's wrapper
// enters (writing its pid to cgroup.procs) before it executes the sandbox, so every task the
// script ever starts counts against the limit, whatever uid it runs as. Removed, with anything
// still in it killed, when the run ends.
// Thread-safety: Create is thread-safe (discovery runs once); an instance is not shared.
#pragma once

#include <cstdint>
#include <string>

#include "talaria/base/status.h"

namespace talaria::tools::code {

class PidsCgroup {
 public:
  // `parent`: "auto" (discover, as above) or the absolute path of a cgroup directory whose
  // children get the pids controller. Errors: Unavailable, saying why, when there is no such
  // cgroup here or it cannot be written; InvalidArgument for a bad `parent`.
  static Result<PidsCgroup> Create(const std::string& parent, uint64_t max_tasks);

  PidsCgroup(PidsCgroup&& other) noexcept;
  PidsCgroup& operator=(PidsCgroup&&) = delete;
  // Kills what is left inside (cgroup.kill where the kernel has it) and removes the directory.
  ~PidsCgroup();

  const std::string& path() const { return path_; }
  // The file a process writes its pid into to enter.
  std::string procs_path() const { return path_ + "/cgroup.procs"; }

 private:
  explicit PidsCgroup(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// The cgroup "auto" discovers, or why there is none (found once per process).
Result<std::string> DiscoverPidsCgroupParent();

}  // namespace talaria::tools::code
