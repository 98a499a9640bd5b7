// Camofox's REST API as a PageDriver (camofox_driver.h).
#include "talaria/browser/camofox_driver.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "browser/provider_rest.h"
#include "talaria/base/random.h"
#include "talaria/base/uri.h"

namespace talaria::browser {
namespace {

constexpr std::string_view kWho = "camofox";
constexpr size_t kMaxSnapshotChars = size_t{2} << 20;
constexpr int kMaxSnapshotPages = 64;

// Collects the page's images the way browser_get_images reports them (data: URLs dropped).
constexpr std::string_view kImagesExpression =
    "Array.from(document.images).filter(i => i.src && !i.src.startsWith('data:'))"
    ".slice(0, 500).map(i => ({src: i.src, alt: i.alt || '', width: i.naturalWidth || "
    "i.width || 0, height: i.naturalHeight || i.height || 0}))";

// One Camofox snapshot line in talaria's format: "[link e1] More" -> "- link \"More\"
// [ref=e1]". Lines already in that format, or not in Camofox's, pass through. Counts refs.
std::string ConvertLine(std::string_view line, int& refs) {
  const size_t indent = line.find_first_not_of(' ');
  if (indent == std::string_view::npos) return std::string(line);
  std::string_view body = line.substr(indent);
  if (body.find("[ref=") != std::string_view::npos) {
    ++refs;
    return std::string(line);
  }
  if (body.empty() || body.front() != '[') return std::string(line);
  const size_t close = body.find(']');
  if (close == std::string_view::npos) return std::string(line);
  std::string_view inside = body.substr(1, close - 1);
  std::string_view text = body.substr(close + 1);
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  std::string_view role = inside;
  std::string_view ref;
  if (const size_t space = inside.find(' '); space != std::string_view::npos) {
    role = inside.substr(0, space);
    ref = inside.substr(space + 1);
  }
  std::string out(line.substr(0, indent));
  out += "- ";
  out += role;
  if (!text.empty()) {
    out += " \"";
    for (const char c : text) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  if (!ref.empty()) {
    out += " [ref=";
    out += ref;
    out += ']';
    ++refs;
  }
  return out;
}

std::string ConvertSnapshot(std::string_view text, int& refs) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) {
      if (!out.empty()) out += '\n';
      out += ConvertLine(text.substr(start, end - start), refs);
    }
    start = end + 1;
  }
  return out;
}

// A stop token that fires when either the call's token or the driver's Close fires.
class LinkedStop {
 public:
  LinkedStop(const std::stop_token& a, const std::stop_token& b)
      : from_a_(a, Stopper{&source_}), from_b_(b, Stopper{&source_}) {}
  std::stop_token token() const { return source_.get_token(); }

 private:
  struct Stopper {
    std::stop_source* source;
    void operator()() const noexcept { source->request_stop(); }
  };
  std::stop_source source_;
  std::stop_callback<Stopper> from_a_;
  std::stop_callback<Stopper> from_b_;
};

class CamofoxDriver final : public PageDriver {
 public:
  explicit CamofoxDriver(CamofoxOptions options) : o_(std::move(options)) {
    if (o_.user_id.empty()) o_.user_id = "talaria-" + RandomHex(8);
    if (o_.session_key.empty()) o_.session_key = "talaria";
  }
  ~CamofoxDriver() override { Close(); }

  std::string_view backend() const override { return kWho; }

  Status Health() {
    const CallLimits limits{.deadline = std::chrono::steady_clock::now() + o_.request_timeout,
                            .cancel = {}};
    auto answer = Request("GET", "/health", nullptr, limits);
    if (!answer) return answer.error();
    if (!answer->ok()) return rest::StatusError(kWho, "GET /health", *answer);
    return Status::Ok();
  }

  Result<Snapshot> Navigate(std::string_view url, const CallLimits& limits) override {
    if (o_.guard) TALARIA_RETURN_IF_ERROR(o_.guard->Admit(url, limits.cancel));
    Json body = {{"userId", o_.user_id}, {"url", std::string(url)}};
    std::string landed;
    if (tab_.empty()) {
      body["sessionKey"] = o_.session_key;
      const rest::Answer a = TALARIA_TRY(Expect("POST", "/tabs", &body, limits, "opening a tab"));
      const std::string tab = rest::StringField(a.json, {"tabId"});
      TALARIA_RETURN_IF_ERROR(rest::CheckId(kWho, tab));
      tab_ = tab;
      has_session_ = true;
      landed = rest::StringField(a.json, {"url"});
    } else {
      const rest::Answer a =
          TALARIA_TRY(Expect("POST", TabPath("/navigate"), &body, limits, "navigating"));
      landed = rest::StringField(a.json, {"url"});
    }
    TALARIA_RETURN_IF_ERROR(JudgeLanding(landed, limits));
    return TakeSnapshot({}, limits);
  }

  Result<Snapshot> TakeSnapshot(const SnapshotOptions& /*options*/,
                                const CallLimits& limits) override {
    TALARIA_RETURN_IF_ERROR(NeedTab());
    Snapshot snap;
    std::string raw;
    int64_t offset = 0;
    for (int page = 0; page < kMaxSnapshotPages; ++page) {
      std::string path = TabPath("/snapshot") + "?userId=" + PercentEncode(o_.user_id);
      if (offset > 0) path += "&offset=" + std::to_string(offset);
      const rest::Answer a = TALARIA_TRY(Expect("GET", path, nullptr, limits, "snapshot"));
      raw += rest::StringField(a.json, {"snapshot"});
      if (snap.url.empty()) snap.url = rest::StringField(a.json, {"url"});
      if (snap.title.empty()) snap.title = rest::StringField(a.json, {"title"});
      const auto more = a.json.find("hasMore");
      const auto next = a.json.find("nextOffset");
      if (more == a.json.end() || !more->is_boolean() || !more->get<bool>() ||
          next == a.json.end() || !next->is_number_integer() || next->get<int64_t>() <= offset ||
          raw.size() >= kMaxSnapshotChars) {
        break;
      }
      offset = next->get<int64_t>();
    }
    if (raw.size() > kMaxSnapshotChars) raw.resize(kMaxSnapshotChars);
    snap.text = ConvertSnapshot(raw, snap.element_count);
    return snap;
  }

  Status Click(std::string_view ref, const CallLimits& limits) override {
    return Action("/click", {{"ref", std::string(ref)}}, limits, "click");
  }

  Status Type(std::string_view ref, std::string_view text, const CallLimits& limits) override {
    return Action("/type", {{"ref", std::string(ref)}, {"text", std::string(text)}}, limits,
                  "type");
  }

  Status Scroll(bool down, const CallLimits& limits) override {
    return Action("/scroll", {{"direction", down ? "down" : "up"}, {"amount", 500}}, limits,
                  "scroll");
  }

  Result<std::string> Back(const CallLimits& limits) override {
    TALARIA_RETURN_IF_ERROR(NeedTab());
    const Json body = {{"userId", o_.user_id}};
    const rest::Answer a = TALARIA_TRY(Expect("POST", TabPath("/back"), &body, limits, "back"));
    std::string url = rest::StringField(a.json, {"url"});
    TALARIA_RETURN_IF_ERROR(JudgeLanding(url, limits));
    return url;
  }

  Status Press(std::string_view key, const CallLimits& limits) override {
    return Action("/press", {{"key", std::string(key)}}, limits, "press");
  }

  Result<std::vector<PageImage>> Images(const CallLimits& limits) override {
    const Evaluation e = TALARIA_TRY(Evaluate(kImagesExpression, limits));
    std::vector<PageImage> images;
    if (!e.value.is_array()) return images;
    for (const Json& item : e.value) {
      if (!item.is_object()) continue;
      PageImage image{.src = rest::StringField(item, {"src"}),
                      .alt = rest::StringField(item, {"alt"}),
                      .width = 0,
                      .height = 0};
      if (image.src.empty() || image.src.rfind("data:", 0) == 0) continue;
      if (auto w = item.find("width"); w != item.end() && w->is_number()) {
        image.width = w->get<int64_t>();
      }
      if (auto h = item.find("height"); h != item.end() && h->is_number()) {
        image.height = h->get<int64_t>();
      }
      images.push_back(std::move(image));
    }
    return images;
  }

  Result<std::string> Screenshot(bool /*annotate*/, const CallLimits& limits) override {
    TALARIA_RETURN_IF_ERROR(NeedTab());
    const std::string path = TabPath("/screenshot") + "?userId=" + PercentEncode(o_.user_id);
    const rest::Answer a = TALARIA_TRY(Expect("GET", path, nullptr, limits, "screenshot"));
    static constexpr std::string_view kPngMagic = "\x89PNG\r\n\x1a\n";
    if (a.raw.compare(0, kPngMagic.size(), kPngMagic) != 0) {
      return Err(UnavailableError("camofox: the screenshot is not a PNG image"));
    }
    return a.raw;
  }

  Result<Evaluation> Evaluate(std::string_view expression, const CallLimits& limits) override {
    TALARIA_RETURN_IF_ERROR(NeedTab());
    const Json body = {{"userId", o_.user_id}, {"expression", std::string(expression)}};
    const rest::Answer a =
        TALARIA_TRY(Expect("POST", TabPath("/evaluate"), &body, limits, "evaluate"));
    if (auto ok = a.json.find("ok"); ok != a.json.end() && ok->is_boolean() && !ok->get<bool>()) {
      return Err(InvalidArgumentError("camofox: the expression failed: " +
                                      rest::StringField(a.json, {"error"})));
    }
    Evaluation e;
    if (auto r = a.json.find("result"); r != a.json.end()) e.value = *r;
    e.type = rest::StringField(a.json, {"resultType"});
    if (e.type.empty()) e.type = e.value.is_null() ? "undefined" : e.value.type_name();
    return e;
  }

  Result<std::vector<ConsoleEntry>> Console(bool /*clear*/, const CallLimits& /*limits*/) override {
    return Err(FailedPreconditionError("camofox has no console API; use an expression instead"));
  }

  void Close() override {
    if (closed_.exchange(true)) return;
    close_source_.request_stop();  // a call in flight returns Cancelled
    if (!has_session_) return;
    // The session goes with the driver (cookies, tabs); bounded, and best effort.
    const CallLimits limits{
        .deadline = std::chrono::steady_clock::now() +
                    std::min(o_.request_timeout, std::chrono::milliseconds(5000)),
        .cancel = {}};
    (void)Send("DELETE", "/sessions/" + PercentEncode(o_.user_id), nullptr, limits, {});
  }

 private:
  Status NeedTab() const {
    if (closed_) return UnavailableError("camofox: the driver is closed");
    if (tab_.empty()) return FailedPreconditionError("no page yet: navigate to a URL first");
    return Status::Ok();
  }

  std::string TabPath(std::string_view tail) const { return "/tabs/" + tab_ + std::string(tail); }

  Status Action(std::string_view tail, Json fields, const CallLimits& limits,
                std::string_view what) {
    TALARIA_RETURN_IF_ERROR(NeedTab());
    fields["userId"] = o_.user_id;
    TALARIA_RETURN_IF_ERROR(Expect("POST", TabPath(tail), &fields, limits, what));
    return Status::Ok();
  }

  // A refused landing (Camofox followed a redirect or the page moved itself) leaves the tab on
  // about:blank, so nothing of the refused page stays reachable to the next call.
  Status JudgeLanding(std::string_view landed, const CallLimits& limits) {
    if (!o_.guard || landed.empty() || landed == "about:blank") return Status::Ok();
    auto admitted = o_.guard->Admit(landed, limits.cancel);
    if (admitted) return Status::Ok();
    const Json body = {{"userId", o_.user_id}, {"url", "about:blank"}};
    (void)Expect("POST", TabPath("/navigate"), &body, limits, "navigating to about:blank");
    return admitted.error();
  }

  Result<rest::Answer> Expect(std::string_view method, const std::string& path, const Json* body,
                              const CallLimits& limits, std::string_view what) {
    rest::Answer a = TALARIA_TRY(Request(method, path, body, limits));
    if (!a.ok()) return Err(rest::StatusError(kWho, what, a));
    return a;
  }

  Result<rest::Answer> Request(std::string_view method, const std::string& path, const Json* body,
                               const CallLimits& limits) {
    if (closed_) return Err(UnavailableError("camofox: the driver is closed"));
    return Send(method, path, body, limits, close_source_.get_token());
  }

  Result<rest::Answer> Send(std::string_view method, const std::string& path, const Json* body,
                            const CallLimits& limits, const std::stop_token& closing) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        limits.deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Err(DeadlineExceededError("camofox: deadline passed"));
    rest::Call call{.method = std::string(method),
                    .url = o_.url + path,
                    .headers = {},
                    .body = body,
                    .timeout = std::min(left, o_.request_timeout)};
    if (!o_.api_key.empty()) call.headers.emplace_back("Authorization", "Bearer " + o_.api_key);
    const LinkedStop stop(limits.cancel, closing);
    return rest::Exchange(kWho, call, stop.token());
  }

  CamofoxOptions o_;
  std::string tab_;  // the one tab, once the first Navigate made it
  std::atomic<bool> closed_{false};
  std::atomic<bool> has_session_{false};  // a tab was opened: Close deletes the session
  std::stop_source close_source_;
};

}  // namespace

Result<std::unique_ptr<PageDriver>> MakeCamofoxDriver(CamofoxOptions options) {
  if (options.url.empty()) return Err(InvalidArgumentError("camofox: no URL (CAMOFOX_URL)"));
  while (!options.url.empty() && options.url.back() == '/') options.url.pop_back();
  auto driver = std::make_unique<CamofoxDriver>(std::move(options));
  TALARIA_RETURN_IF_ERROR(driver->Health());
  return std::unique_ptr<PageDriver>(std::move(driver));
}

}  // namespace talaria::browser
