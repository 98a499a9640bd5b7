// Background processes in a remote sandbox (Environment::Start for the sandbox services). The
// services' exec calls run a command to its end, so a background command is started detached in
// the sandbox (its own session, output to a file in the session's state directory, its exit
// status to another) and relayed: a local stand-in process (`sh` running `cat` on a socket) is
// what the caller owns, and a relay thread polls the sandbox for new output (base64, so any
// bytes survive the services' JSON) and the exit status, writes the output to the stand-in and
// ends it with the command's exit code. Killing the stand-in (the process table's kill) makes
// the relay end the remote process group; so does closing the environment.
// Input (StartOptions::stdin_pipe): the caller writes a local pipe; the relay forwards what
// arrives, one call per chunk (base64), to a FIFO the job reads in the sandbox, and its end of
// file closes the job's input. A job that has ended or does not take its input within 20 s
// gets no more: the pipe is closed, and the caller's next write says so. No terminal: with
// `pty` the stand-in is on one, the job is not.
// Thread-safety: thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "sandboxes/sandbox_api.h"
#include "talaria/base/spawn.h"
#include "talaria/base/status.h"
#include "talaria/base/unique_fd.h"

namespace talaria::sandboxes {

class RemoteJobs {
 public:
  // `api` outlives this; `state_dir` is the session's private directory in the sandbox.
  RemoteJobs(SandboxApi& api, std::string state_dir);
  // Ends every relay and the remote process groups still running.
  ~RemoteJobs();
  RemoteJobs(const RemoteJobs&) = delete;
  RemoteJobs& operator=(const RemoteJobs&) = delete;

  // Starts `command` (already in a form the service takes: see RemoteEnvironment) in `cwd`.
  // Errors: the service's, Unavailable when the sandbox did not start it, Internal (local
  // socket or process).
  Result<StartedProcess> Start(std::string_view command, const std::string& cwd,
                               const StartOptions& start);

 private:
  void Relay(const std::stop_token& stop, const std::string& id, int sink, UniqueFd input,
             const std::string& code_path);
  // Forwards what `input` has (or its end of file) to job `id`; false when its input is closed.
  bool ForwardInput(const std::stop_token& stop, const std::string& id, const UniqueFd& input);
  void KillRemote(const std::string& id);

  SandboxApi& api_;
  const std::string state_dir_;
  std::atomic<uint64_t> next_id_{0};
  std::mutex mu_;
  std::vector<std::jthread> relays_;  // Guarded by mu_.
};

}  // namespace talaria::sandboxes
