// E2B (and the E2B-compatible APIs other providers sell): the control plane with X-API-Key,
//   POST   /sandboxes            {templateID, timeout (s), metadata, envVars, autoPause}
//                                -> 201 {sandboxID, envdAccessToken, domain, ...}
//   GET    /v2/sandboxes?metadata=<urlencoded k=v>   talaria's sandboxes (reaping)
//   DELETE /sandboxes/{id}
// and the data plane envd in the sandbox (X-Access-Token, E2b-Sandbox-Id, E2b-Sandbox-Port),
// whose process API is Connect RPC: POST /process.Process/Start with one enveloped JSON message
// ({process: {cmd, args, cwd}}); the answer is a stream of enveloped events (start {pid},
// data {stdout|stderr base64}, end {exitCode}) closed by an end-of-stream envelope.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "sandboxes/api_http.h"
#include "sandboxes/sandbox_api.h"
#include "talaria/base/base64.h"

namespace talaria::sandboxes {
namespace {

constexpr int kEnvdPort = 49983;
constexpr uint8_t kEndOfStream = 0x02;

std::string Envelope(uint8_t flags, std::string_view payload) {
  std::string out;
  out += static_cast<char>(flags);
  const auto n = static_cast<uint32_t>(payload.size());
  for (int shift : {24, 16, 8, 0}) out += static_cast<char>((n >> shift) & 0xFF);
  out.append(payload);
  return out;
}

// Reads Connect envelopes out of a byte stream as it arrives.
class EnvelopeReader {
 public:
  // Feeds bytes; calls `on(flags, payload)` per complete message.
  template <class F>
  void Feed(std::string_view bytes, F&& on) {
    buf_.append(bytes);
    size_t at = 0;
    while (buf_.size() - at >= 5) {
      uint32_t n = 0;
      for (int i = 1; i <= 4; ++i) n = (n << 8) | static_cast<uint8_t>(buf_[at + i]);
      if (buf_.size() - at - 5 < n) break;
      on(static_cast<uint8_t>(buf_[at]), std::string_view(buf_).substr(at + 5, n));
      at += 5 + n;
    }
    buf_.erase(0, at);
  }

 private:
  std::string buf_;
};

class E2bApi final : public SandboxApi {
 public:
  E2bApi(SandboxServiceOptions o, std::unique_ptr<ApiHttp> http)
      : o_(std::move(o)), http_(std::move(http)) {}

  std::string_view kind() const override { return "e2b"; }

  Status Create() override {
    Json body = {
        {"templateID", o_.image},
        {"timeout", 3600},
        {"autoPause", false},
        {"metadata",
         {{std::string(kOwnerLabel), OwnerLabel()}, {std::string(kTaskLabel), o_.task_id}}},
        {"envVars", Json::object()}};
    ApiHttp::Call call = MakeCall("POST", "/sandboxes", &body);
    call.timeout = o_.request_timeout;
    ApiAnswer answer = TALARIA_TRY(http_->Expect2xx(call, 1));
    id_ = JsonStringField(answer.json, "sandboxID");
    if (id_.empty()) return UnavailableError("e2b: the API answered without a sandboxID");
    token_ = JsonStringField(answer.json, "envdAccessToken");
    if (!o_.data_plane_url.empty()) {
      envd_ = o_.data_plane_url;
    } else {
      std::string domain = JsonStringField(answer.json, "domain");
      if (domain.empty()) domain = "e2b.app";
      envd_ = "https://" + std::to_string(kEnvdPort) + "-" + id_ + "." + domain;
    }
    while (!envd_.empty() && envd_.back() == '/') envd_.pop_back();
    return Status::Ok();
  }

  Result<ExecAnswer> Exec(const ExecCall& call, std::stop_token stop) override {
    const Json start = {{"process",
                         {{"cmd", "/bin/bash"},
                          {"args", {"-c", ScriptWithStdin(call.script, call.stdin_data)}},
                          {"envs", Json::object()}}}};
    net::HttpRequest req;
    req.method = "POST";
    req.url = envd_ + "/process.Process/Start";
    req.headers = {{"Content-Type", "application/connect+json"},
                   {"Connect-Protocol-Version", "1"},
                   {"E2b-Sandbox-Id", id_},
                   {"E2b-Sandbox-Port", std::to_string(kEnvdPort)}};
    if (!token_.empty()) req.headers.emplace_back("X-Access-Token", token_);
    req.body = Envelope(0, DumpJson(start));
    req.connect_timeout = std::chrono::milliseconds(10'000);
    req.idle_timeout = std::chrono::milliseconds(0);  // a quiet command may run for long
    req.ca_file = o_.ca_file;
    req.proxy = "";
    ExecAnswer answer;
    bool ended = false;
    std::string stream_error;
    EnvelopeReader reader;
    auto client = TALARIA_TRY(net::MakeHttpClient());
    auto head = client->Send(
        req,
        [&](std::string_view chunk) {
          reader.Feed(chunk, [&](uint8_t flags, std::string_view payload) {
            auto msg = ParseJson(payload);
            if (!msg || !msg->is_object()) return;
            if ((flags & kEndOfStream) != 0) {
              if (msg->contains("error")) stream_error = DumpJson((*msg)["error"]);
              return;
            }
            if (!msg->contains("event") || !(*msg)["event"].is_object()) return;
            const Json& event = (*msg)["event"];
            if (auto data = event.find("data"); data != event.end() && data->is_object()) {
              for (const char* stream : {"stdout", "stderr", "pty"}) {
                if (auto decoded = Base64Decode(JsonStringField(*data, stream))) {
                  answer.output += *decoded;
                }
              }
            }
            if (auto end = event.find("end"); end != event.end() && end->is_object()) {
              ended = true;
              auto code = end->find("exitCode");
              answer.exit_code =
                  code != end->end() && code->is_number_integer() ? code->get<int>() : 0;
              // A killed process reports no exit code, only its status ("signal: killed").
              if (code == end->end() &&
                  JsonStringField(*end, "status").find("signal") != std::string::npos) {
                answer.exit_code = 137;
              }
            }
          });
          return true;
        },
        stop);
    if (!head) return Err(Status(head.error().code(), "e2b: " + head.error().message()));
    if (head->status != 200) {
      return Err(UnavailableError("e2b: envd answered HTTP " + std::to_string(head->status)));
    }
    if (!ended) {
      return Err(UnavailableError("e2b: the process stream ended without an end event" +
                                  (stream_error.empty() ? "" : ": " + stream_error)));
    }
    return answer;
  }

  Status Destroy() override {
    if (id_.empty()) return Status::Ok();
    return DeleteById(id_);
  }

  Result<std::vector<ListedSandbox>> ListOwned() override {
    // The metadata filter matches whole key=value pairs; the owner's value is not known.
    ApiHttp::Call get = MakeCall("GET", "/v2/sandboxes");
    get.timeout = o_.request_timeout;
    ApiAnswer answer = TALARIA_TRY(http_->Expect2xx(get, 3));
    std::vector<ListedSandbox> out;
    if (!answer.json.is_array()) return out;
    for (const Json& s : answer.json) {
      if (!s.is_object() || !s.contains("metadata")) continue;
      const std::string owner = JsonStringField(s["metadata"], kOwnerLabel);
      if (!owner.empty()) out.push_back({JsonStringField(s, "sandboxID"), owner});
    }
    return out;
  }

  Status DeleteById(const std::string& id) override {
    ApiHttp::Call call = MakeCall("DELETE", "/sandboxes/" + id);
    call.timeout = o_.request_timeout;
    auto r = http_->Expect2xx(call, 3);
    if (!r && r.error().code() != StatusCode::kNotFound) return r.error();
    return Status::Ok();
  }

 private:
  const SandboxServiceOptions o_;
  const std::unique_ptr<ApiHttp> http_;
  std::string id_;
  std::string token_;
  std::string envd_;
};

}  // namespace

Result<std::unique_ptr<SandboxApi>> MakeE2bApi(const SandboxServiceOptions& options) {
  // The control plane's key only: envd takes the sandbox's own access token.
  const auto headers_for = [](const std::string& key) {
    return net::HeaderList{{"X-API-Key", key}};
  };
  auto http = TALARIA_TRY(
      ApiHttp::Make("e2b", options.base_url, headers_for(options.api_key), options.ca_file));
  RenewKeyWith(*http, options.renew_api_key, headers_for);
  return std::unique_ptr<SandboxApi>(new E2bApi(options, std::move(http)));
}

}  // namespace talaria::sandboxes
