// CodeExecutionOptionsFromConfig: the `code_execution` section of config.yaml.
#include <nlohmann/json.hpp>

#include "talaria/tools/code_execution.h"

namespace talaria::tools {
namespace {

Status Bad(const std::string& key, const std::string& what) {
  std::string message = "config: code_execution.";
  message += key;
  message += " must be ";
  message += what;
  return InvalidArgumentError(std::move(message));
}

Status ReadString(const Json& section, const std::string& key, std::string& out) {
  auto it = section.find(key);
  if (it == section.end() || it->is_null()) return {};
  if (!it->is_string()) return Bad(key, "a string");
  out = it->get<std::string>();
  return {};
}

// A positive integer no larger than `max`.
Status ReadCount(const Json& section, const std::string& key, int64_t max, int64_t& out) {
  auto it = section.find(key);
  if (it == section.end() || it->is_null()) return {};
  if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > max) {
    return Bad(key, "an integer from 1 to " + std::to_string(max));
  }
  out = it->get<int64_t>();
  return {};
}

}  // namespace

Result<CodeExecutionOptions> CodeExecutionOptionsFromConfig(const Config& config, CodeExecutionOptions base) {
  if (config.raw == nullptr) return base;
  auto it = config.raw->find("code_execution");
  if (it == config.raw->end() || it->is_null()) return base;
  if (!it->is_object()) return Err(InvalidArgumentError("config: code_execution must be a mapping"));
  const Json& c = *it;
  TALARIA_RETURN_IF_ERROR(ReadString(c, "python", base.python));
  if (base.python.empty() || base.python.front() != '/') return Err(Bad("python", "an absolute path"));
  std::string sandbox;
  TALARIA_RETURN_IF_ERROR(ReadString(c, "sandbox", sandbox));
  if (sandbox == "auto") {
    base.sandbox = CodeSandbox::kAuto;
  } else if (sandbox == "bwrap") {
    base.sandbox = CodeSandbox::kBwrap;
  } else if (sandbox == "landlock") {
    base.sandbox = CodeSandbox::kLandlock;
  } else if (sandbox == "none") {
    base.sandbox = CodeSandbox::kNone;
  } else if (!sandbox.empty()) {
    return Err(Bad("sandbox", "one of auto, bwrap, landlock, none (got '" + sandbox + "')"));
  }
  if (auto n = c.find("network"); n != c.end() && !n->is_null()) {
    if (!n->is_boolean()) return Err(Bad("network", "true or false"));
    base.network = n->get<bool>();
  }
  std::string approvals;
  TALARIA_RETURN_IF_ERROR(ReadString(c, "approvals", approvals));
  if (approvals == "inherit") {
    base.approvals = ScriptApprovals::kInherit;
  } else if (approvals == "deny") {
    base.approvals = ScriptApprovals::kDeny;
  } else if (!approvals.empty()) {
    return Err(Bad("approvals", "inherit or deny (got '" + approvals + "')"));
  }
  int64_t timeout = base.timeout.count();
  TALARIA_RETURN_IF_ERROR(ReadCount(c, "timeout", 86'400, timeout));
  base.timeout = std::chrono::seconds(timeout);
  int64_t calls = base.max_tool_calls;
  TALARIA_RETURN_IF_ERROR(ReadCount(c, "max_tool_calls", 100'000, calls));
  base.max_tool_calls = static_cast<int>(calls);
  auto stdout_bytes = static_cast<int64_t>(base.max_stdout_bytes);
  TALARIA_RETURN_IF_ERROR(ReadCount(c, "max_stdout_bytes", int64_t{1} << 30, stdout_bytes));
  base.max_stdout_bytes = static_cast<size_t>(stdout_bytes);
  auto stderr_bytes = static_cast<int64_t>(base.max_stderr_bytes);
  TALARIA_RETURN_IF_ERROR(ReadCount(c, "max_stderr_bytes", int64_t{1} << 30, stderr_bytes));
  base.max_stderr_bytes = static_cast<size_t>(stderr_bytes);
  return base;
}

}  // namespace talaria::tools
