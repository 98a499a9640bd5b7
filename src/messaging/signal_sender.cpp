// Signal through signal-cli's JSON-RPC HTTP daemon (`signal-cli -a <account> daemon --http`):
// POST /api/v1/rpc with method "send" or "sendReaction". The message's id is its timestamp. A
// send can succeed as a call and still fail per recipient (results[].type other than SUCCESS,
// e.g. RATE_LIMIT_FAILURE or UNREGISTERED_FAILURE): that is a failure here. Signal's rate limits
// ask for a captcha proof, not a wait, so they are reported, not retried.
// A file goes in `send`'s attachments as a data URI (data:<mime>;filename=<name>;base64,...):
// the daemon may run in another container or host, where a path of ours means nothing.
#include <string>

#include <nlohmann/json.hpp>

#include "messaging/media_types.h"
#include "messaging/sender.h"
#include "talaria/base/base64.h"
#include "talaria/base/random.h"

namespace talaria::messaging {
namespace {

// Signal clients carry the text past 2,000 characters as a "long text" attachment.
constexpr size_t kSignalLimit = 2000;

std::optional<std::chrono::milliseconds> NoRetry(const Reply&) { return std::nullopt; }

class SignalSender final : public Sender {
 public:
  explicit SignalSender(PlatformSettings p) : p_(std::move(p)) {}

  size_t limit() const override { return kSignalLimit; }
  bool reacts(bool) const override { return true; }
  bool sends_files() const override { return true; }

  Result<std::string> Send(const Destination& d, std::string_view text,
                           const CallLimits& limits) override {
    Json params = Recipient(d);
    params["message"] = text;
    return SendParams(std::move(params), limits);
  }

  Result<std::string> SendFile(const Destination& d, const Attachment& file,
                               std::string_view caption, const CallLimits& limits) override {
    // The filename parameter ends at ';' or ',' in signal-cli's reading of the URI.
    std::string name = file.file_name;
    for (char& c : name) {
      if (c == ';' || c == ',' || static_cast<unsigned char>(c) < 0x20) c = '_';
    }
    Json params = Recipient(d);
    params["message"] = caption;
    params["attachments"] =
        Json::array({"data:" + std::string(MimeTypeFor(file.file_name)) + ";filename=" + name +
                     ";base64," + Base64Encode(file.data)});
    return SendParams(std::move(params), limits);
  }

  Status React(const Destination& d, std::string_view message_id, std::string_view emoji,
               bool remove, const CallLimits& limits) override {
    int64_t ts = 0;
    for (char c : message_id) {
      if (c < '0' || c > '9' || ts > (INT64_MAX - 9) / 10) {
        return InvalidArgumentError("signal message ids are timestamps: " +
                                    std::string(message_id));
      }
      ts = ts * 10 + (c - '0');
    }
    Json params = Recipient(d);
    params["emoji"] = emoji;
    params["targetAuthor"] = p_.account;  // reactions to talaria's own messages
    params["targetTimestamp"] = ts;
    if (remove) params["remove"] = true;
    auto result = Call("sendReaction", std::move(params), limits);
    return result ? Status::Ok() : result.error();
  }

 private:
  // `send` with `params`; the message's timestamp as its id.
  Result<std::string> SendParams(Json params, const CallLimits& limits) {
    const Json result = TALARIA_TRY(Call("send", std::move(params), limits));
    const Json ts = result.is_object() ? result.value("timestamp", Json()) : Json();
    if (!ts.is_number_integer()) {
      return Err(UnavailableError("signal-cli accepted the call but named no timestamp"));
    }
    return std::to_string(ts.get<int64_t>());
  }

  Json Recipient(const Destination& d) const {
    Json params = {{"account", p_.account}};
    if (d.chat.starts_with("group.")) {
      params["groupId"] = d.chat.substr(6);
    } else {
      params["recipient"] = Json::array({d.chat});
    }
    return params;
  }

  Result<Json> Call(std::string_view method, Json params, const CallLimits& limits) {
    const std::string id = RandomHex(8);
    net::HttpRequest req;
    req.method = "POST";
    req.url = p_.base_url + "/api/v1/rpc";
    req.headers = {{"Content-Type", "application/json"}};
    req.body = DumpJson(
        Json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}, {"id", id}});
    const Reply reply = TALARIA_TRY(Exchange("signal", std::move(req), &NoRetry, limits));
    if (reply.status != 200 || !reply.json.is_object()) return Err(Rejected("signal", reply));
    if (reply.json.contains("error")) {
      const Json& error = reply.json["error"];
      const std::string message = error.is_object() ? JsonStringField(error, "message") : "";
      return Err(UnavailableError("signal-cli " + std::string(method) +
                                  " failed: " + (message.empty() ? error.dump() : message)));
    }
    if (JsonStringField(reply.json, "id") != id || !reply.json.contains("result")) {
      return Err(UnavailableError("signal-cli answered another call or no result"));
    }
    const Json& result = reply.json["result"];
    if (result.is_object() && result.contains("results") && result["results"].is_array()) {
      for (const Json& r : result["results"]) {
        const std::string type = r.is_object() ? JsonStringField(r, "type") : "";
        if (type != "SUCCESS") {
          return Err(UnavailableError("signal could not deliver to a recipient: " +
                                      (type.empty() ? std::string("no status") : type)));
        }
      }
    }
    return result;
  }

  PlatformSettings p_;
};

}  // namespace

std::unique_ptr<Sender> MakeSignalSender(const PlatformSettings& p) {
  return std::make_unique<SignalSender>(p);
}

}  // namespace talaria::messaging
