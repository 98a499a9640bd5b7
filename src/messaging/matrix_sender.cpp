// The Matrix client-server API (v3) with an access token (Bearer): m.room.message events PUT
// with a transaction id (the same id on a retry, so the homeserver keeps one event), a thread as
// an m.thread relation, a reaction as an m.reaction annotation, a room alias looked up in the
// room directory. A 429 is {"errcode": "M_LIMIT_EXCEEDED", "retry_after_ms": N}.
#include <string>

#include <nlohmann/json.hpp>

#include "messaging/sender.h"
#include "talaria/base/random.h"

namespace talaria::messaging {
namespace {

// An event may hold 64 KiB; parts this long read well in every client.
constexpr size_t kMatrixLimit = 4000;

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
  // Removing a reaction means redacting the reaction's own event, whose id talaria does not keep.
  bool reacts(bool remove) const override { return !remove; }

  Result<Destination> Prepare(Destination d, const CallLimits& limits) override {
    if (!d.chat.starts_with('#')) return d;
    net::HttpRequest req = Request("GET", "/directory/room/" + UrlEncode(d.chat));
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

  Status React(const Destination& d, std::string_view message_id, std::string_view emoji,
               bool /*remove*/, const CallLimits& limits) override {
    const Json content = {
        {"m.relates_to", {{"rel_type", "m.annotation"}, {"event_id", message_id}, {"key", emoji}}}};
    auto id = SendEvent(d.chat, "m.reaction", content, limits);
    return id ? Status::Ok() : id.error();
  }

 private:
  Result<std::string> SendEvent(const std::string& room, std::string_view type, const Json& content,
                                const CallLimits& limits) {
    net::HttpRequest req = Request("PUT", "/rooms/" + UrlEncode(room) + "/send/" +
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

  net::HttpRequest Request(std::string method, const std::string& path) const {
    net::HttpRequest req;
    req.method = std::move(method);
    req.url = p_.base_url + "/_matrix/client/v3" + path;
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
