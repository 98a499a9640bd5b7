// Discord's REST API (v10) with the bot token ("Authorization: Bot ..."): a message is POSTed to
// the channel (a thread is a channel of its own), a file goes as multipart with payload_json and
// files[0], reactions are PUT/DELETE on .../reactions/<emoji>/@me. A 429 carries retry_after in
// seconds (fractional) in its JSON body and Retry-After in its headers.
#include <string>

#include <nlohmann/json.hpp>

#include "messaging/multipart.h"
#include "messaging/sender.h"
#include "talaria/base/uri.h"

namespace talaria::messaging {
namespace {

constexpr size_t kDiscordLimit = 2000;

std::optional<std::chrono::milliseconds> DiscordRateLimit(const Reply& reply) {
  if (reply.status != 429) return std::nullopt;
  if (reply.json.is_object()) {
    const Json after = reply.json.value("retry_after", Json());
    if (after.is_number() && after.get<double>() >= 0 && after.get<double>() <= 86'400) {
      return std::chrono::milliseconds(static_cast<int64_t>(after.get<double>() * 1000.0));
    }
  }
  return RetryAfterHeader(reply);
}

class DiscordSender final : public Sender {
 public:
  explicit DiscordSender(PlatformSettings p) : p_(std::move(p)) {}

  size_t limit() const override { return kDiscordLimit; }
  bool sends_files() const override { return true; }
  bool reacts(bool) const override { return true; }

  Result<std::string> Send(const Destination& d, std::string_view text,
                           const CallLimits& limits) override {
    net::HttpRequest req = Request("POST", Channel(d) + "/messages");
    req.headers.emplace_back("Content-Type", "application/json");
    req.body = DumpJson(Json{{"content", text}});
    return MessageId(TALARIA_TRY(Exchange("discord", std::move(req), &DiscordRateLimit, limits)));
  }

  Result<std::string> SendFile(const Destination& d, const Attachment& file,
                               std::string_view caption, const CallLimits& limits) override {
    MultipartBody form;
    form.AddField(
        "payload_json",
        DumpJson(Json{{"content", caption},
                      {"attachments", Json::array({{{"id", 0}, {"filename", file.file_name}}})}}),
        "application/json");
    form.AddFile("files[0]", file.file_name, file.data);
    net::HttpRequest req = Request("POST", Channel(d) + "/messages");
    req.headers.emplace_back("Content-Type", form.content_type());
    req.body = form.Finish();
    return MessageId(TALARIA_TRY(Exchange("discord", std::move(req), &DiscordRateLimit, limits)));
  }

  Status React(const Destination& d, std::string_view message_id, std::string_view emoji,
               bool remove, const CallLimits& limits) override {
    net::HttpRequest req =
        Request(remove ? "DELETE" : "PUT", Channel(d) + "/messages/" + PercentEncode(message_id) +
                                               "/reactions/" + PercentEncode(emoji) + "/@me");
    const Reply reply = TALARIA_TRY(Exchange("discord", std::move(req), &DiscordRateLimit, limits));
    if (reply.status != 204 && reply.status != 200) return Rejected("discord", reply);
    return Status::Ok();
  }

 private:
  static std::string Channel(const Destination& d) {
    return "/channels/" + PercentEncode(d.thread.empty() ? d.chat : d.thread);
  }

  net::HttpRequest Request(std::string method, const std::string& path) const {
    net::HttpRequest req;
    req.method = std::move(method);
    req.url = p_.base_url + path;
    req.headers = {{"Authorization", "Bot " + p_.token}};
    return req;
  }

  static Result<std::string> MessageId(const Reply& reply) {
    if (reply.status != 200 && reply.status != 201) return Err(Rejected("discord", reply));
    const std::string id = reply.json.is_object() ? JsonStringField(reply.json, "id") : "";
    if (id.empty()) return Err(UnavailableError("discord accepted the call but named no id"));
    return id;
  }

  PlatformSettings p_;
};

}  // namespace

std::unique_ptr<Sender> MakeDiscordSender(const PlatformSettings& p) {
  return std::make_unique<DiscordSender>(p);
}

}  // namespace talaria::messaging
