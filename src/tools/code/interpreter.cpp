#include "tools/code/interpreter.h"

#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <set>

#include "talaria/base/subprocess.h"
#include "talaria/env/bwrap.h"
#include "tools/code/landlock_confine.h"
#include "tools/code/stub_module.h"

namespace talaria::tools::code {
namespace {

// A bwrap that worked once keeps working; probing costs a spawn (5-10 ms) per execution. A
// failure is not remembered, so installing bubblewrap takes effect without a restart.
Status ProbeBwrapCached(const std::string& bwrap) {
  static std::mutex mu;
  static std::set<std::string> working;  // Guarded by mu.
  {
    std::lock_guard lock(mu);
    if (working.count(bwrap) != 0) return {};
  }
  Status s = env::ProbeBwrap(bwrap);
  if (s.ok()) {
    std::lock_guard lock(mu);
    working.insert(bwrap);
  }
  return s;
}

std::vector<std::string> ScrubbedEnvironment(const std::string& work_dir) {
  std::vector<std::string> env = {
      "PATH=/usr/local/bin:/usr/bin:/bin",
      "LANG=C.UTF-8",
      "LC_ALL=C.UTF-8",
      "TERM=dumb",
      "PYTHONIOENCODING=utf-8",
      "PYTHONDONTWRITEBYTECODE=1",
  };
  // Where the RPC socket is (documentation for scripts; the stubs know it).
  env.push_back("TALARIA_RPC_FD=" + std::to_string(kInheritedFd));
  for (const char* name : {"HOME=", "TMPDIR="}) {
    std::string entry = name;
    entry += work_dir;
    env.push_back(std::move(entry));
  }
  if (const char* tz = std::getenv("TZ"); tz != nullptr && *tz != '\0') {
    std::string entry = "TZ=";
    entry += tz;
    env.push_back(std::move(entry));
  }
  return env;
}

// Python that caps the interpreter's resources before anything else runs: each limit at
// min(wanted, the current hard limit), soft = hard, so neither the script nor what it starts can
// raise it again.
std::string LimitsProgram(const CodeExecutionOptions& options) {
  std::string program =
      "import resource as _r\n"
      "def _cap(_k, _v):\n"
      "    _h = _r.getrlimit(_k)[1]\n"
      "    if _h != _r.RLIM_INFINITY and _h < _v: _v = _h\n"
      "    _r.setrlimit(_k, (_v, _v))\n";
  const auto cap = [&program](std::string_view name, uint64_t value) {
    program += "_cap(_r.";
    program += name;
    program += ", ";
    program += std::to_string(value);
    program += ")\n";
  };
  if (options.max_memory_bytes > 0) cap("RLIMIT_AS", options.max_memory_bytes);
  if (options.max_file_bytes > 0) cap("RLIMIT_FSIZE", options.max_file_bytes);
  if (options.max_open_files > 0) cap("RLIMIT_NOFILE", options.max_open_files);
  // One second past the wall-clock timeout: a script that only computes dies by SIGXCPU even if
  // the kill on timeout were missed; children get their own budget of the same size.
  cap("RLIMIT_CPU", static_cast<uint64_t>(options.timeout.count()) + 1);
  cap("RLIMIT_CORE", 0);  // no core file with the script's memory in it
  program += "del _r, _cap\n";
  return program;
}

}  // namespace

std::string_view IsolationName(Isolation isolation) {
  switch (isolation) {
    case Isolation::kBwrap:
      return "bwrap";
    case Isolation::kLandlock:
      return "landlock+seccomp";
    case Isolation::kNone:
      break;
  }
  return "none";
}

Result<InterpreterPlan> PlanInterpreter(const CodeExecutionOptions& options, const std::string& work_dir,
                                        const std::string& script) {
  if (options.python.empty() || options.python.front() != '/') {
    return Err(InvalidArgumentError("code_execution.python must be an absolute path, not '" + options.python + "'"));
  }
  if (::access(options.python.c_str(), X_OK) != 0) {
    return Err(NotFoundError("the Python interpreter '" + options.python + "' is missing or not executable"));
  }
  InterpreterPlan plan;
  std::string program = BootstrapProgram();
  Status bwrap_status;
  if (options.sandbox == CodeSandbox::kAuto || options.sandbox == CodeSandbox::kBwrap) {
    bwrap_status = ProbeBwrapCached(options.bwrap);
    if (bwrap_status.ok()) {
      env::BwrapLayout layout;
      layout.bwrap = options.bwrap;
      layout.host = env::BwrapLayout::HostView::kSystemOnly;
      layout.network = options.network;
      layout.writable = {work_dir};
      layout.chdir = work_dir;
      plan.argv = env::BwrapArgv(layout);
      plan.isolation = Isolation::kBwrap;
    } else if (options.sandbox == CodeSandbox::kBwrap) {
      return Err(FailedPreconditionError(
          "execute_code needs a sandbox and bubblewrap is unusable here (" + bwrap_status.message() +
          "); install bubblewrap, or set code_execution.sandbox: landlock or none"));
    }
  }
  if (plan.isolation == Isolation::kNone && options.sandbox != CodeSandbox::kNone) {
    if (LandlockAbi() < 1) {
      std::string why = "execute_code needs a sandbox and neither bubblewrap";
      if (!bwrap_status.ok()) {
        why += " (";
        why += bwrap_status.message();
        why += ")";
      }
      why += " nor Landlock is usable here; set code_execution.sandbox: none to run scripts without isolation";
      return Err(FailedPreconditionError(std::move(why)));
    }
    // Landlock cannot hold back the network the way a namespace does, so `network: true` only
    // matters under bwrap; here TCP and non-unix sockets stay closed.
    program = ConfineProgram(work_dir) + program;
    plan.isolation = Isolation::kLandlock;
  }
  program = LimitsProgram(options) + program;
  plan.argv.insert(plan.argv.end(), {options.python, "-I", "-S", "-c", std::move(program), script, work_dir});
  plan.env = ScrubbedEnvironment(work_dir);
  return plan;
}

std::string RemoteInterpreterProgram(const CodeExecutionOptions& options) {
  return LimitsProgram(options) + BootstrapProgram();
}

}  // namespace talaria::tools::code
