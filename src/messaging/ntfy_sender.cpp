// ntfy: POST <server>/<topic> with the text as the body (and a Bearer token when the server
// needs one); the answer is the published message as JSON, whose id is the id. Past 4,096 bytes
// ntfy turns a message into an attachment, so parts stay under it. A 429 is retried.
#include <string>

#include <nlohmann/json.hpp>

#include "messaging/sender.h"

namespace talaria::messaging {
namespace {

constexpr size_t kNtfyLimit = 4096;  // bytes: the server's default message-size-limit

class NtfySender final : public Sender {
 public:
  explicit NtfySender(PlatformSettings p) : p_(std::move(p)) {}

  size_t limit() const override { return kNtfyLimit; }
  LengthUnit unit() const override { return LengthUnit::kBytes; }

  Result<std::string> Send(const Destination& d, std::string_view text,
                           const CallLimits& limits) override {
    net::HttpRequest req;
    req.method = "POST";
    req.url = p_.base_url + "/" + UrlEncode(d.chat);
    req.headers = {{"Content-Type", "text/plain; charset=utf-8"}, {"Markdown", "yes"}};
    if (!p_.token.empty()) req.headers.emplace_back("Authorization", "Bearer " + p_.token);
    req.body = std::string(text);
    const Reply reply = TALARIA_TRY(Exchange("ntfy", std::move(req), &RetryAfterHeader, limits));
    if (reply.status != 200 || !reply.json.is_object()) return Err(Rejected("ntfy", reply));
    const std::string id = JsonStringField(reply.json, "id");
    if (id.empty()) return Err(UnavailableError("ntfy accepted the call but named no id"));
    return id;
  }

 private:
  PlatformSettings p_;
};

}  // namespace

std::unique_ptr<Sender> MakeNtfySender(const PlatformSettings& p) {
  return std::make_unique<NtfySender>(p);
}

}  // namespace talaria::messaging
