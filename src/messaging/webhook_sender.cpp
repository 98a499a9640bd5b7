// A generic webhook: POST <url> with {"text", "target", "source": "talaria"} as JSON (and a
// Bearer token when MESSAGING_WEBHOOK_TOKEN is set). Any 2xx is acceptance; an "id" or
// "message_id" in a JSON answer becomes the message's id. A 429 is retried after Retry-After.
#include <string>

#include <nlohmann/json.hpp>

#include "messaging/sender.h"

namespace talaria::messaging {
namespace {

class WebhookSender final : public Sender {
 public:
  explicit WebhookSender(PlatformSettings p) : p_(std::move(p)) {}

  size_t limit() const override { return 0; }

  Result<std::string> Send(const Destination& d, std::string_view text,
                           const CallLimits& limits) override {
    net::HttpRequest req;
    req.method = "POST";
    req.url = p_.base_url;
    req.headers = {{"Content-Type", "application/json"}};
    if (!p_.token.empty()) req.headers.emplace_back("Authorization", "Bearer " + p_.token);
    req.body = DumpJson(Json{{"text", text}, {"target", d.chat}, {"source", "talaria"}});
    const Reply reply = TALARIA_TRY(Exchange("webhook", std::move(req), &RetryAfterHeader, limits));
    if (reply.status < 200 || reply.status > 299) return Err(Rejected("webhook", reply));
    std::string id;
    if (reply.json.is_object()) {
      for (const char* key : {"id", "message_id"}) {
        const Json v = reply.json.value(key, Json());
        if (v.is_string()) id = v.get<std::string>();
        if (v.is_number_integer()) id = v.dump();
        if (!id.empty()) break;
      }
    }
    return id;
  }

 private:
  PlatformSettings p_;
};

}  // namespace

std::unique_ptr<Sender> MakeWebhookSender(const PlatformSettings& p) {
  return std::make_unique<WebhookSender>(p);
}

}  // namespace talaria::messaging
