// ntfy: POST <server>/<topic> with the text as the body (and a Bearer token when the server
// needs one); the answer is the published message as JSON, whose id is the id. Past 4,096 bytes
// ntfy turns a message into an attachment, so parts stay under it. A 429 is retried.
// Attachments: a workspace file is PUT as the body with its name in the Filename header (the
// server stores it and the message links it); a URL goes in the Attach header (the server
// links it, fetching nothing). Either way the answer's attachment object is what says the file
// was taken: a server without an attachment cache answers 400, one over its
// attachment-file-size-limit (15 MB by default) 413.
#include <string>

#include <nlohmann/json.hpp>

#include "messaging/sender.h"
#include "talaria/base/base64.h"
#include "talaria/base/uri.h"

namespace talaria::messaging {
namespace {

constexpr size_t kNtfyLimit = 4096;                  // bytes: the default message-size-limit
constexpr size_t kNtfyFileLimit = size_t{15} << 20;  // the default attachment-file-size-limit

// A header value ntfy reads back as `value`: printable ASCII as it is, anything else as an
// RFC 2047 encoded word (ntfy decodes those in every parameter header).
std::string HeaderValue(std::string_view value) {
  bool plain = true;
  for (char c : value) plain = plain && c >= ' ' && c < 0x7f;
  if (plain) return std::string(value);
  return "=?UTF-8?B?" + Base64Encode(value) + "?=";
}

class NtfySender final : public Sender {
 public:
  explicit NtfySender(PlatformSettings p) : p_(std::move(p)) {}

  size_t limit() const override { return kNtfyLimit; }
  LengthUnit unit() const override { return LengthUnit::kBytes; }
  bool sends_files() const override { return true; }
  bool sends_urls() const override { return true; }
  size_t max_file_bytes() const override { return kNtfyFileLimit; }

  Result<std::string> Send(const Destination& d, std::string_view text,
                           const CallLimits& limits) override {
    net::HttpRequest req = Request("POST", d);
    req.headers.emplace_back("Content-Type", "text/plain; charset=utf-8");
    req.headers.emplace_back("Markdown", "yes");
    req.body = std::string(text);
    return Published(TALARIA_TRY(Exchange("ntfy", std::move(req), &RetryAfterHeader, limits)),
                     nullptr);
  }

  Result<std::string> SendFile(const Destination& d, const Attachment& file,
                               std::string_view caption, const CallLimits& limits) override {
    net::HttpRequest req = Request(file.url.empty() ? "PUT" : "POST", d);
    if (!file.file_name.empty()) req.headers.emplace_back("Filename", HeaderValue(file.file_name));
    if (!caption.empty()) req.headers.emplace_back("Message", HeaderValue(caption));
    if (file.url.empty()) {
      req.headers.emplace_back("Content-Type", "application/octet-stream");
      req.body = file.data;
    } else {
      req.headers.emplace_back("Attach", file.url);
    }
    return Published(TALARIA_TRY(Exchange("ntfy", std::move(req), &RetryAfterHeader, limits)),
                     &file);
  }

 private:
  net::HttpRequest Request(std::string method, const Destination& d) const {
    net::HttpRequest req;
    req.method = std::move(method);
    req.url = p_.base_url + "/" + PercentEncode(d.chat);
    if (!p_.token.empty()) req.headers.emplace_back("Authorization", "Bearer " + p_.token);
    return req;
  }

  // The message's id; with `file`, only when the answer carries the attachment.
  static Result<std::string> Published(const Reply& reply, const Attachment* file) {
    if (reply.status == 413) {
      return Err(Rejected("ntfy", reply, "the file is larger than this server takes"));
    }
    if (reply.status != 200 || !reply.json.is_object()) {
      const std::string error = reply.json.is_object() ? JsonStringField(reply.json, "error") : "";
      return Err(Rejected("ntfy", reply, error));
    }
    const std::string id = JsonStringField(reply.json, "id");
    if (id.empty()) return Err(UnavailableError("ntfy accepted the call but named no id"));
    if (file != nullptr) {
      const Json attachment = reply.json.value("attachment", Json());
      if (!attachment.is_object() || JsonStringField(attachment, "url").empty()) {
        return Err(UnavailableError("ntfy published " + id + " without the attachment " +
                                    file->file_name + " (attachments off on this server?)"));
      }
    }
    return id;
  }

  PlatformSettings p_;
};

}  // namespace

std::unique_ptr<Sender> MakeNtfySender(const PlatformSettings& p) {
  return std::make_unique<NtfySender>(p);
}

}  // namespace talaria::messaging
