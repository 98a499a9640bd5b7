// One execute_code call from start to result: a private working directory with the script and
// the stubs, the RPC socketpair, the interpreter under its sandbox, the RPC server and call gate
// for its tool calls, and the result in the original's shape.
// Thread-safety: Run is thread-safe; concurrent executions share nothing but the dispatcher.
#pragma once

#include <string>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/core/dispatcher.h"
#include "talaria/safety/command_guard.h"
#include "talaria/tools/code_execution.h"

namespace talaria::tools::code {

class CodeRunner {
 public:
  // `allowed`: the tools scripts may call (sorted); `stub_source`: talaria_tools.py for them.
  CodeRunner(const Dispatcher& dispatcher, CodeExecutionOptions options, std::vector<std::string> allowed,
             std::string stub_source, safety::GuardOptions guard);

  ToolResult Run(const Json& args, ToolContext& ctx) const;

 private:
  const Dispatcher& dispatcher_;
  const CodeExecutionOptions options_;
  const std::vector<std::string> allowed_;
  const std::string stub_source_;
  const safety::GuardOptions guard_;
};

}  // namespace talaria::tools::code
