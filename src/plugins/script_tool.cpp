#include "talaria/plugins/script_tool.h"

#include "talaria/core/config.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "talaria/base/json.h"
#include "talaria/base/random.h"
#include "talaria/base/shell_words.h"
#include "talaria/core/tool_context.h"
#include "talaria/env/environment.h"
#include "talaria/tools/session_services.h"

namespace talaria::plugins {
namespace {

constexpr double kMaxTimeoutSeconds = 3600;
constexpr size_t kMaxOutputBytes = 1'000'000;  // the budget stage trims what the model sees
constexpr size_t kMaxStderrBytes = 4'000;      // the tail of stderr an error result carries

// The script's stdout and stderr from the environment's output: stdout ends with the newline
// printed before `marker`, stderr follows the marker's line. Without the marker (the output was
// cut in the middle of it) everything counts as stdout.
std::pair<std::string, std::string> SplitAtMarker(std::string output, const std::string& marker) {
  std::string line = "\n";
  line += marker;
  line += '\n';
  const size_t at = output.rfind(line);
  if (at == std::string::npos) return {std::move(output), std::string()};
  std::string err = output.substr(at + line.size());
  output.resize(at);
  return {std::move(output), std::move(err)};
}

Status Field(std::string_view what) {
  return InvalidArgumentError("manifest: " + std::string(what));
}

bool ValidName(std::string_view s, bool allow_dot) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || (allow_dot && c == '.');
  });
}

Result<std::string> RequiredString(const Json& root, const char* key) {
  auto it = root.find(key);
  if (it == root.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
    return Err(Field(std::string(key) + " must be a non-empty string"));
  }
  return it->get<std::string>();
}

std::string GuardSummary(const safety::GuardVerdict& verdict) {
  std::string out;
  for (const auto& r : verdict.reasons) {
    if (!out.empty()) out += "; ";
    out += r.rule;
    out += " (";
    out += r.description;
    out += ')';
  }
  return out;
}

bool IsScriptErrorObject(const std::string& text) {
  if (text.empty() || text.front() != '{') return false;
  auto parsed = ParseJson(text);
  return parsed && parsed->is_object() && parsed->contains("error");
}

}  // namespace

bool ManifestFormatOf(std::string_view file_name, ManifestFormat& format, std::string_view& stem) {
  for (auto [suffix, f] :
       {std::pair<std::string_view, ManifestFormat>{".tool.yaml", ManifestFormat::kYaml},
        {".tool.yml", ManifestFormat::kYaml},
        {".tool.json", ManifestFormat::kJson}}) {
    if (file_name.size() > suffix.size() && file_name.ends_with(suffix)) {
      format = f;
      stem = file_name.substr(0, file_name.size() - suffix.size());
      return true;
    }
  }
  return false;
}

Result<ScriptManifest> ParseToolManifest(std::string_view text, ManifestFormat format,
                                         std::string dir, const safety::GuardOptions& guard) {
  Json root;
  if (format == ManifestFormat::kJson) {
    root = TALARIA_TRY(ParseJson(text));
  } else {
    auto parsed = ParseYaml(text);
    if (!parsed) return Err(Field(parsed.error().message()));
    root = std::move(*parsed);
  }
  if (!root.is_object()) return Err(Field("must be a mapping"));

  ScriptManifest m;
  m.dir = std::move(dir);
  m.name = TALARIA_TRY(RequiredString(root, "name"));
  if (!ValidName(m.name, false)) return Err(Field("name must match [A-Za-z0-9_-]{1,64}"));
  if (root.contains("toolset")) m.toolset = TALARIA_TRY(RequiredString(root, "toolset"));
  if (!ValidName(m.toolset, true) || m.toolset.starts_with("mcp-")) {
    return Err(Field("toolset must match [A-Za-z0-9_.-]{1,64} and not start with mcp-"));
  }
  m.description = TALARIA_TRY(RequiredString(root, "description"));
  m.command = TALARIA_TRY(RequiredString(root, "command"));

  auto params = root.find("parameters");
  if (params == root.end() || !params->is_object())
    return Err(Field("parameters must be a mapping"));
  auto type = params->find("type");
  if (type == params->end() || *type != "object") {
    return Err(Field("parameters must be an object schema (type: object)"));
  }
  Json schema = Json::object();
  schema["name"] = m.name;
  schema["description"] = m.description;
  schema["parameters"] = *params;
  m.schema = DumpJson(schema);

  if (auto p = root.find("parallel"); p != root.end() && !p->is_null()) {
    if (*p == "safe")
      m.parallel = ParallelClass::kSafe;
    else if (*p != "never")
      return Err(Field("parallel must be never or safe"));
  }
  if (auto t = root.find("timeout"); t != root.end() && !t->is_null()) {
    const double s = t->is_number() ? t->get<double>() : -1;
    if (!(s > 0 && s <= kMaxTimeoutSeconds) || !std::isfinite(s)) {
      return Err(Field("timeout must be a number of seconds in (0, 3600]"));
    }
    m.timeout = std::chrono::milliseconds(static_cast<int64_t>(std::ceil(s * 1000)));
  }

  const safety::GuardVerdict verdict = safety::JudgeCommand(m.command, guard);
  if (verdict.decision == safety::GuardDecision::kBlock) {
    return Err(
        PermissionDeniedError("the command guard blocks the command: " + GuardSummary(verdict)));
  }
  if (verdict.decision == safety::GuardDecision::kApprove) {
    return Err(PermissionDeniedError(
        "the command guard would ask for approval (script tools run unattended): " +
        GuardSummary(verdict)));
  }
  return m;
}

ToolSpec ScriptToolSpec(const ScriptManifest& manifest) {
  auto m = std::make_shared<const ScriptManifest>(manifest);
  ToolSpec spec;
  spec.name = m->name;
  spec.toolset = m->toolset;
  spec.schema = std::string_view(m->schema);  // m lives as long as the handler
  spec.parallel = m->parallel;
  spec.handler = [m](const Json& args, ToolContext& ctx) -> ToolResult {
    if (tools::EnvironmentOf(ctx) == nullptr) {
      return ToolResult::Error("script tool '" + m->name +
                               "' needs a terminal environment; none is attached to this session");
    }
    env::CommandOptions options;
    options.timeout = m->timeout;
    if (ctx.deadline != ToolContext::Deadline::max()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          ctx.deadline - std::chrono::steady_clock::now());
      options.timeout = std::max(std::chrono::milliseconds(1), std::min(options.timeout, left));
    }
    options.cancel = ctx.cancel;
    options.max_output_bytes = kMaxOutputBytes;
    options.stdin_data = DumpJson(args);
    // A subshell: the script cannot change the session's directory or variables. The newline
    // keeps a trailing comment in the manifest's command from swallowing the parenthesis. The
    // script's stderr goes to a temporary file and comes back after a per-call marker (the
    // environment interleaves both streams; the result is stdout alone).
    const std::string marker = "talaria-script-stderr-" + RandomHex(8);
    std::string command = "(export TALARIA_TOOL_DIR=";
    command += ShellQuote(m->dir);
    command += R"(
talaria_err=$(mktemp 2>/dev/null) || talaria_err=/dev/null
(
)";
    command += m->command;
    command += R"(
) 2>"$talaria_err"
talaria_rc=$?
printf '\n%s\n' )";
    command += marker;
    command += "\ntail -c ";
    command += std::to_string(kMaxStderrBytes);
    command += R"( "$talaria_err" 2>/dev/null
[ "$talaria_err" = /dev/null ] || rm -f "$talaria_err"
exit $talaria_rc
))";
    auto outcome = tools::EnvironmentOf(ctx)->Run(command, options);
    if (!outcome)
      return ToolResult::Error("script tool '" + m->name + "': " + outcome.error().message());
    if (outcome->cancelled) return ToolResult::Error("cancelled", CallStatus::kCancelled);
    if (outcome->timed_out) {
      return ToolResult::Error("script tool '" + m->name + "' timed out", CallStatus::kTimedOut);
    }
    auto [stdout_text, stderr_text] = SplitAtMarker(std::move(outcome->output), marker);
    if (outcome->exit_code != 0) {
      Json fields = Json::object();
      fields["error"] =
          "script tool '" + m->name + "' exited with status " + std::to_string(outcome->exit_code);
      fields["exit_code"] = outcome->exit_code;
      fields["output"] = std::move(stdout_text);
      if (!stderr_text.empty()) fields["stderr"] = std::move(stderr_text);
      return ToolResult::ErrorJson(std::move(fields));
    }
    std::string text = std::move(stdout_text);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    ToolResult r = ToolResult::Text(std::move(text));
    if (IsScriptErrorObject(r.text)) r.status = CallStatus::kError;
    return r;
  };
  return spec;
}

}  // namespace talaria::plugins
