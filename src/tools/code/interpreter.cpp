#include "tools/code/interpreter.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <string_view>

#include "talaria/base/subprocess.h"
#include "talaria/env/bwrap.h"
#include "tools/code/landlock_confine.h"
#include "tools/code/seccomp_filter.h"
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

// The wrapper in front of the sandbox: $1 the cgroup.procs to enter ("" none), $2 non-empty when
// stdin holds the seccomp program for bwrap (moved to descriptor 4; the interpreter gets
// /dev/null), then the command. It executes the command in its own process (same pid, same
// process group), so the pid talaria spawned is still the sandbox's.
constexpr std::string_view kWrapper =
    "if [ -n \"$1\" ]; then\n"
    "  echo $$ > \"$1\" || { echo \"talaria: cannot enter the pids cgroup $1\" >&2; exit 71; }\n"
    "fi\n"
    "if [ -n \"$2\" ]; then shift 2; exec \"$@\" 4<&0 </dev/null; fi\n"
    "shift 2; exec \"$@\"\n";

// Python that sets RLIMIT_NPROC to the tasks of our real uid it can see plus `allowance`:
// under bwrap it sees its own PID namespace, which is what the kernel counts in the sandbox's user
// namespace; elsewhere the user's tasks on the host.
std::string NprocProgram(uint64_t allowance) {
  std::string program =
      "def _tasks():\n"
      "    import os as _o\n"
      "    _u, _n = _o.getuid(), 0\n"
      "    for _p in _o.listdir('/proc'):\n"
      "        if _p.isdigit():\n"
      "            try:\n"
      "                if _o.stat('/proc/' + _p).st_uid == _u: _n += len(_o.listdir('/proc/' + _p "
      "+ '/task'))\n"
      "            except OSError: pass\n"
      "    return _n\n"
      "_cap(_r.RLIMIT_NPROC, _tasks() + ";
  program += std::to_string(allowance);
  program += ")\ndel _tasks\n";
  return program;
}

// Python that caps the interpreter's resources before anything else runs: each limit at
// min(wanted, the current hard limit), soft = hard, so neither the script nor what it starts can
// raise it again. `nproc_allowance` > 0: RLIMIT_NPROC too (see NprocProgram).
std::string LimitsProgram(const CodeExecutionOptions& options, uint64_t nproc_allowance = 0) {
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
  if (nproc_allowance > 0) program += NprocProgram(nproc_allowance);
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

namespace {

// The regular files directly in `dir` (the script and its stub modules), absolute.
std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec)) files.push_back(entry.path().string());
  }
  return files;
}

}  // namespace

Result<InterpreterPlan> PlanInterpreter(const CodeExecutionOptions& options,
                                        const std::string& work_dir, const std::string& script,
                                        const ProcessLimit& limit) {
  if (options.python.empty() || options.python.front() != '/') {
    return Err(InvalidArgumentError("code_execution.python must be an absolute path, not '" +
                                    options.python + "'"));
  }
  if (::access(options.python.c_str(), X_OK) != 0) {
    return Err(NotFoundError("the Python interpreter '" + options.python +
                             "' is missing or not executable"));
  }
  InterpreterPlan plan;
  std::vector<std::string> notes;
  std::string program = BootstrapProgram();
  Status bwrap_status;
  if (options.sandbox == CodeSandbox::kAuto || options.sandbox == CodeSandbox::kBwrap) {
    bwrap_status = ProbeBwrapCached(options.bwrap);
    if (bwrap_status.ok()) {
      env::BwrapLayout layout;
      layout.bwrap = options.bwrap;
      layout.host = env::BwrapLayout::HostView::kSystemOnly;
      layout.network = options.network;
      // The working directory is a size-limited tmpfs inside, holding the script and its stub
      // modules read-only: what the script writes there cannot fill the host's /tmp.
      layout.scratch_dir = work_dir;
      layout.scratch_size_bytes = options.tmp_size_bytes;
      layout.scratch_files = FilesIn(work_dir);
      layout.chdir = work_dir;
      layout.tmp_size_bytes = options.tmp_size_bytes;
      layout.drop_capabilities = true;
      if (auto filter = SeccompProgram(SeccompProfile::kBwrap)) {
        layout.seccomp_fd = 4;
        plan.stdin_data = std::move(*filter);
      } else {
        notes.push_back("no seccomp filter (" + filter.error().message() + ")");
      }
      plan.argv = env::BwrapArgv(layout);
      plan.isolation = Isolation::kBwrap;
    } else if (options.sandbox == CodeSandbox::kBwrap) {
      return Err(FailedPreconditionError(
          "execute_code needs a sandbox and bubblewrap is unusable here (" +
          bwrap_status.message() +
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
      why +=
          " nor Landlock is usable here; set code_execution.sandbox: none to run scripts without "
          "isolation";
      return Err(FailedPreconditionError(std::move(why)));
    }
    // Landlock cannot hold back the network the way a namespace does, so `network: true` only
    // matters under bwrap; here TCP and non-unix sockets stay closed.
    std::string filter;
    if (auto compiled = SeccompProgram(SeccompProfile::kLandlock)) {
      filter = std::move(*compiled);
    } else {
      notes.push_back("no seccomp filter (" + compiled.error().message() + ")");
    }
    program = ConfineProgram(work_dir, filter) + program;
    plan.isolation = Isolation::kLandlock;
    notes.push_back(
        "landlock: the working directory is on the host's file system, bounded per file "
        "(max_file_mb), not in total; no private /tmp");
  }
  uint64_t nproc_allowance = 0;
  if (limit.cgroup_procs.empty()) {
    nproc_allowance = options.max_processes;
    if (::getuid() == 0) {
      notes.push_back("process limit does not hold: no pids cgroup (" + limit.no_cgroup_reason +
                      ") and the kernel does not enforce RLIMIT_NPROC for root");
    } else {
      notes.push_back("tasks bounded by RLIMIT_NPROC, counted per user (no pids cgroup: " +
                      limit.no_cgroup_reason + ")");
    }
  }
  program = LimitsProgram(options, nproc_allowance) + program;
  plan.argv.insert(plan.argv.end(),
                   {options.python, "-I", "-S", "-c", std::move(program), script, work_dir});
  if (!limit.cgroup_procs.empty() || !plan.stdin_data.empty()) {
    std::vector<std::string> wrapped = {"/bin/sh",
                                        "-c",
                                        std::string(kWrapper),
                                        "talaria-sandbox",
                                        limit.cgroup_procs,
                                        plan.stdin_data.empty() ? "" : "seccomp"};
    wrapped.insert(wrapped.end(), std::make_move_iterator(plan.argv.begin()),
                   std::make_move_iterator(plan.argv.end()));
    plan.argv = std::move(wrapped);
  }
  plan.env = ScrubbedEnvironment(work_dir);
  for (const std::string& note : notes) {
    if (!plan.note.empty()) plan.note += "; ";
    plan.note += note;
  }
  return plan;
}

std::string RemoteInterpreterProgram(const CodeExecutionOptions& options) {
  return LimitsProgram(options) + BootstrapProgram();
}

}  // namespace talaria::tools::code
