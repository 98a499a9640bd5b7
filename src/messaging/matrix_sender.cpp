// The Matrix client-server API (v3) with an access token (Bearer): m.room.message events PUT
// with a transaction id (the same id on a retry, so the homeserver keeps one event), a thread as
// an m.thread relation, a reaction as an m.reaction annotation, a room alias looked up in the
// room directory. A 429 is {"errcode": "M_LIMIT_EXCEEDED", "retry_after_ms": N}.
// A file is uploaded to the media repository (POST /_matrix/media/v3/upload -> mxc:// URI) and
// then sent as an m.image or m.file event naming it. Unreact redacts the reaction event: talaria
// keeps no state between calls, so the event is found again among the message's annotations
// (the relations API, v1) as the one this account (whoami) sent with that key.
#include <string>

#include <nlohmann/json.hpp>

#include "messaging/media_types.h"
#include "messaging/sender.h"
#include "talaria/base/random.h"
#include "talaria/base/uri.h"

namespace talaria::messaging {
namespace {

// An event may hold 64 KiB; parts this long read well in every client.
constexpr size_t kMatrixLimit = 4000;
// Pages of a message's annotations read while looking for the reaction to redact.
constexpr int kMaxPages = 10;

std::optional<std::chrono::milliseconds> MatrixRateLimit(const Reply& reply) {
  if (reply.status != 429) return std::nullopt;
  if (reply.json.is_object()) {
    const Json after = reply.json.value("retry_after_ms", Json());
    if (after.is_number() && after.get<double>() >= 0 && after.get<double>() <= 86'400'000) {
      return std::chrono::milliseconds(static_cast<int64_t>(after.get<double>()));
    }
  }
  return RetryAfterHeader(reply);
}

class MatrixSender final : public Sender {
 public:
  explicit MatrixSender(PlatformSettings p) : p_(std::move(p)) {}

  size_t limit() const override { return kMatrixLimit; }
  bool sends_files() const override { return true; }
  bool reacts(bool) const override { return true; }

  Result<Destination> Prepare(Destination d, const CallLimits& limits) override {
    if (!d.chat.starts_with('#')) return d;
    net::HttpRequest req = Request("GET", "/directory/room/" + PercentEncode(d.chat));
    const Reply reply = TALARIA_TRY(Exchange("matrix", std::move(req), &MatrixRateLimit, limits));
    const std::string room = reply.json.is_object() ? JsonStringField(reply.json, "room_id") : "";
    if (reply.status != 200 || room.empty()) {
      return Err(NotFoundError("matrix could not resolve the alias " + d.chat + " (HTTP " +
                               std::to_string(reply.status) + ")"));
    }
    d.chat = room;
    return d;
  }

  Result<std::string> Send(const Destination& d, std::string_view text,
                           const CallLimits& limits) override {
    Json content = {{"msgtype", "m.text"}, {"body", text}};
    if (!d.thread.empty()) {
      content["m.relates_to"] = {{"rel_type", "m.thread"}, {"event_id", d.thread}};
    }
    return SendEvent(d.chat, "m.room.message", content, limits);
  }

  Result<std::string> SendFile(const Destination& d, const Attachment& file,
                               std::string_view caption, const CallLimits& limits) override {
    const std::string_view mime = MimeTypeFor(file.file_name);
    net::HttpRequest req;
    req.method = "POST";
    req.url = p_.base_url + "/_matrix/media/v3/upload?filename=" + PercentEncode(file.file_name);
    req.headers = {{"Authorization", "Bearer " + p_.token}, {"Content-Type", std::string(mime)}};
    req.body = file.data;
    const Reply reply = TALARIA_TRY(Exchange("matrix", std::move(req), &MatrixRateLimit, limits));
    const std::string uri =
        reply.json.is_object() ? JsonStringField(reply.json, "content_uri") : "";
    if (reply.status != 200) {
      const std::string error = reply.json.is_object() ? JsonStringField(reply.json, "error") : "";
      return Err(Rejected("matrix upload", reply, error));
    }
    if (!uri.starts_with("mxc://")) {
      return Err(UnavailableError("matrix accepted the upload but named no mxc:// content_uri"));
    }
    const bool image = !file.as_document && IsImageFile(file.file_name);
    Json content = {{"msgtype", image ? "m.image" : "m.file"},
                    {"body", caption.empty() ? std::string_view(file.file_name) : caption},
                    {"filename", file.file_name},
                    {"url", uri},
                    {"info", {{"mimetype", mime}, {"size", file.data.size()}}}};
    if (!d.thread.empty()) {
      content["m.relates_to"] = {{"rel_type", "m.thread"}, {"event_id", d.thread}};
    }
    return SendEvent(d.chat, "m.room.message", content, limits);
  }

  Status React(const Destination& d, std::string_view message_id, std::string_view emoji,
               bool remove, const CallLimits& limits) override {
    if (remove) return Unreact(d, message_id, emoji, limits);
    const Json content = {
        {"m.relates_to", {{"rel_type", "m.annotation"}, {"event_id", message_id}, {"key", emoji}}}};
    auto id = SendEvent(d.chat, "m.reaction", content, limits);
    return id ? Status::Ok() : id.error();
  }

 private:
  Result<std::string> SendEvent(const std::string& room, std::string_view type, const Json& content,
                                const CallLimits& limits) {
    net::HttpRequest req = Request("PUT", "/rooms/" + PercentEncode(room) + "/send/" +
                                              std::string(type) + "/talaria-" + RandomHex(12));
    req.headers.emplace_back("Content-Type", "application/json");
    req.body = DumpJson(content);
    const Reply reply = TALARIA_TRY(Exchange("matrix", std::move(req), &MatrixRateLimit, limits));
    const std::string id = reply.json.is_object() ? JsonStringField(reply.json, "event_id") : "";
    if (reply.status != 200) {
      const std::string error = reply.json.is_object() ? JsonStringField(reply.json, "error") : "";
      return Err(Rejected("matrix", reply, error));
    }
    if (id.empty()) return Err(UnavailableError("matrix accepted the event but named no event_id"));
    return id;
  }

  // Redacts this account's m.reaction with key `emoji` on `message_id`.
  Status Unreact(const Destination& d, std::string_view message_id, std::string_view emoji,
                 const CallLimits& limits) {
    const std::string me = TALARIA_TRY(WhoAmI(limits));
    std::string reaction;
    std::string from;
    // The annotations arrive in pages; a message with more than kMaxPages of them is unusual
    // enough that not finding ours there is reported rather than paged through for ever.
    for (int page = 0; page < kMaxPages && reaction.empty(); ++page) {
      std::string path = "/rooms/" + PercentEncode(d.chat) + "/relations/" +
                         PercentEncode(message_id) + "/m.annotation/m.reaction?limit=100";
      if (!from.empty()) path += "&from=" + PercentEncode(from);
      net::HttpRequest req = Request("GET", path, "/_matrix/client/v1");
      const Reply reply = TALARIA_TRY(Exchange("matrix", std::move(req), &MatrixRateLimit, limits));
      if (reply.status != 200 || !reply.json.is_object()) {
        const std::string error =
            reply.json.is_object() ? JsonStringField(reply.json, "error") : "";
        return Rejected("matrix relations", reply, error);
      }
      const Json chunk = reply.json.value("chunk", Json());
      if (chunk.is_array()) {
        for (const Json& event : chunk) {
          if (IsOwnReaction(event, me, message_id, emoji)) {
            reaction = JsonStringField(event, "event_id");
            break;
          }
        }
      }
      from = JsonStringField(reply.json, "next_batch");
      if (from.empty()) break;
    }
    if (reaction.empty()) {
      return NotFoundError("matrix: no " + std::string(emoji) + " reaction from " + me + " on " +
                           std::string(message_id) + " to remove");
    }
    net::HttpRequest req =
        Request("PUT", "/rooms/" + PercentEncode(d.chat) + "/redact/" + PercentEncode(reaction) +
                           "/talaria-" + RandomHex(12));
    req.headers.emplace_back("Content-Type", "application/json");
    req.body = "{}";
    const Reply reply = TALARIA_TRY(Exchange("matrix", std::move(req), &MatrixRateLimit, limits));
    if (reply.status != 200 || !reply.json.is_object() ||
        JsonStringField(reply.json, "event_id").empty()) {
      const std::string error = reply.json.is_object() ? JsonStringField(reply.json, "error") : "";
      return Rejected("matrix redact", reply, error);
    }
    return Status::Ok();
  }

  static bool IsOwnReaction(const Json& event, const std::string& me, std::string_view message_id,
                            std::string_view emoji) {
    if (!event.is_object() || JsonStringField(event, "type") != "m.reaction" ||
        JsonStringField(event, "sender") != me) {
      return false;
    }
    const Json content = event.value("content", Json());
    const Json rel = content.is_object() ? content.value("m.relates_to", Json()) : Json();
    return rel.is_object() && JsonStringField(rel, "rel_type") == "m.annotation" &&
           JsonStringField(rel, "event_id") == message_id && JsonStringField(rel, "key") == emoji;
  }

  Result<std::string> WhoAmI(const CallLimits& limits) {
    const Reply reply = TALARIA_TRY(
        Exchange("matrix", Request("GET", "/account/whoami"), &MatrixRateLimit, limits));
    const std::string me = reply.json.is_object() ? JsonStringField(reply.json, "user_id") : "";
    if (reply.status != 200 || me.empty()) return Err(Rejected("matrix whoami", reply));
    return me;
  }

  net::HttpRequest Request(std::string method, const std::string& path,
                           std::string_view api = "/_matrix/client/v3") const {
    net::HttpRequest req;
    req.method = std::move(method);
    req.url = p_.base_url + std::string(api) + path;
    req.headers = {{"Authorization", "Bearer " + p_.token}};
    return req;
  }

  PlatformSettings p_;
};

}  // namespace

std::unique_ptr<Sender> MakeMatrixSender(const PlatformSettings& p) {
  return std::make_unique<MatrixSender>(p);
}

}  // namespace talaria::messaging
