// Slack's Web API: chat.postMessage with the bot token (Bearer), conversations.open for a user id,
// reactions.add/remove. Slack answers HTTP 200 with {"ok": false, "error": "..."} for most
// failures, so the ok flag and the ts (the message's id) are what say it was taken; HTTP 429
// carries Retry-After in seconds.
// A file goes the external-upload way (files.upload is retired): files.getUploadURLExternal
// with its name and length gives an upload URL and a file id, the bytes are POSTed to that URL
// (pre-signed: the bot token is not sent there), and files.completeUploadExternal with the
// channel_id (and thread_ts) shares the file. Those two methods take form fields, not JSON.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "messaging/sender.h"
#include "talaria/base/uri.h"

namespace talaria::messaging {
namespace {

// Slack cuts a message's text at 40,000 characters; stay clear of it.
constexpr size_t kSlackLimit = 39'000;
// Slack takes files up to 1 GB; send_message's own cap (kMaxAttachmentBytes) is lower.
constexpr size_t kSlackFileLimit = size_t{1} << 30;

// The origin of `url` ("https://files.slack.com"), empty when it has none.
std::string_view OriginOf(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return {};
  const size_t path = url.find('/', scheme + 3);
  return url.substr(0, path);
}

// The ts of the message Slack made when it shared `file` in `channel`, when the answer already
// says (files[].shares.{public,private}.<channel>[0].ts); sharing may finish after the answer.
std::string ShareTs(const Json& file, const std::string& channel) {
  const Json shares = file.value("shares", Json());
  if (!shares.is_object()) return {};
  for (const char* kind : {"public", "private"}) {
    const Json where = shares.value(kind, Json());
    if (!where.is_object()) continue;
    const Json list = where.value(channel, Json());
    if (list.is_array() && !list.empty() && list[0].is_object()) {
      std::string ts = JsonStringField(list[0], "ts");  // moved out
      if (!ts.empty()) return ts;
    }
  }
  return {};
}

class SlackSender final : public Sender {
 public:
  explicit SlackSender(PlatformSettings p) : p_(std::move(p)) {}

  size_t limit() const override { return kSlackLimit; }
  bool reacts(bool) const override { return true; }
  bool sends_files() const override { return true; }
  size_t max_file_bytes() const override { return kSlackFileLimit; }

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

  // The message id is the share's ts when the answer has it, else the file id (F...).
  Result<std::string> SendFile(const Destination& d, const Attachment& file,
                               std::string_view caption, const CallLimits& limits) override {
    const Json slot = TALARIA_TRY(CallForm(
        "files.getUploadURLExternal",
        "filename=" + PercentEncode(file.file_name) + "&length=" + std::to_string(file.data.size()),
        limits));
    const std::string upload_url = JsonStringField(slot, "upload_url");
    const std::string file_id = JsonStringField(slot, "file_id");
    if (file_id.empty() || !UploadUrlAllowed(upload_url)) {
      return Err(UnavailableError(
          "slack files.getUploadURLExternal named no file_id or no https upload_url"));
    }
    TALARIA_RETURN_IF_ERROR(Upload(upload_url, file, limits));
    std::string form =
        "files=" +
        PercentEncode(DumpJson(Json::array({{{"id", file_id}, {"title", file.file_name}}}))) +
        "&channel_id=" + PercentEncode(d.chat);
    if (!d.thread.empty()) form += "&thread_ts=" + PercentEncode(d.thread);
    if (!caption.empty()) form += "&initial_comment=" + PercentEncode(caption);
    const Json done = TALARIA_TRY(CallForm("files.completeUploadExternal", form, limits));
    const Json files = done.value("files", Json());
    if (files.is_array()) {
      for (const Json& f : files) {
        if (!f.is_object() || JsonStringField(f, "id") != file_id) continue;
        const std::string ts = ShareTs(f, d.chat);
        return ts.empty() ? file_id : ts;
      }
    }
    return Err(UnavailableError("slack files.completeUploadExternal did not list the file " +
                                file_id + "; not shared"));
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
    return Post(method, "application/json; charset=utf-8", DumpJson(body), limits);
  }

  Result<Json> CallForm(std::string_view method, std::string form, const CallLimits& limits) {
    return Post(method, "application/x-www-form-urlencoded", std::move(form), limits);
  }

  // An https URL, or one on the API's own origin (a proxy or a test's fake serving both).
  bool UploadUrlAllowed(std::string_view url) const {
    if (url.starts_with("https://")) return OriginOf(url).size() > 8;
    return !OriginOf(url).empty() && OriginOf(url) == OriginOf(p_.base_url);
  }

  // The bytes to the pre-signed URL; Slack answers 200 ("OK - <length>") when it has them.
  Status Upload(const std::string& url, const Attachment& file, const CallLimits& limits) {
    net::HttpRequest req;
    req.method = "POST";
    req.url = url;
    req.headers = {{"Content-Type", "application/octet-stream"}};
    req.body = file.data;
    const Reply reply = TALARIA_TRY(Exchange("slack", std::move(req), &RetryAfterHeader, limits));
    if (reply.status != 200) return Rejected("slack upload of " + file.file_name, reply);
    return Status::Ok();
  }

  Result<Json> Post(std::string_view method, std::string_view type, std::string body,
                    const CallLimits& limits) {
    net::HttpRequest req;
    req.method = "POST";
    req.url = p_.base_url + "/" + std::string(method);
    req.headers = {{"Authorization", "Bearer " + p_.token}, {"Content-Type", std::string(type)}};
    req.body = std::move(body);
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
