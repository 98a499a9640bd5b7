// Telegram's Bot API: sendMessage (with message_thread_id for a forum topic), sendPhoto and
// sendDocument for MEDIA, setMessageReaction. Every answer is {"ok": true, "result": ...} or
// {"ok": false, "error_code", "description", "parameters": {"retry_after": seconds}}; a 429
// carries the wait in parameters.retry_after.
#include <charconv>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "messaging/media_types.h"
#include "messaging/multipart.h"
#include "messaging/sender.h"

namespace talaria::messaging {
namespace {

constexpr size_t kTelegramLimit = 4096;  // UTF-16 code units
constexpr size_t kCaptionLimit = 1024;

std::optional<std::chrono::milliseconds> TelegramRateLimit(const Reply& reply) {
  if (reply.status != 429) return std::nullopt;
  if (reply.json.is_object() && reply.json.contains("parameters") &&
      reply.json["parameters"].is_object()) {
    const Json& after = reply.json["parameters"].value("retry_after", Json());
    if (after.is_number() && after.get<double>() >= 0 && after.get<double>() <= 86'400) {
      return std::chrono::milliseconds(static_cast<int64_t>(after.get<double>() * 1000.0));
    }
  }
  return RetryAfterHeader(reply);
}

// A decimal id that fits in 64 bits; nullopt otherwise.
std::optional<int64_t> ParseId(std::string_view s) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

class TelegramSender final : public Sender {
 public:
  explicit TelegramSender(PlatformSettings p) : p_(std::move(p)) {}

  size_t limit() const override { return kTelegramLimit; }
  LengthUnit unit() const override { return LengthUnit::kUtf16; }
  bool sends_files() const override { return true; }
  bool reacts(bool) const override { return true; }

  Result<std::string> Send(const Destination& d, std::string_view text,
                           const CallLimits& limits) override {
    Json body = {{"chat_id", d.chat}, {"text", text}};
    if (!d.thread.empty()) {
      const std::optional<int64_t> thread = ParseId(d.thread);
      if (!thread) return Err(InvalidArgumentError("telegram topic ids are numbers: " + d.thread));
      body["message_thread_id"] = *thread;
    }
    net::HttpRequest req = Request("sendMessage");
    req.headers.emplace_back("Content-Type", "application/json");
    req.body = DumpJson(body);
    const Json result = TALARIA_TRY(Call("sendMessage", std::move(req), limits));
    return MessageId(result);
  }

  Result<std::string> SendFile(const Destination& d, const Attachment& file,
                               std::string_view caption, const CallLimits& limits) override {
    const bool photo = !file.as_document && IsImageFile(file.file_name);
    const char* method = photo ? "sendPhoto" : "sendDocument";
    MultipartBody form;
    form.AddField("chat_id", d.chat);
    if (!d.thread.empty()) form.AddField("message_thread_id", d.thread);
    if (!caption.empty() && MeasureLength(caption, LengthUnit::kUtf16) <= kCaptionLimit) {
      form.AddField("caption", caption);
    }
    form.AddFile(photo ? "photo" : "document", file.file_name, file.data);
    net::HttpRequest req = Request(method);
    req.headers.emplace_back("Content-Type", form.content_type());
    req.body = form.Finish();
    const Json result = TALARIA_TRY(Call(method, std::move(req), limits));
    return MessageId(result);
  }

  Status React(const Destination& d, std::string_view message_id, std::string_view emoji,
               bool remove, const CallLimits& limits) override {
    const std::optional<int64_t> id = ParseId(message_id);
    if (!id) {
      return InvalidArgumentError("telegram message ids are numbers: " + std::string(message_id));
    }
    Json reaction = Json::array();
    if (!remove) reaction.push_back({{"type", "emoji"}, {"emoji", emoji}});
    net::HttpRequest req = Request("setMessageReaction");
    req.headers.emplace_back("Content-Type", "application/json");
    req.body = DumpJson(Json{{"chat_id", d.chat}, {"message_id", *id}, {"reaction", reaction}});
    auto result = Call("setMessageReaction", std::move(req), limits);
    return result ? Status::Ok() : result.error();
  }

 private:
  net::HttpRequest Request(std::string_view method) const {
    net::HttpRequest req;
    req.method = "POST";
    req.url = p_.base_url + "/bot" + p_.token + "/" + std::string(method);
    return req;
  }

  Result<Json> Call(std::string_view method, net::HttpRequest req, const CallLimits& limits) {
    const Reply reply =
        TALARIA_TRY(Exchange("telegram", std::move(req), &TelegramRateLimit, limits));
    if (!reply.json.is_object()) return Err(Rejected("telegram", reply));
    if (reply.status != 200 || !reply.json.value("ok", false)) {
      const std::string description = JsonStringField(reply.json, "description");
      return Err(Rejected(
          "telegram", reply,
          std::string(method) + " failed: " + (description.empty() ? "ok is false" : description)));
    }
    return reply.json.contains("result") ? reply.json["result"] : Json();
  }

  static Result<std::string> MessageId(const Json& result) {
    if (!result.is_object() || !result.contains("message_id") ||
        !result["message_id"].is_number_integer()) {
      return Err(UnavailableError("telegram accepted the call but named no message_id"));
    }
    return std::to_string(result["message_id"].get<int64_t>());
  }

  PlatformSettings p_;
};

}  // namespace

std::unique_ptr<Sender> MakeTelegramSender(const PlatformSettings& p) {
  return std::make_unique<TelegramSender>(p);
}

}  // namespace talaria::messaging
