// send_message (toolset `messaging`): the original's schema (send, list, react, unreact;
// `platform:target` refs; MEDIA: attachments) over the platform senders (sender.h). Success is
// reported only for what the platform accepted; a message split into parts that fails midway
// says how many parts went out. Refused for delegated subagents: a child acts inside its task,
// not in the user's name on other channels.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "messaging/media_refs.h"
#include "messaging/messaging_settings.h"
#include "messaging/sender.h"
#include "messaging/target_ref.h"
#include "talaria/base/redact.h"
#include "talaria/base/strings.h"
#include "talaria/core/tool_registration.h"
#include "talaria/tools/session_services.h"

namespace talaria::messaging {
namespace {

constexpr std::string_view kSchema = R"json({
  "name": "send_message",
  "description": "Send a message to a chat platform, e-mail or SMS, list the known targets, or add/remove a reaction. Targets are 'platform' (its home channel), 'platform:#channel-name', 'platform:chat_id' or 'platform:chat_id:thread_id', e.g. 'telegram:-1001234567890:17585', 'discord:#bot-home', 'slack:#eng', 'signal:+15551234567', 'matrix:!room:server', 'email:user@example.org', 'sms:+15551234567', 'ntfy:topic', 'webhook'. Use action='list' first when unsure. Put MEDIA:<workspace path> in the message to attach a file (Telegram, Discord, Matrix, Signal, e-mail) and [[as_document]] to send an image as a file. Platforms are configured in config.yaml's messaging section and the environment (SLACK_BOT_TOKEN, TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN, MATRIX_ACCESS_TOKEN, SIGNAL_HTTP_URL, EMAIL_SMTP_HOST, TWILIO_ACCOUNT_SID, NTFY_SERVER, MESSAGING_WEBHOOK_URL).",
  "parameters": {
    "type": "object",
    "properties": {
      "action": {"type": "string", "enum": ["send", "list", "react", "unreact"], "default": "send", "description": "send (default), list the known targets, react or unreact to a message."},
      "target": {"type": "string", "description": "Where to send: 'platform', 'platform:#name', 'platform:chat_id' or 'platform:chat_id:thread_id'."},
      "message": {"type": "string", "description": "The text to send. May contain MEDIA:<path> to attach a file and [[as_document]]."},
      "emoji": {"type": "string", "description": "For react/unreact: the emoji (Slack: its name, e.g. thumbsup)."},
      "message_id": {"type": "string", "description": "For react/unreact: the id send_message returned for the message."}
    }
  }
})json";

constexpr size_t kMaxAttachmentBytes = size_t{20} << 20;

// The error shape of the original: {"error": "..."}, secrets redacted (the platform tokens by
// value, whatever pattern they have).
ToolResult Failure(std::string message, const MessagingSettings* settings = nullptr) {
  if (settings != nullptr) {
    for (const PlatformSettings& p : settings->platforms) {
      if (p.token.size() < 6) continue;
      for (size_t at = message.find(p.token); at != std::string::npos;
           at = message.find(p.token, at)) {
        message.replace(at, p.token.size(), "[REDACTED]");
      }
    }
  }
  return ToolResult::Error(RedactSecrets(message));
}

ToolResult Success(const Json& body) {
  ToolResult r = ToolResult::Text(body.dump(2, ' ', false, Json::error_handler_t::replace));
  return r;
}

std::string Directory(const MessagingSettings& settings) {
  std::string out;
  std::string off;
  for (const PlatformSettings& p : settings.platforms) {
    if (!p.enabled) {
      off += "  " + p.name + ": set " + p.missing + "\n";
      continue;
    }
    out += p.name + (p.home_channel.empty() ? " (no home channel)"
                                            : " (home: " + p.name + " -> " + p.home_channel + ")");
    out += "\n";
    for (const auto& [name, id] : p.channels) {
      out.append("  ").append(p.name).append(":#").append(name).append(" -> ").append(id) += "\n";
    }
  }
  if (out.empty()) out = "No messaging platform is configured.\n";
  if (!off.empty()) out += "Not configured:\n" + off;
  return out;
}

CallLimits LimitsOf(const ToolContext& ctx) {
  CallLimits limits;
  limits.stop = ctx.cancel;
  limits.deadline = ctx.deadline;
  return limits;
}

std::string BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// The platform's settings for `ref`, when it is known and enabled.
Result<const PlatformSettings*> PlatformFor(const MessagingSettings& settings,
                                            const TargetRef& ref) {
  const PlatformSettings* p = settings.Find(ref.platform);
  if (p == nullptr) {
    return Err(InvalidArgumentError("unknown platform '" + ref.platform +
                                    "' (slack, telegram, discord, matrix, signal, email, sms, "
                                    "ntfy, webhook)"));
  }
  if (!p->enabled) {
    return Err(FailedPreconditionError(ref.platform + " is not configured: set " + p->missing));
  }
  return p;
}

ToolResult Send(const Json& args, ToolContext& ctx, const MessagingSettings& settings) {
  const std::string target = JsonStringField(args, "target");
  if (target.empty()) {
    return Failure("target is required (e.g. 'slack:#eng', 'telegram'); use action='list'");
  }
  const MediaRefs media = ExtractMedia(JsonStringField(args, "message"));
  if (media.text.empty() && media.paths.empty()) return Failure("message is empty");
  auto ref = ParseTarget(target);
  if (!ref) return Failure(ref.error().message());
  auto platform = PlatformFor(settings, *ref);
  if (!platform) return Failure(platform.error().message());
  auto dest = ResolveTarget(*ref, **platform);
  if (!dest) return Failure(dest.error().message());
  std::unique_ptr<Sender> sender = MakeSender(**platform);
  const CallLimits limits = LimitsOf(ctx);

  // Attachments are read before anything is sent: a bad path sends nothing.
  std::vector<Attachment> files;
  std::vector<std::string> notes;
  if (!media.paths.empty()) {
    if (!sender->sends_files()) {
      notes.push_back(ref->platform +
                      " takes no attachments here; not sent: " + Join(media.paths, ", "));
    } else {
      safety::Workspace* ws = tools::WorkspaceOf(ctx);
      if (ws == nullptr) return Failure("MEDIA: attachments need a workspace to read files from");
      for (const std::string& path : media.paths) {
        auto data = ws->ReadAll(path, kMaxAttachmentBytes);
        if (!data) return Failure("MEDIA:" + path + ": " + data.error().message());
        files.push_back(Attachment{BaseName(path), std::move(*data), media.as_document});
      }
    }
  }

  auto prepared = sender->Prepare(*dest, limits);
  if (!prepared) return Failure(prepared.error().message(), &settings);
  std::vector<std::string> ids;
  if (sender->bundles_files() && !files.empty()) {
    auto id = sender->SendWithFiles(*prepared, media.text, files, limits);
    if (!id) return Failure(id.error().message(), &settings);
    Json body = {
        {"success", true},
        {"platform", ref->platform},
        {"chat_id", prepared->chat},
        {"message_id", *id},
        {"note", "sent as one message with " + std::to_string(files.size()) + " attachment(s)"}};
    return Success(body);
  }
  std::vector<std::string> parts;
  if (!media.text.empty()) parts = SplitMessage(media.text, sender->limit(), sender->unit());
  const size_t total = parts.size() + files.size();
  auto partial = [&](const Status& error) {
    std::string msg = error.message();
    if (!ids.empty()) {
      msg += " (" + std::to_string(ids.size()) + " of " + std::to_string(total) +
             " parts were sent before this, ids: " + Join(ids, ", ") + ")";
    }
    return Failure(msg, &settings);
  };
  for (const std::string& part : parts) {
    auto id = sender->Send(*prepared, part, limits);
    if (!id) return partial(id.error());
    ids.push_back(std::move(*id));
  }
  for (const Attachment& file : files) {
    auto id = sender->SendFile(*prepared, file, "", limits);
    if (!id) return partial(id.error());
    ids.push_back(std::move(*id));
  }
  Json body = {{"success", true},
               {"platform", ref->platform},
               {"chat_id", prepared->chat},
               {"message_id", ids.empty() ? "" : ids.front()}};
  if (!prepared->thread.empty()) body["thread_id"] = prepared->thread;
  if (ids.size() > 1) {
    body["message_ids"] = ids;
    notes.insert(notes.begin(), "sent as " + std::to_string(ids.size()) + " messages (" +
                                    std::to_string(parts.size()) + " text parts within the " +
                                    ref->platform + " limit, " + std::to_string(files.size()) +
                                    " files)");
  }
  if (!notes.empty()) body["note"] = Join(notes, "; ");
  return Success(body);
}

ToolResult React(const Json& args, ToolContext& ctx, const MessagingSettings& settings,
                 bool remove) {
  const std::string action = remove ? "unreact" : "react";
  const std::string target = JsonStringField(args, "target");
  const std::string message_id = JsonStringField(args, "message_id");
  const std::string emoji = JsonStringField(args, "emoji");
  if (target.empty() || message_id.empty() || emoji.empty()) {
    return Failure(action + " needs target, message_id and emoji");
  }
  auto ref = ParseTarget(target);
  if (!ref) return Failure(ref.error().message());
  auto platform = PlatformFor(settings, *ref);
  if (!platform) return Failure(platform.error().message());
  auto dest = ResolveTarget(*ref, **platform);
  if (!dest) return Failure(dest.error().message());
  std::unique_ptr<Sender> sender = MakeSender(**platform);
  if (!sender->reacts(remove)) {
    return Failure(ref->platform + " does not support " + action + " here");
  }
  const CallLimits limits = LimitsOf(ctx);
  auto prepared = sender->Prepare(*dest, limits);
  if (!prepared) return Failure(prepared.error().message(), &settings);
  const Status done = sender->React(*prepared, message_id, emoji, remove, limits);
  if (!done.ok()) return Failure(done.message(), &settings);
  return Success(Json{{"success", true},
                      {"platform", ref->platform},
                      {"chat_id", prepared->chat},
                      {"message_id", message_id},
                      {"emoji", emoji},
                      {"action", action}});
}

ToolResult SendMessage(const Json& args, ToolContext& ctx) {
  // ctx.unattended marks a delegated subagent's calls (no human behind them).
  if (ctx.unattended) {
    return Failure(
        "send_message is not available to delegated subagents: report back to the parent agent, "
        "which may send it");
  }
  auto settings = LoadMessagingSettings();
  if (!settings) return Failure(settings.error().message());
  std::string action = JsonStringField(args, "action");
  if (action.empty()) action = "send";
  if (action == "list") return Success(Json{{"targets", Directory(*settings)}});
  if (action == "send") return Send(args, ctx, *settings);
  if (action == "react" || action == "unreact") {
    return React(args, ctx, *settings, action == "unreact");
  }
  return Failure("unknown action '" + action + "' (send, list, react, unreact)");
}

// Available when some platform is configured; the description says what to set.
bool AnyPlatform() {
  auto settings = LoadMessagingSettings();
  return settings && settings->AnyEnabled();
}

// What `talaria tools` says while no platform is configured: what any one of them needs.
std::string WhatToSet() {
  auto settings = LoadMessagingSettings();
  if (!settings) return settings.error().message();
  std::string needs;
  for (const PlatformSettings& p : settings->platforms) {
    if (p.enabled || p.missing.empty()) continue;
    needs += (needs.empty() ? "" : "; ") + p.name + ": " + p.missing;
  }
  return "no messaging platform is configured (set one: " + needs + ")";
}

ToolSpec MakeSpec() {
  ToolSpec spec;
  spec.name = "send_message";
  spec.toolset = "messaging";
  spec.schema = kSchema;
  spec.handler = SendMessage;
  spec.check_fn = AnyPlatform;
  spec.unavailable_reason = WhatToSet;
  spec.emoji = "\xF0\x9F\x93\xA8";        // "📨"
  spec.parallel = ParallelClass::kNever;  // order matters between messages to one chat
  spec.annotations.open_world = true;
  return spec;
}

}  // namespace
}  // namespace talaria::messaging

TALARIA_TOOL(SendMessage, talaria::messaging::MakeSpec());
