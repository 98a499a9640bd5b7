// One RL training run: the three processes of the original's start sequence, supervised by a
// thread of its own. run-api first; once it accepts connections on the api_url's port, the
// trainer (launch_training.py --config); once the trainer's inference server accepts
// connections, the environment (<file> serve --config). Readiness is polled every 100 ms, not
// waited for with fixed sleeps (the original slept 5 + 30 + 90 + 10 s whatever happened), and a
// process that exits while the run starts fails it at once, naming its log.
//
// Each process runs in its own process group (base/spawn.h); its merged output is copied into
// $TALARIA_HOME/logs/rl_training/<role>_<run>.log. Stopping ends the groups in reverse order
// (environment, trainer, API: SIGTERM, stop_grace, SIGKILL) and reaps them; so does destroying
// the run, so no training process outlives talaria's clean exit.
// Thread-safety: thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/base/status.h"

namespace talaria::rl {

enum class RunStatus { kStarting, kRunning, kStopped, kCompleted, kFailed };
std::string_view RunStatusName(RunStatus s);

struct ProcessPlan {
  std::string role;  // "api", "trainer", "env"
  std::vector<std::string> argv;
  std::string log_path;
  std::string ready_host;  // the process is ready once this host:port accepts; "" = at spawn
  int ready_port = 0;
};

struct RunPlan {
  std::string run_id;
  std::string environment;
  std::string cwd;
  std::vector<ProcessPlan> processes;  // started in order, each after the previous is ready
  std::chrono::seconds startup_timeout{600};
  std::chrono::seconds stop_grace{10};
};

struct ProcessState {
  std::string role;
  std::string state;  // "not started", "running", "exited (N)"
  int pid = -1;
};

struct RunSnapshot {
  RunStatus status = RunStatus::kStarting;
  std::string error;
  double running_minutes = 0;  // since every process was up; 0 before
  std::vector<ProcessState> processes;
};

class TrainingRun {
 public:
  // Starts the supervisor (which starts the first process).
  explicit TrainingRun(RunPlan plan);
  ~TrainingRun();  // stops the run
  TrainingRun(const TrainingRun&) = delete;
  TrainingRun& operator=(const TrainingRun&) = delete;

  const RunPlan& plan() const { return plan_; }
  RunSnapshot Snapshot() const;
  // Ends every process and waits for the supervisor; a starting or running run becomes
  // stopped. Idempotent.
  void Stop();

 private:
  struct Child;
  void Supervise(const std::stop_token& stop);
  bool SpawnNext();
  void Fail(std::string message);
  void EndAll();
  void DrainOutputs();
  bool ReapExited();  // true when a process exited this round
  void FinishAfterExit();

  const RunPlan plan_;
  mutable std::mutex mu_;
  RunStatus status_ = RunStatus::kStarting;                // Guarded by mu_.
  std::string error_;                                      // Guarded by mu_.
  std::chrono::steady_clock::time_point running_since_{};  // Guarded by mu_.
  std::vector<std::unique_ptr<Child>> children_;           // Guarded by mu_ for reads elsewhere.
  std::mutex stop_mu_;                                     // serialises Stop calls
  std::jthread thread_;                                    // last: stopped first
};

// Whether something accepts a TCP connection on host:port within `wait`.
bool PortAccepts(const std::string& host, int port, std::chrono::milliseconds wait);

// host and port of an http(s) URL ("http://localhost:8000/v1" -> localhost, 8000); port 0
// when the URL does not parse.
std::pair<std::string, int> HostPortOf(std::string_view url);

}  // namespace talaria::rl
