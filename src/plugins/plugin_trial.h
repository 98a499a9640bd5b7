// PluginTrial: loads candidate plugins in a throwaway process (talaria-plugin-trial) ahead of
// the real, in-process load, so a plugin that crashes (SIGSEGV, abort), exits or hangs in its
// static constructors or its registration is caught there and reported as failed, and talaria
// goes on with the others. The trial process starts at construction and runs ahead on its own;
// the loader asks for each verdict in turn (Await), usually finding it already written.
//
// No thread of ours waits on the trial: Await reads its verdicts. (A helper thread made every
// mprotect of the loader's dlopen calls cost a cross-CPU TLB shootdown, measured at 60 ms for
// 500 plugins.) A trial process dies with its culprit; the next one starts with the candidate
// after it. A plugin that crashes only in the host (not deterministically) is not contained: the
// trial is a rehearsal, not a sandbox.
// Thread-safety: not thread-safe; one thread constructs, awaits and destroys. The destructor
// kills a trial process still running.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "talaria/base/spawn.h"
#include "talaria/base/unique_fd.h"

namespace talaria::plugins {

struct TrialVerdict {
  enum class Outcome : unsigned char {
    kPassed,  // loaded and registered in the trial process, which lived on
    kFailed,  // the trial process died or hung on it; `reason` says how
    kNotRun,  // the trial process could not be started; `reason` says why
  };
  Outcome outcome = Outcome::kNotRun;
  std::string reason;
};

// The trial executable: $TALARIA_PLUGIN_TRIAL when set, else talaria-plugin-trial beside the
// shared library holding this code. Empty when not found.
std::string FindTrialExecutable();

class PluginTrial {
 public:
  // Starts trying `paths` in order with `executable`; each plugin gets `per_plugin_timeout` to
  // load and register before its trial process is killed and it is judged hung.
  PluginTrial(std::string executable, std::vector<std::string> paths,
              std::chrono::milliseconds per_plugin_timeout);
  ~PluginTrial();
  PluginTrial(const PluginTrial&) = delete;
  PluginTrial& operator=(const PluginTrial&) = delete;

  // The verdict on paths[index]; blocks until it is known (at most about the per-plugin timeout
  // for each plugin still ahead of it).
  TrialVerdict Await(size_t index);

 private:
  struct Attempt {
    StartedProcess child;
    UniqueFd protocol;    // read end of the verdict lines (the child's descriptor 3)
    size_t first = 0;     // paths_[first] is the child's candidate 0
    bool ready = false;   // the child read its list and said so
    std::string pending;  // a verdict line not complete yet
    std::string output;   // the tail of the child's stdout and stderr
  };

  // Starts a trial process over paths_[first..]; false (and every candidate from `first` on
  // judged not run) when it cannot start.
  bool Start(size_t first);
  // Waits for the running trial up to the current plugin's deadline and takes in what it wrote;
  // ends the attempt when the child exited or hung, or abandons it when poll itself failed.
  void Pump();
  void ReadProtocol();
  void DrainOutput();
  // Kills what is left of the attempt's process group (the child too when `kill_first`), reaps
  // the child and takes in its last words; how the child ended.
  siginfo_t Reap(bool kill_first);
  // Ends the attempt and judges the candidate it was on (unless everything was judged).
  void Finish(bool hung);
  // Ends the attempt for a failure of ours: every candidate not yet judged is judged not run.
  void Abandon(const std::string& why);
  void Judge(size_t index, TrialVerdict verdict);
  void JudgeRestNotRun(size_t first, const std::string& why);

  const std::string executable_;
  const std::vector<std::string> paths_;
  const std::chrono::milliseconds per_plugin_timeout_;
  std::vector<std::optional<TrialVerdict>> verdicts_;
  size_t judged_ = 0;  // verdicts come in order: [0, judged_) are known
  std::chrono::steady_clock::time_point progress_at_;
  std::optional<Attempt> attempt_;
};

}  // namespace talaria::plugins
