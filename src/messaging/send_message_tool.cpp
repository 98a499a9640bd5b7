// send_message (toolset `messaging`): the original's schema (send, list, react, unreact;
// `platform:target` refs; MEDIA: attachments) over the platform senders (sender.h). Success is
// reported only for what the platform accepted; a message split into parts that fails midway
// says how many parts went out. Refused for delegated subagents: a child acts inside its task,
// not in the user's name on other channels.
#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "messaging/media_refs.h"
#include "messaging/messaging_settings.h"
#include "messaging/sender.h"
#include "messaging/target_ref.h"
#include "talaria/base/ascii.h"
#include "talaria/base/redact.h"
#include "talaria/base/strings.h"
#include "talaria/core/tool_registration.h"
#include "talaria/tools/session_services.h"

namespace talaria::messaging {
namespace {

constexpr std::string_view kSchema = R"json({
  "name": "send_message",
  "description": "Send a message to a chat platform, e-mail or SMS, list the known targets, or add/remove a reaction. Targets are 'platform' (its home channel), 'platform:#channel-name', 'platform:chat_id' or 'platform:chat_id:thread_id', e.g. 'telegram:-1001234567890:17585', 'discord:#bot-home', 'slack:#eng', 'signal:+15551234567', 'matrix:!room:server', 'email:user@example.org', 'sms:+15551234567', 'ntfy:topic', 'webhook'. Use action='list' first when unsure. Put MEDIA:<workspace path> in the message to attach a file (Slack, Telegram, Discord, Matrix, Signal, e-mail, ntfy, webhook) or MEDIA:https://<public URL> for a file the platform fetches itself (SMS/MMS, which takes only URLs; ntfy; webhook), and [[as_document]] to send an image as a file. Platforms are configured in config.yaml's messaging section and the environment (SLACK_BOT_TOKEN, TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN, MATRIX_ACCESS_TOKEN, SIGNAL_HTTP_URL, EMAIL_SMTP_HOST, TWILIO_ACCOUNT_SID, NTFY_SERVER, MESSAGING_WEBHOOK_URL).",
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

// The success shape: the first id as message_id, every id when there are several.
ToolResult Sent(const TargetRef& ref, const Destination& dest, const std::vector<std::string>& ids,
                const std::vector<std::string>& notes) {
  Json body = {{"success", true},
               {"platform", ref.platform},
               {"chat_id", dest.chat},
               {"message_id", ids.empty() ? "" : ids.front()}};
  if (!dest.thread.empty()) body["thread_id"] = dest.thread;
  if (ids.size() > 1) body["message_ids"] = ids;
  if (!notes.empty()) body["note"] = Join(notes, "; ");
  return Success(body);
}

bool IsUrlRef(std::string_view ref) {
  const std::string head = AsciiLower(ref.substr(0, 8));
  return head.starts_with("https://") || head.starts_with("http://");
}

// A MEDIA: URL the platform will fetch: http(s), a host, printable ASCII only (it travels in a
// form field or a header), at most 2,048 characters.
Status CheckMediaUrl(std::string_view url) {
  if (url.size() > 2048) return InvalidArgumentError("MEDIA: URL longer than 2048 characters");
  for (char c : url) {
    if (c <= ' ' || c == 0x7f || static_cast<unsigned char>(c) >= 0x80) {
      return InvalidArgumentError("MEDIA:" + std::string(url.substr(0, 200)) +
                                  ": a URL holds no spaces, control or non-ASCII characters "
                                  "(percent-encode them)");
    }
  }
  const size_t host = url.find("://") + 3;
  if (host >= url.size() || url[host] == '/') {
    return InvalidArgumentError("MEDIA:" + std::string(url) + ": no host");
  }
  return Status::Ok();
}

// Every MEDIA: reference of the message as an Attachment: workspace files read (within the
// platform's size limit), URLs checked. Nothing is sent yet; any refusal names what to change.
Result<std::vector<Attachment>> CollectAttachments(const MediaRefs& media, const Sender& sender,
                                                   const std::string& platform, ToolContext& ctx) {
  std::vector<Attachment> files;
  if (sender.max_files() > 0 && media.paths.size() > sender.max_files()) {
    return Err(InvalidArgumentError(platform + " takes at most " +
                                    std::to_string(sender.max_files()) +
                                    " attachments in one message; nothing was sent"));
  }
  const size_t max_bytes = std::min(kMaxAttachmentBytes, sender.max_file_bytes());
  for (const std::string& path : media.paths) {
    if (IsUrlRef(path)) {
      if (!sender.sends_urls()) {
        return Err(InvalidArgumentError(
            platform + " attaches workspace files, not URLs; MEDIA:" + path +
            " would have to be downloaded first (talaria does not fetch it); nothing was sent"));
      }
      TALARIA_RETURN_IF_ERROR(CheckMediaUrl(path));
      std::string name = BaseName(path.substr(0, path.find_first_of("?#")));
      files.push_back(Attachment{std::move(name), "", path, media.as_document});
      continue;
    }
    if (!sender.sends_files()) {
      return Err(FailedPreconditionError(platform + " " + sender.NoFilesReason() +
                                         "; MEDIA:" + path + " was not sent, nor was the message"));
    }
    safety::Workspace* ws = tools::WorkspaceOf(ctx);
    if (ws == nullptr) {
      return Err(FailedPreconditionError("MEDIA: attachments need a workspace to read files from"));
    }
    auto data = ws->ReadAll(path, max_bytes);
    if (!data) {
      std::string why = "MEDIA:" + path + ": " + data.error().message();
      if (data.error().code() == StatusCode::kResourceExhausted) {
        why += " (" + platform + " takes files up to " + std::to_string(max_bytes >> 20) + " MiB)";
      }
      return Err(Status(data.error().code(), why));
    }
    files.push_back(Attachment{BaseName(path), std::move(*data), "", media.as_document});
  }
  return files;
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

  // Attachments are read and checked before anything is sent: a bad one sends nothing.
  auto files = CollectAttachments(media, *sender, ref->platform, ctx);
  if (!files) return Failure(files.error().message());

  auto prepared = sender->Prepare(*dest, limits);
  if (!prepared) return Failure(prepared.error().message(), &settings);
  std::vector<std::string> ids;
  std::vector<std::string> notes;
  std::vector<std::string> parts;
  if (!media.text.empty()) parts = SplitMessage(media.text, sender->limit(), sender->unit());
  const bool bundled = sender->bundles_files() && !files->empty();
  const size_t total = bundled ? std::max<size_t>(parts.size(), 1) : parts.size() + files->size();
  auto partial = [&](const Status& error) {
    std::string msg = error.message();
    if (!ids.empty()) {
      msg += " (" + std::to_string(ids.size()) + " of " + std::to_string(total) +
             " parts were sent before this, ids: " + Join(ids, ", ") + ")";
    }
    return Failure(msg, &settings);
  };
  if (bundled) {
    // The text's last part carries every file: one message (a mail, an MMS, a webhook call).
    const std::string last = parts.empty() ? std::string() : std::move(parts.back());
    if (!parts.empty()) parts.pop_back();
    for (const std::string& part : parts) {
      auto id = sender->Send(*prepared, part, limits);
      if (!id) return partial(id.error());
      ids.push_back(std::move(*id));
    }
    auto id = sender->SendWithFiles(*prepared, last, *files, limits);
    if (!id) return partial(id.error());
    ids.push_back(std::move(*id));
    notes.push_back("sent with " + std::to_string(files->size()) + " attachment(s) in one message");
    return Sent(*ref, *prepared, ids, notes);
  }
  for (const std::string& part : parts) {
    auto id = sender->Send(*prepared, part, limits);
    if (!id) return partial(id.error());
    ids.push_back(std::move(*id));
  }
  for (const Attachment& file : *files) {
    auto id = sender->SendFile(*prepared, file, "", limits);
    if (!id) return partial(id.error());
    ids.push_back(std::move(*id));
  }
  if (ids.size() > 1) {
    notes.insert(notes.begin(), "sent as " + std::to_string(ids.size()) + " messages (" +
                                    std::to_string(parts.size()) + " text parts within the " +
                                    ref->platform + " limit, " + std::to_string(files->size()) +
                                    " files)");
  }
  return Sent(*ref, *prepared, ids, notes);
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
