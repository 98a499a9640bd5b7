// SMS through Twilio's REST API: POST /2010-04-01/Accounts/{SID}/Messages.json with the form
// fields From, To and Body and HTTP Basic auth (SID:token). Twilio answers 201 with the message
// resource; its sid is the id, and a status of failed or undelivered is a failure. A 429 (error
// 20429) is retried after Retry-After. Markdown is stripped: a phone shows it as punctuation.
// MMS: Twilio fetches each picture itself from a public URL (MediaUrl, up to 10 per message,
// 5 MB in all); it has no upload. So MEDIA:https://... goes as MediaUrl, and a workspace file is
// refused before anything is sent rather than dropped with the text going out alone.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "messaging/sender.h"
#include "talaria/base/base64.h"
#include "talaria/base/uri.h"

namespace talaria::messaging {
namespace {

constexpr size_t kSmsLimit = 1600;    // Twilio's Body limit
constexpr size_t kMaxMediaUrls = 10;  // MediaUrl values in one message

// **bold**, __bold__, `code`, leading #'s and [text](url) -> text (url).
std::string StripMarkdown(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool line_start = true;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (line_start && c == '#') {
      while (i < text.size() && text[i] == '#') ++i;
      while (i < text.size() && text[i] == ' ') ++i;
      --i;
      line_start = false;
      continue;
    }
    line_start = c == '\n';
    if ((c == '*' || c == '_') && i + 1 < text.size() && text[i + 1] == c) {
      ++i;
      continue;
    }
    if (c == '`') continue;
    if (c == '[') {
      const size_t close = text.find("](", i);
      const size_t end = close == std::string_view::npos ? close : text.find(')', close);
      if (close != std::string_view::npos && end != std::string_view::npos &&
          text.substr(i, close - i).find('\n') == std::string_view::npos) {
        out.append(text.substr(i + 1, close - i - 1));
        out += " (";
        out.append(text.substr(close + 2, end - close - 2));
        out += ")";
        i = end;
        continue;
      }
    }
    out += c;
  }
  return out;
}

class SmsSender final : public Sender {
 public:
  explicit SmsSender(PlatformSettings p) : p_(std::move(p)) {}

  size_t limit() const override { return kSmsLimit; }

  bool sends_urls() const override { return true; }
  bool bundles_files() const override { return true; }
  size_t max_files() const override { return kMaxMediaUrls; }
  std::string NoFilesReason() const override {
    return "(Twilio MMS) has no upload: it fetches each picture from a public URL, so put the "
           "file at an https:// address and write MEDIA:https://...";
  }

  Result<std::string> Send(const Destination& d, std::string_view text,
                           const CallLimits& limits) override {
    return SendWithFiles(d, text, {}, limits);
  }

  Result<std::string> SendWithFiles(const Destination& d, std::string_view text,
                                    const std::vector<Attachment>& files,
                                    const CallLimits& limits) override {
    net::HttpRequest req;
    req.method = "POST";
    req.url = p_.base_url + "/2010-04-01/Accounts/" + PercentEncode(p_.account) + "/Messages.json";
    req.headers = {{"Authorization", "Basic " + Base64Encode(p_.account + ":" + p_.token)},
                   {"Content-Type", "application/x-www-form-urlencoded"}};
    req.body = "From=" + PercentEncode(p_.from) + "&To=" + PercentEncode(d.chat);
    // Body may be left out of an MMS that carries media; a text message needs it.
    if (!text.empty() || files.empty()) req.body += "&Body=" + PercentEncode(StripMarkdown(text));
    for (const Attachment& file : files) {
      if (file.url.empty()) {
        return Err(InvalidArgumentError("twilio takes media only by URL: " + file.file_name));
      }
      req.body += "&MediaUrl=" + PercentEncode(file.url);
    }
    const Reply reply = TALARIA_TRY(Exchange("sms", std::move(req), &RetryAfterHeader, limits));
    if ((reply.status != 201 && reply.status != 200) || !reply.json.is_object()) {
      const std::string message =
          reply.json.is_object() ? JsonStringField(reply.json, "message") : "";
      return Err(Rejected("twilio", reply, message));
    }
    const std::string status = JsonStringField(reply.json, "status");
    if (status == "failed" || status == "undelivered") {
      return Err(UnavailableError("twilio took the message but reports it " + status));
    }
    const std::string sid = JsonStringField(reply.json, "sid");
    if (sid.empty()) return Err(UnavailableError("twilio accepted the call but named no sid"));
    return sid;
  }

 private:
  PlatformSettings p_;
};

}  // namespace

std::unique_ptr<Sender> MakeSmsSender(const PlatformSettings& p) {
  return std::make_unique<SmsSender>(p);
}

}  // namespace talaria::messaging
