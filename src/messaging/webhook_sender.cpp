// A generic webhook: POST <url> with {"text", "target", "source": "talaria"} as JSON (and a
// Bearer token when MESSAGING_WEBHOOK_TOKEN is set). Any 2xx is acceptance; an "id" or
// "message_id" in a JSON answer becomes the message's id. A 429 is retried after Retry-After.
// Attachments ride in the same JSON body, one call for the text and every file, so a receiver
// reads one document whatever it holds (multipart would need a second parser on its side):
//   "attachments": [{"filename", "content_type", "size", "base64"}   a workspace file
//                   {"filename", "url"}]                             MEDIA:https://...
// The files' bytes together are at most 20 MiB (about 27 MB once in base64).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "messaging/media_types.h"
#include "messaging/sender.h"
#include "talaria/base/base64.h"

namespace talaria::messaging {
namespace {

class WebhookSender final : public Sender {
 public:
  explicit WebhookSender(PlatformSettings p) : p_(std::move(p)) {}

  size_t limit() const override { return 0; }
  bool sends_files() const override { return true; }
  bool sends_urls() const override { return true; }
  bool bundles_files() const override { return true; }

  Result<std::string> Send(const Destination& d, std::string_view text,
                           const CallLimits& limits) override {
    return Post(Json{{"text", text}, {"target", d.chat}, {"source", "talaria"}}, limits);
  }

  Result<std::string> SendWithFiles(const Destination& d, std::string_view text,
                                    const std::vector<Attachment>& files,
                                    const CallLimits& limits) override {
    Json body = {{"text", text}, {"target", d.chat}, {"source", "talaria"}};
    Json attachments = Json::array();
    size_t total = 0;
    for (const Attachment& file : files) {
      total += file.data.size();
      if (total > kMaxAttachmentBytes) {
        return Err(ResourceExhaustedError("webhook: the attachments hold more than " +
                                          std::to_string(kMaxAttachmentBytes >> 20) +
                                          " MiB together; nothing was sent"));
      }
      if (!file.url.empty()) {
        attachments.push_back({{"filename", file.file_name}, {"url", file.url}});
        continue;
      }
      attachments.push_back({{"filename", file.file_name},
                             {"content_type", MimeTypeFor(file.file_name)},
                             {"size", file.data.size()},
                             {"base64", Base64Encode(file.data)}});
    }
    body["attachments"] = std::move(attachments);
    return Post(body, limits);
  }

 private:
  Result<std::string> Post(const Json& body, const CallLimits& limits) {
    net::HttpRequest req;
    req.method = "POST";
    req.url = p_.base_url;
    req.headers = {{"Content-Type", "application/json"}};
    if (!p_.token.empty()) req.headers.emplace_back("Authorization", "Bearer " + p_.token);
    req.body = DumpJson(body);
    const Reply reply = TALARIA_TRY(Exchange("webhook", std::move(req), &RetryAfterHeader, limits));
    if (reply.status == 413) {
      return Err(Rejected("webhook", reply, "the body is larger than the receiver takes"));
    }
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

  PlatformSettings p_;
};

}  // namespace

std::unique_ptr<Sender> MakeWebhookSender(const PlatformSettings& p) {
  return std::make_unique<WebhookSender>(p);
}

}  // namespace talaria::messaging
