// One execute_code call from start to result: a private working directory with the script and
// the stubs, the RPC socketpair, the interpreter under its sandbox (or, when the session's
// terminal is an SSH machine, on that machine over the exec channel), the RPC server and call
// gate for its tool calls, and the result in the original's shape.
// Thread-safety: Run is thread-safe; concurrent executions share nothing but the dispatcher.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/base/unique_fd.h"
#include "talaria/core/dispatcher.h"
#include "talaria/guard/command_guard.h"
#include "talaria/tools/code_execution.h"

namespace talaria::tools::code {

class RpcServer;
struct RpcServerStats;
struct ScriptRun;

class CodeRunner {
 public:
  // `allowed`: the tools scripts may call (sorted); `stub_source`: talaria_tools.py for them.
  CodeRunner(const Dispatcher& dispatcher, CodeExecutionOptions options,
             std::vector<std::string> allowed, std::string stub_source, safety::GuardOptions guard);

  ToolResult Run(const Json& args, ToolContext& ctx) const;

 private:
  using Clock = std::chrono::steady_clock;

  // Runs the script in a private directory here, under the sandbox.
  Result<ScriptRun> RunLocal(const std::string& code, UniqueFd script_end, RpcServer& server,
                             Clock::time_point deadline, ToolContext& ctx) const;
  // Runs the script on the session's remote machine, over its exec channel (remote_channel.h).
  Result<ScriptRun> RunRemote(const std::string& code, UniqueFd script_end, RpcServer& server,
                              Clock::time_point deadline, ToolContext& ctx) const;
  // The result in the original's shape.
  ToolResult Conclude(const ScriptRun& ran, const RpcServerStats& rpc, int calls,
                      Clock::time_point started, Clock::time_point deadline,
                      ToolContext& ctx) const;

  const Dispatcher& dispatcher_;
  const CodeExecutionOptions options_;
  const std::vector<std::string> allowed_;
  const std::string stub_source_;
  const safety::GuardOptions guard_;
};

}  // namespace talaria::tools::code
