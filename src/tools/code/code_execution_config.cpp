// CodeExecutionOptionsFromConfig: the `code_execution` section of config.yaml.
#include "talaria/core/config_section.h"
#include "talaria/tools/code_execution.h"

namespace talaria::tools {

Result<CodeExecutionOptions> CodeExecutionOptionsFromConfig(const Config& config,
                                                            CodeExecutionOptions base) {
  const ConfigSection c = TALARIA_TRY(ConfigSection::Of(config, "code_execution"));
  TALARIA_RETURN_IF_ERROR(c.ReadString("python", base.python));
  if (base.python.empty() || base.python.front() != '/')
    return Err(c.Bad("python", "an absolute path"));
  TALARIA_RETURN_IF_ERROR(c.ReadString("remote_python", base.remote_python));
  if (base.remote_python.empty()) return Err(c.Bad("remote_python", "an interpreter name or path"));
  std::string sandbox;
  TALARIA_RETURN_IF_ERROR(c.ReadString("sandbox", sandbox));
  if (sandbox == "auto") {
    base.sandbox = CodeSandbox::kAuto;
  } else if (sandbox == "bwrap") {
    base.sandbox = CodeSandbox::kBwrap;
  } else if (sandbox == "landlock") {
    base.sandbox = CodeSandbox::kLandlock;
  } else if (sandbox == "none") {
    base.sandbox = CodeSandbox::kNone;
  } else if (!sandbox.empty()) {
    return Err(c.Bad("sandbox", "one of auto, bwrap, landlock, none (got '" + sandbox + "')"));
  }
  TALARIA_RETURN_IF_ERROR(c.ReadBool("network", base.network));
  std::string approvals;
  TALARIA_RETURN_IF_ERROR(c.ReadString("approvals", approvals));
  if (approvals == "inherit") {
    base.approvals = ScriptApprovals::kInherit;
  } else if (approvals == "deny") {
    base.approvals = ScriptApprovals::kDeny;
  } else if (!approvals.empty()) {
    return Err(c.Bad("approvals", "inherit or deny (got '" + approvals + "')"));
  }
  int64_t timeout = base.timeout.count();
  TALARIA_RETURN_IF_ERROR(c.ReadInt("timeout", 1, 86'400, timeout));
  base.timeout = std::chrono::seconds(timeout);
  int64_t calls = base.max_tool_calls;
  TALARIA_RETURN_IF_ERROR(c.ReadInt("max_tool_calls", 1, 100'000, calls));
  base.max_tool_calls = static_cast<int>(calls);
  auto stdout_bytes = static_cast<int64_t>(base.max_stdout_bytes);
  TALARIA_RETURN_IF_ERROR(c.ReadInt("max_stdout_bytes", 1, int64_t{1} << 30, stdout_bytes));
  base.max_stdout_bytes = static_cast<size_t>(stdout_bytes);
  auto stderr_bytes = static_cast<int64_t>(base.max_stderr_bytes);
  TALARIA_RETURN_IF_ERROR(c.ReadInt("max_stderr_bytes", 1, int64_t{1} << 30, stderr_bytes));
  base.max_stderr_bytes = static_cast<size_t>(stderr_bytes);
  constexpr int64_t kMiB = int64_t{1} << 20;
  auto memory_mb = static_cast<int64_t>(base.max_memory_bytes / kMiB);
  TALARIA_RETURN_IF_ERROR(c.ReadInt("max_memory_mb", 0, int64_t{1} << 30, memory_mb));
  base.max_memory_bytes = static_cast<uint64_t>(memory_mb) * kMiB;
  auto file_mb = static_cast<int64_t>(base.max_file_bytes / kMiB);
  TALARIA_RETURN_IF_ERROR(c.ReadInt("max_file_mb", 0, int64_t{1} << 30, file_mb));
  base.max_file_bytes = static_cast<uint64_t>(file_mb) * kMiB;
  auto open_files = static_cast<int64_t>(base.max_open_files);
  TALARIA_RETURN_IF_ERROR(c.ReadInt("max_open_files", 0, int64_t{1} << 20, open_files));
  base.max_open_files = static_cast<uint64_t>(open_files);
  auto processes = static_cast<int64_t>(base.max_processes);
  TALARIA_RETURN_IF_ERROR(c.ReadInt("max_processes", 1, 1 << 20, processes));
  base.max_processes = static_cast<uint64_t>(processes);
  TALARIA_RETURN_IF_ERROR(c.ReadString("pids_cgroup", base.pids_cgroup));
  if (base.pids_cgroup != "auto" && base.pids_cgroup != "off" &&
      (base.pids_cgroup.empty() || base.pids_cgroup.front() != '/')) {
    return Err(c.Bad("pids_cgroup", "auto, off or an absolute path"));
  }
  auto tmp_mb = static_cast<int64_t>(base.tmp_size_bytes / kMiB);
  TALARIA_RETURN_IF_ERROR(c.ReadInt("tmp_size_mb", 1, int64_t{1} << 20, tmp_mb));
  base.tmp_size_bytes = static_cast<uint64_t>(tmp_mb) * kMiB;
  return base;
}

}  // namespace talaria::tools
