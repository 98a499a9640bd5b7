// Slack's Web API: chat.postMessage with the bot token (Bearer), conversations.open for a user id,
// reactions.add/remove. Slack answers HTTP 200 with {"ok": false, "error": "..."} for most
// failures, so the ok flag and the ts (the message's id) are what say it was taken; HTTP 429
// carries Retry-After in seconds.
#include <string>

#include <nlohmann/json.hpp>

#include "messaging/sender.h"

namespace talaria::messaging {
namespace {

// Slack cuts a message's text at 40,000 characters; stay clear of it.
constexpr size_t kSlackLimit = 39'000;

class SlackSender final : public Sender {
 public:
  explicit SlackSender(PlatformSettings p) : p_(std::move(p)) {}

  size_t limit() const override { return kSlackLimit; }
  bool reacts(bool) const override { return true; }

  Result<Destination> Prepare(Destination d, const CallLimits& limits) override {
    if (!d.chat.starts_with('U')) return d;
    // A user id: the DM channel with that user.
    const Json answer = TALARIA_TRY(Call("conversations.open", Json{{"users", d.chat}}, limits));
    const Json* channel = answer.contains("channel") ? &answer["channel"] : nullptr;
    const std::string id = channel != nullptr ? JsonStringField(*channel, "id") : "";
    if (id.empty()) return Err(UnavailableError("slack conversations.open returned no channel"));
    d.chat = id;
    return d;
  }

  Result<std::string> Send(const Destination& d, std::string_view text,
                           const CallLimits& limits) override {
    Json body = {{"channel", d.chat}, {"text", text}, {"mrkdwn", true}};
    if (!d.thread.empty()) body["thread_ts"] = d.thread;
    const Json answer = TALARIA_TRY(Call("chat.postMessage", body, limits));
    const std::string ts = JsonStringField(answer, "ts");
    if (ts.empty()) return Err(UnavailableError("slack accepted the call but named no message ts"));
    return ts;
  }

  Status React(const Destination& d, std::string_view message_id, std::string_view emoji,
               bool remove, const CallLimits& limits) override {
    std::string name(emoji);
    // Slack names emoji (":thumbsup:" or "thumbsup").
    while (!name.empty() && name.front() == ':') name.erase(name.begin());
    while (!name.empty() && name.back() == ':') name.pop_back();
    const Json body = {{"channel", d.chat}, {"timestamp", message_id}, {"name", name}};
    auto answer = Call(remove ? "reactions.remove" : "reactions.add", body, limits);
    return answer ? Status::Ok() : answer.error();
  }

 private:
  Result<Json> Call(std::string_view method, const Json& body, const CallLimits& limits) {
    net::HttpRequest req;
    req.method = "POST";
    req.url = p_.base_url + "/" + std::string(method);
    req.headers = {{"Authorization", "Bearer " + p_.token},
                   {"Content-Type", "application/json; charset=utf-8"}};
    req.body = DumpJson(body);
    const Reply reply = TALARIA_TRY(Exchange("slack", std::move(req), &RetryAfterHeader, limits));
    if (reply.status != 200 || !reply.json.is_object()) return Err(Rejected("slack", reply));
    if (!reply.json.value("ok", false)) {
      const std::string error = JsonStringField(reply.json, "error");
      return Err(UnavailableError("slack " + std::string(method) +
                                  " failed: " + (error.empty() ? "ok is false" : error)));
    }
    return reply.json;
  }

  PlatformSettings p_;
};

}  // namespace

std::unique_ptr<Sender> MakeSlackSender(const PlatformSettings& p) {
  return std::make_unique<SlackSender>(p);
}

}  // namespace talaria::messaging
