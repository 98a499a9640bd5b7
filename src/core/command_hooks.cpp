#include "talaria/core/command_hooks.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

#include <re2/re2.h>
#include <nlohmann/json.hpp>

#include "talaria/base/json.h"
#include "talaria/base/log.h"
#include "talaria/base/strings.h"
#include "talaria/base/subprocess.h"

extern char** environ;

namespace talaria {
namespace {

using std::chrono::milliseconds;

constexpr std::string_view kPreToolUse = "PreToolUse";
constexpr std::string_view kPostToolUse = "PostToolUse";
// Events of the contract talaria does not run (yet); named so the warning can say so.
constexpr std::string_view kUnsupportedEvents[] = {"PermissionRequest",  "PermissionDenied",
                                                   "PostToolUseFailure", "UserPromptSubmit",
                                                   "Notification",       "Stop",
                                                   "SubagentStop",       "PreCompact",
                                                   "SessionStart",       "SessionEnd"};
// How much of a failing hook's stderr goes into the warning.
constexpr size_t kMaxWarnDetail = 500;

// What a PreToolUse hook that gives no verdict (cannot run, times out, crashes, fails, prints
// garbage) means for the call.
enum class OnHookFailure : unsigned char {
  kAllow,  // the default: a broken hook never breaks a call
  kBlock,  // fail_closed: true — no verdict, no call
};

struct CommandSpec {
  std::string command;
  milliseconds timeout;
  std::string where;  // "hooks.PreToolUse[0].hooks[1]", for messages
  OnHookFailure on_failure = OnHookFailure::kAllow;
};

struct MatcherGroup {
  std::shared_ptr<const RE2> matcher;  // null: every tool
  std::vector<CommandSpec> commands;
};

// Everything an installed hook needs; immutable once built, shared by all its hooks.
struct HookEnv {
  std::string cwd;
  size_t max_output_bytes = 0;
  std::function<void(std::string_view)> warn;
  std::function<Status()> before_run;

  void Warn(std::string_view message) const {
    if (warn) {
      warn(message);
    } else {
      LogWarn(message);
    }
  }
};

std::string Shorten(std::string_view s) {
  return TruncateHeadTail(std::string(Trim(s)), kMaxWarnDetail);
}

bool Matches(const MatcherGroup& group, std::string_view tool_name) {
  return !group.matcher || RE2::FullMatch(tool_name, *group.matcher);
}

std::vector<std::string> HookEnvironment(const std::string& cwd) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    if (entry.starts_with("TALARIA_PROJECT_DIR=") || entry.starts_with("CLAUDE_PROJECT_DIR=")) {
      continue;
    }
    env.emplace_back(entry);
  }
  env.push_back("TALARIA_PROJECT_DIR=" + cwd);
  env.push_back("CLAUDE_PROJECT_DIR=" + cwd);
  return env;
}

Json BaseEvent(std::string_view event_name, std::string_view tool_name, const Json& args,
               const ToolContext& ctx, const HookEnv& env) {
  Json event = Json::object();
  event["session_id"] = ctx.session_id;
  event["transcript_path"] = "";
  event["cwd"] = env.cwd;
  event["permission_mode"] = "default";
  event["hook_event_name"] = std::string(event_name);
  event["tool_name"] = std::string(tool_name);
  event["tool_input"] = args;
  event["tool_use_id"] = ctx.call_id;
  return event;
}

// Runs one hook command with `event` on stdin. nullopt when it could not be run to completion
// (spawn failure, timeout, cancellation); the reason has been logged and is left in `failure`.
std::optional<ProcessResult> RunHookCommand(const CommandSpec& spec, const Json& event,
                                            std::string_view tool_name, const ToolContext& ctx,
                                            const HookEnv& env, std::string* failure = nullptr) {
  const auto fail = [&](std::string why) -> std::optional<ProcessResult> {
    if (failure != nullptr) *failure = std::move(why);
    return std::nullopt;
  };
  const std::string label = std::string(event["hook_event_name"].get_ref<const std::string&>()) +
                            " hook " + spec.where + " ('" + Shorten(spec.command) + "') for " +
                            std::string(tool_name);
  milliseconds timeout = spec.timeout;
  if (ctx.deadline != ToolContext::Deadline::max()) {
    const auto left =
        std::chrono::duration_cast<milliseconds>(ctx.deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      env.Warn(label + ": skipped, the call's deadline has passed");
      return fail("skipped, the call's deadline has passed");
    }
    timeout = std::min(timeout, left);
  }

  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", spec.command};
  options.env = HookEnvironment(env.cwd);
  options.cwd = env.cwd;
  options.stdin_data = DumpJson(event);
  options.timeout = timeout;
  options.cancel = ctx.cancel;
  options.max_output_bytes = env.max_output_bytes;

  auto run = RunProcess(options);
  if (!run) {
    env.Warn(label + ": could not run: " + run.error().ToString());
    return fail("could not run: " + run.error().message());
  }
  if (run->timed_out) {
    const std::string why = "timed out after " + std::to_string(timeout.count()) + " ms";
    env.Warn(label + ": " + why +
             (spec.on_failure == OnHookFailure::kBlock ? "; killed" : "; killed and ignored"));
    return fail(why);
  }
  if (run->cancelled) {
    env.Warn(label + ": cancelled with the call; ignored");
    return fail("cancelled with the call");
  }
  return std::move(*run);
}

// Parses a hook's stdout after exit 0: an object, or nullopt (empty output, or garbage that was
// logged).
std::optional<Json> ParseHookOutput(const ProcessResult& run, const CommandSpec& spec,
                                    const HookEnv& env) {
  const std::string out = std::string(Trim(run.stdout_text));
  if (out.empty()) return std::nullopt;
  auto parsed = ParseJson(out);
  if (!parsed || !parsed->is_object()) {
    env.Warn(spec.where + " ('" + Shorten(spec.command) +
             "'): stdout is not a JSON object; ignored: " + Shorten(out));
    return std::nullopt;
  }
  return std::move(*parsed);
}

void WarnExit(const ProcessResult& run, const CommandSpec& spec, std::string_view event_name,
              const HookEnv& env) {
  std::string msg = std::string(event_name) + " hook " + spec.where + " ('" +
                    Shorten(spec.command) + "') failed with exit code " +
                    std::to_string(run.exit_code) + "; ignored";
  if (const std::string err = Shorten(run.stderr_text); !err.empty()) msg += ": " + err;
  env.Warn(msg);
}

// Every block names the hook that made it, so a user can tell a hook's refusal from the
// tool's own error.
PreHookDecision BlockBy(const CommandSpec& spec, std::string_view reason) {
  std::string message = "Blocked by PreToolUse hook " + spec.where;
  message += reason.empty() ? " ('" + Shorten(spec.command) + "')" : ": " + std::string(reason);
  return PreHookDecision::Block(std::move(message));
}

// A hook that gave no verdict: the call goes on, unless the hook is fail_closed.
PreHookDecision NoVerdict(const CommandSpec& spec, std::string_view why) {
  if (spec.on_failure == OnHookFailure::kAllow) return PreHookDecision::Continue();
  return BlockBy(spec, "the hook ('" + Shorten(spec.command) + "') " + std::string(why) +
                           ", and it is fail_closed");
}

PreHookDecision DecidePre(const CommandSpec& spec, const PreToolEvent& e, const HookEnv& env) {
  const Json event = BaseEvent(kPreToolUse, e.tool_name, e.args, e.ctx, env);
  if (env.before_run) {
    if (Status s = env.before_run(); !s.ok()) {
      return BlockBy(spec,
                     "the hook ('" + Shorten(spec.command) + "') was not run: " + s.message());
    }
  }
  std::string failure;
  auto run = RunHookCommand(spec, event, e.tool_name, e.ctx, env, &failure);
  if (!run) return NoVerdict(spec, failure);

  if (run->exit_code == 2) return BlockBy(spec, std::string(Trim(run->stderr_text)));
  if (run->exit_code != 0) {
    WarnExit(*run, spec, kPreToolUse, env);
    // sh reports a program it cannot find or execute as 127 or 126.
    const bool not_run = run->exit_code == 126 || run->exit_code == 127;
    std::string why = not_run ? "could not run its program"
                              : "failed with exit code " + std::to_string(run->exit_code);
    if (const std::string err = Shorten(run->stderr_text); !err.empty()) why += " (" + err + ")";
    return NoVerdict(spec, why);
  }
  const std::string stdout_text = std::string(Trim(run->stdout_text));
  auto out = ParseHookOutput(*run, spec, env);
  if (!out) {
    return stdout_text.empty() ? PreHookDecision::Continue()
                               : NoVerdict(spec, "printed no JSON object");
  }

  if (auto it = out->find("continue"); it != out->end() && it->is_boolean() && !it->get<bool>()) {
    return BlockBy(spec, JsonStringField(*out, "stopReason"));
  }

  static const Json kNoObject = Json::object();
  auto hso_it = out->find("hookSpecificOutput");
  const Json& hso = hso_it != out->end() && hso_it->is_object() ? *hso_it : kNoObject;

  std::string decision = JsonStringField(hso, "permissionDecision");
  std::string reason = JsonStringField(hso, "permissionDecisionReason");
  if (decision.empty()) {  // the older top-level form: "decision": "approve" | "block"
    const std::string legacy = JsonStringField(*out, "decision");
    if (legacy == "block") decision = "deny";
    if (legacy == "approve") decision = "allow";
    if (reason.empty()) reason = JsonStringField(*out, "reason");
  }
  if (decision == "deny") return BlockBy(spec, reason);
  if (decision == "ask") {
    // Asking means a human must approve; none is present, so the answer is no.
    std::string msg =
        "it requires approval for this call and nobody is present to approve it, so it was denied";
    if (!reason.empty()) msg += ": " + reason;
    return BlockBy(spec, msg);
  }
  if (!decision.empty() && decision != "allow" && decision != "defer") {
    env.Warn(spec.where + ": unknown permissionDecision '" + Shorten(decision) + "'; ignored");
  }

  if (auto it = hso.find("updatedInput"); it != hso.end()) {
    if (it->is_object()) return PreHookDecision::Modify(std::make_shared<Json>(*it));
    env.Warn(spec.where + ": updatedInput is not an object; ignored");
  }
  return PreHookDecision::Continue();
}

// Runs every matching PostToolUse command; returns their feedback lines.
std::vector<std::string> CollectPostFeedback(const std::vector<MatcherGroup>& groups,
                                             const PostToolEvent& e, const HookEnv& env) {
  std::vector<std::string> feedback;
  std::optional<Json> event;  // built on first match
  for (const auto& group : groups) {
    if (!Matches(group, e.tool_name)) continue;
    if (!event) {
      event = BaseEvent(kPostToolUse, e.tool_name, e.args, e.ctx, env);
      auto parsed = ParseJson(e.result.text);
      (*event)["tool_response"] = parsed ? std::move(*parsed) : Json(e.result.text);
    }
    for (const auto& spec : group.commands) {
      if (env.before_run) {
        if (Status s = env.before_run(); !s.ok()) {
          env.Warn("PostToolUse hook " + spec.where + " not run: " + s.message());
          continue;
        }
      }
      auto run = RunHookCommand(spec, *event, e.tool_name, e.ctx, env);
      if (!run) continue;
      if (run->exit_code == 2) {
        std::string text = std::string(Trim(run->stderr_text));
        feedback.push_back(text.empty()
                               ? "PostToolUse hook reported a problem: " + Shorten(spec.command)
                               : std::move(text));
        continue;
      }
      if (run->exit_code != 0) {
        WarnExit(*run, spec, kPostToolUse, env);
        continue;
      }
      auto out = ParseHookOutput(*run, spec, env);
      if (!out) continue;
      if (JsonStringField(*out, "decision") == "block") {
        std::string reason = std::string(Trim(JsonStringField(*out, "reason")));
        feedback.push_back(reason.empty()
                               ? "PostToolUse hook flagged this result: " + Shorten(spec.command)
                               : std::move(reason));
      }
      if (auto it = out->find("hookSpecificOutput"); it != out->end()) {
        std::string context = std::string(Trim(JsonStringField(*it, "additionalContext")));
        if (!context.empty()) feedback.push_back(std::move(context));
      }
    }
  }
  return feedback;
}

std::optional<std::string> TransformPost(const std::vector<MatcherGroup>& groups,
                                         const PostToolEvent& e, const HookEnv& env) {
  // PostToolUse means "after the tool completed successfully" in the contract.
  if (e.result.status != CallStatus::kOk) return std::nullopt;
  std::vector<std::string> feedback = CollectPostFeedback(groups, e, env);
  if (feedback.empty()) return std::nullopt;

  auto parsed = ParseJson(e.result.text);
  if (!parsed || !parsed->is_object()) return std::nullopt;  // nowhere to put it
  std::string text;
  auto existing = parsed->find("hook_feedback");
  if (existing != parsed->end() && existing->is_string()) text = existing->get<std::string>();
  for (auto& line : feedback) {
    if (!text.empty()) text += '\n';
    text += line;
  }
  (*parsed)["hook_feedback"] = std::move(text);
  return DumpJson(*parsed);
}

Result<std::shared_ptr<const RE2>> CompileMatcher(const Json& group, const std::string& where) {
  auto it = group.find("matcher");
  if (it == group.end() || it->is_null()) return std::shared_ptr<const RE2>();
  if (!it->is_string()) return Err(InvalidArgumentError(where + ".matcher: expected a string"));
  const std::string& pattern = it->get_ref<const std::string&>();
  if (pattern.empty() || pattern == "*") return std::shared_ptr<const RE2>();
  RE2::Options re_options;
  re_options.set_log_errors(false);
  auto re = std::make_shared<const RE2>(pattern, re_options);
  if (!re->ok()) {
    return Err(InvalidArgumentError(where + ".matcher: invalid regular expression '" + pattern +
                                    "': " + re->error()));
  }
  return std::shared_ptr<const RE2>(std::move(re));
}

Result<CommandSpec> ParseCommand(const Json& hook, const std::string& where,
                                 const CommandHookOptions& options) {
  if (!hook.is_object()) return Err(InvalidArgumentError(where + ": expected an object"));
  const auto type = hook.find("type");
  if (type == hook.end() || !type->is_string() || *type != "command") {
    const std::string got = type == hook.end() ? "missing" : "'" + DumpJson(*type) + "'";
    return Err(
        InvalidArgumentError(where + ": only type \"command\" is supported (type is " + got + ")"));
  }
  CommandSpec spec;
  spec.where = where;
  const auto command = hook.find("command");
  if (command == hook.end() || !command->is_string() || Trim(command->get<std::string>()).empty()) {
    return Err(InvalidArgumentError(where + ": \"command\" must be a non-empty string"));
  }
  spec.command = command->get<std::string>();
  spec.timeout = options.default_timeout;
  if (auto t = hook.find("timeout"); t != hook.end() && !t->is_null()) {
    const double seconds = t->is_number() ? t->get<double>() : -1;
    if (!(seconds > 0) || !std::isfinite(seconds) || seconds > 86400.0 * 365) {
      return Err(
          InvalidArgumentError(where + ": \"timeout\" must be a positive number of seconds"));
    }
    spec.timeout = milliseconds(static_cast<long long>(std::ceil(seconds * 1000)));
  }
  if (auto f = hook.find("fail_closed"); f != hook.end() && !f->is_null()) {
    if (!f->is_boolean())
      return Err(InvalidArgumentError(where + ": \"fail_closed\" must be true or false"));
    if (f->get<bool>()) spec.on_failure = OnHookFailure::kBlock;
  }
  return spec;
}

Result<std::vector<MatcherGroup>> ParseEvent(const Json& groups, const std::string& where,
                                             const CommandHookOptions& options) {
  if (!groups.is_array()) return Err(InvalidArgumentError(where + ": expected an array"));
  std::vector<MatcherGroup> out;
  for (size_t i = 0; i < groups.size(); ++i) {
    const std::string group_where = where + "[" + std::to_string(i) + "]";
    const Json& group = groups[i];
    if (!group.is_object()) return Err(InvalidArgumentError(group_where + ": expected an object"));
    MatcherGroup parsed;
    parsed.matcher = TALARIA_TRY(CompileMatcher(group, group_where));
    auto hooks = group.find("hooks");
    if (hooks == group.end() || !hooks->is_array()) {
      return Err(InvalidArgumentError(group_where + ".hooks: expected an array"));
    }
    for (size_t j = 0; j < hooks->size(); ++j) {
      const std::string hook_where = group_where + ".hooks[" + std::to_string(j) + "]";
      parsed.commands.push_back(TALARIA_TRY(ParseCommand((*hooks)[j], hook_where, options)));
    }
    if (!parsed.commands.empty()) out.push_back(std::move(parsed));
  }
  return out;
}

struct ParsedConfig {
  std::vector<MatcherGroup> pre;
  std::vector<MatcherGroup> post;
};

Result<ParsedConfig> ParseConfig(const Json& config, const CommandHookOptions& options,
                                 const HookEnv& env) {
  ParsedConfig parsed;
  if (config.is_null()) return parsed;
  if (!config.is_object()) return Err(InvalidArgumentError("hooks: expected an object"));
  for (const auto& [event, groups] : config.items()) {
    const std::string where = "hooks." + event;
    if (event == kPreToolUse) {
      parsed.pre = TALARIA_TRY(ParseEvent(groups, where, options));
    } else if (event == kPostToolUse) {
      parsed.post = TALARIA_TRY(ParseEvent(groups, where, options));
    } else if (std::find(std::begin(kUnsupportedEvents), std::end(kUnsupportedEvents), event) !=
               std::end(kUnsupportedEvents)) {
      env.Warn(where + ": event not supported by talaria; its hooks are ignored");
    } else {
      env.Warn(where + ": unknown hook event; ignored");
    }
  }
  return parsed;
}

}  // namespace

Status InstallCommandHooks(const Json& hooks_config, HookSet& hooks,
                           const CommandHookOptions& options) {
  auto env = std::make_shared<HookEnv>();
  env->cwd = options.cwd;
  if (env->cwd.empty()) {
    std::error_code ec;
    env->cwd = std::filesystem::current_path(ec).string();
  }
  env->max_output_bytes = options.max_output_bytes;
  env->warn = options.warn;
  env->before_run = options.before_run;

  auto parsed = ParseConfig(hooks_config, options, *env);
  if (!parsed) return parsed.error();

  std::shared_ptr<const HookEnv> shared_env = std::move(env);
  for (auto& group : parsed->pre) {
    for (auto& spec : group.commands) {
      hooks.AddPreHook([shared_env, matcher = group.matcher,
                        spec = std::move(spec)](const PreToolEvent& e) -> PreHookDecision {
        if (matcher && !RE2::FullMatch(e.tool_name, *matcher)) return PreHookDecision::Continue();
        return DecidePre(spec, e, *shared_env);
      });
    }
  }
  if (!parsed->post.empty()) {
    auto groups = std::make_shared<const std::vector<MatcherGroup>>(std::move(parsed->post));
    hooks.AddTransformResult(
        [shared_env, groups](const PostToolEvent& e) -> std::optional<std::string> {
          return TransformPost(*groups, e, *shared_env);
        });
  }
  return Status::Ok();
}

}  // namespace talaria
