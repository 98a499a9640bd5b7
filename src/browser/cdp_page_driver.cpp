// CdpPageDriver (cdp_page_driver_impl.h) and the two factories of cdp_page_driver.h.
#include "browser/cdp_page_driver_impl.h"

#include <utility>

#include "browser/chromium_process.h"
#include "browser/egress_proxy.h"
#include "browser/key_codes.h"
#include "browser/page_script.h"
#include "talaria/base/base64.h"

namespace talaria::browser {
namespace {

constexpr size_t kMaxConsoleEntries = 1000;
// How long a snapshot waits for a load in flight before it shows the page as it is.
constexpr auto kLoadWaitInSnapshot = std::chrono::seconds(10);

template <typename T>
Status StatusOf(const Result<T>& r) {
  return r ? Status::Ok() : r.error();
}

bool IsRealRequestScheme(std::string_view url) {
  return url.starts_with("http:") || url.starts_with("https:") || url.starts_with("ws:") ||
         url.starts_with("wss:") || url.starts_with("ftp:") || url.starts_with("file:");
}

std::string RemoteObjectText(const Json& o) {
  if (!o.is_object()) return "";
  if (auto v = o.find("value"); v != o.end())
    return v->is_string() ? v->get<std::string>() : v->dump();
  if (auto u = o.find("unserializableValue"); u != o.end() && u->is_string())
    return u->get<std::string>();
  if (auto d = o.find("description"); d != o.end() && d->is_string()) return d->get<std::string>();
  return JsonStringField(o, "type");
}

std::string ExceptionText(const Json& details) {
  if (auto e = details.find("exception"); e != details.end() && e->is_object()) {
    std::string d = JsonStringField(*e, "description");
    if (!d.empty()) return d;
    return RemoteObjectText(*e);
  }
  return JsonStringField(details, "text");
}

}  // namespace

CdpPageDriver::CdpPageDriver(CdpDriverOptions options) : options_(std::move(options)) {}

CdpPageDriver::~CdpPageDriver() {
  Close();
  client_.reset();  // joins its threads; cdp_ stays valid for them until then
  if (options_.on_close) std::exchange(options_.on_close, nullptr)();
}

Status CdpPageDriver::Start(std::unique_ptr<CdpTransport> transport, const CallLimits& limits) {
  if (options_.guard == nullptr)
    return InvalidArgumentError("browser: a network guard is required");
  client_ = std::make_unique<CdpClient>(
      std::move(transport),
      [this](const std::string& m, const Json& p, const std::string& s) { OnEvent(m, p, s); });
  cdp_ = client_.get();
  return OpenPage(limits);
}

void CdpPageDriver::Close() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
  if (cdp_ != nullptr) cdp_->Close();
}

Status CdpPageDriver::OpenPage(const CallLimits& limits) {
  Json created =
      TALARIA_TRY(cdp_->Call("Target.createTarget", {{"url", "about:blank"}}, "", limits));
  const std::string target = JsonStringField(created, "targetId");
  Json attached = TALARIA_TRY(
      cdp_->Call("Target.attachToTarget", {{"targetId", target}, {"flatten", true}}, "", limits));
  const std::string session = JsonStringField(attached, "sessionId");
  if (target.empty() || session.empty()) return UnavailableError("browser: no page was attached");
  {
    std::lock_guard lock(mu_);
    target_id_ = target;
    session_ = session;
    world_ = 0;
    world_ready_ = false;
    crashed_ = false;
    loaded_.clear();
    loading_ = false;
  }
  // Interception first: nothing this page asks for goes out unjudged.
  TALARIA_RETURN_IF_ERROR(StatusOf(cdp_->Call(
      "Fetch.enable", {{"patterns", Json::array({{{"urlPattern", "*"}}})}}, session, limits)));
  for (const char* method : {"Page.enable", "Runtime.enable", "Inspector.enable"}) {
    TALARIA_RETURN_IF_ERROR(StatusOf(cdp_->Call(method, Json::object(), session, limits)));
  }
  TALARIA_RETURN_IF_ERROR(
      StatusOf(cdp_->Call("Page.setLifecycleEventsEnabled", {{"enabled", true}}, session, limits)));
  // Out-of-process iframes arrive as sessions of their own, paused until interception is on.
  TALARIA_RETURN_IF_ERROR(StatusOf(
      cdp_->Call("Target.setAutoAttach",
                 {{"autoAttach", true}, {"waitForDebuggerOnStart", true}, {"flatten", true}},
                 session, limits)));
  return Status::Ok();
}

std::string CdpPageDriver::PageSession() {
  std::lock_guard lock(mu_);
  return session_;
}

Result<Json> CdpPageDriver::PageCall(std::string_view method, const Json& params,
                                     const CallLimits& limits) {
  return cdp_->Call(method, params, PageSession(), limits);
}

Status CdpPageDriver::PageCallEach(const std::vector<CdpClient::Command>& commands,
                                   const CallLimits& limits) {
  for (const Result<Json>& r : cdp_->CallEach(commands, PageSession(), limits)) {
    TALARIA_RETURN_IF_ERROR(StatusOf(r));
  }
  return Status::Ok();
}

Status CdpPageDriver::Ready(const CallLimits& limits) {
  std::string refusal;
  bool crashed = false;
  {
    std::lock_guard lock(mu_);
    if (closed_) return UnavailableError("browser: closed");
    crashed = crashed_;
    refusal = std::exchange(refusal_, "");
  }
  if (cdp_ == nullptr || cdp_->closed()) {
    return UnavailableError("browser: the browser is gone (" +
                            (cdp_ != nullptr ? cdp_->close_reason() : std::string("not started")) +
                            ")");
  }
  if (crashed) {
    std::string old;
    {
      std::lock_guard lock(mu_);
      old = target_id_;
    }
    (void)cdp_->Notify("Target.closeTarget", {{"targetId", old}}, "");
    Status reopened = OpenPage(limits);
    return UnavailableError(std::string("browser: the page crashed (its renderer is gone); ") +
                            (reopened.ok() ? "a new blank page was opened for the next call"
                                           : "opening a new page failed: " + reopened.message()));
  }
  if (!refusal.empty()) return PermissionDeniedError(refusal);
  return Status::Ok();
}

Status CdpPageDriver::WaitFor(const std::function<bool()>& done, const CallLimits& limits,
                              std::string_view what) {
  std::stop_callback wake(limits.cancel, [this] {
    std::lock_guard inner(mu_);
    cv_.notify_all();
  });
  std::unique_lock lock(mu_);
  const auto stop = [&] {
    return done() || crashed_ || closed_ || limits.cancel.stop_requested() ||
           (cdp_ != nullptr && cdp_->closed());
  };
  if (limits.deadline == std::chrono::steady_clock::time_point::max()) {
    cv_.wait(lock, stop);
  } else {
    cv_.wait_until(lock, limits.deadline, stop);
  }
  if (done()) return Status::Ok();
  if (crashed_)
    return UnavailableError("browser: the page crashed while waiting for " + std::string(what));
  if (closed_ || (cdp_ != nullptr && cdp_->closed())) return UnavailableError("browser: closed");
  if (limits.cancel.stop_requested()) return CancelledError("browser: cancelled");
  return DeadlineExceededError("browser: " + std::string(what) +
                               " did not happen before the deadline");
}

// A refused navigation: the page goes to about:blank and the caller gets the refusal.
Status CdpPageDriver::Refused(std::string message, const CallLimits& limits) {
  (void)PageCall("Page.navigate", {{"url", "about:blank"}}, limits);
  std::lock_guard lock(mu_);
  refusal_.clear();
  return PermissionDeniedError(std::move(message));
}

Result<Snapshot> CdpPageDriver::Navigate(std::string_view url, const CallLimits& limits) {
  if (Status s = Ready(limits); !s.ok() && s.code() != StatusCode::kPermissionDenied) return Err(s);
  if (url != "about:blank") {
    auto admitted = options_.guard->Admit(url, limits.cancel);
    if (!admitted) {
      if (!web::RefusalRule(admitted.error()).empty()) {
        return Err(Refused(admitted.error().message(), limits));
      }
      return Err(admitted.error());
    }
  }
  {
    std::lock_guard lock(mu_);
    refusal_.clear();
  }
  auto nav = PageCall("Page.navigate", {{"url", std::string(url)}}, limits);
  if (!nav) {
    if (nav.error().code() == StatusCode::kDeadlineExceeded) {
      (void)PageCall("Page.stopLoading", Json::object(), {.deadline = {}, .cancel = {}});
      return Err(DeadlineExceededError("browser: " + std::string(url) +
                                       " did not answer before the deadline; loading was stopped"));
    }
    return Err(nav.error());
  }
  const std::string loader = JsonStringField(*nav, "loaderId");
  const std::string error_text = JsonStringField(*nav, "errorText");
  {
    std::unique_lock lock(mu_);
    if (!refusal_.empty()) {
      std::string why = std::exchange(refusal_, "");
      lock.unlock();
      return Err(Refused(std::move(why), limits));
    }
  }
  if (!error_text.empty()) {
    // A connection the egress proxy refused (a name that resolved differently for it, say):
    // the guard's words, not Chromium's net::ERR_SOCKS_CONNECTION_FAILED.
    if (std::string why = NoteEgressRefusals(); !why.empty()) {
      return Err(Refused(
          "browser: navigation refused: " + why + "; the page was left on about:blank", limits));
    }
    return Err(UnavailableError("browser: navigation failed: " + error_text));
  }
  if (!loader.empty()) {
    Status loaded = WaitFor([&] { return loaded_.contains(loader) || !refusal_.empty(); }, limits,
                            "the page load");
    if (loaded.code() == StatusCode::kDeadlineExceeded) {
      (void)PageCall(
          "Page.stopLoading", Json::object(),
          {.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2), .cancel = {}});
      return Err(DeadlineExceededError("browser: " + std::string(url) +
                                       " did not finish loading before the deadline; loading was "
                                       "stopped"));
    }
    TALARIA_RETURN_IF_ERROR(loaded);
  }
  {
    std::unique_lock lock(mu_);
    if (!refusal_.empty()) {
      std::string why = std::exchange(refusal_, "");
      lock.unlock();
      return Err(Refused(std::move(why), limits));
    }
  }
  return TakeSnapshot({}, limits);
}

Result<int64_t> CdpPageDriver::World(const CallLimits& limits) {
  std::string target;
  {
    std::lock_guard lock(mu_);
    if (world_ != 0) return world_;
    target = target_id_;
  }
  Json made = TALARIA_TRY(PageCall("Page.createIsolatedWorld",
                                   {{"frameId", target}, {"worldName", "talaria"}}, limits));
  const int64_t id = made.value("executionContextId", int64_t{0});
  if (id == 0) return Err(UnavailableError("browser: no isolated world"));
  std::lock_guard lock(mu_);
  world_ = id;
  ++worlds_made_;
  world_ready_ = false;
  // A new main document: the frames of the old one, and their refs, are gone.
  frames_.clear();
  next_frame_key_ = 1;
  return id;
}

Result<Json> CdpPageDriver::InWorld(const std::string& call, const CallLimits& limits) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    const int64_t world = TALARIA_TRY(World(limits));
    bool ready = false;
    {
      std::lock_guard lock(mu_);
      ready = world_ready_ && world_ == world;
    }
    // The script goes in once per world; later calls send only the call.
    std::string expression = ready ? call : std::string(kPageScript) + ";\n" + call;
    auto r = PageCall("Runtime.evaluate",
                      {{"expression", expression},
                       {"contextId", world},
                       {"returnByValue", true},
                       {"awaitPromise", false}},
                      limits);
    if (!r) {
      // The document (and its world) went away under us: make a new world and try again.
      if (r.error().message().find("context") != std::string::npos) {
        std::lock_guard lock(mu_);
        if (world_ == world) world_ = 0;
        continue;
      }
      return Err(r.error());
    }
    if (auto ex = r->find("exceptionDetails"); ex != r->end()) {
      const std::string text = ExceptionText(*ex);
      if (ready && text.find("__talaria") != std::string::npos) {
        std::lock_guard lock(mu_);
        world_ready_ = false;
        continue;
      }
      return Err(InternalError("browser: page script failed: " + text));
    }
    {
      std::lock_guard lock(mu_);
      if (world_ == world) world_ready_ = true;
    }
    const Json& result = (*r)["result"];
    return result.contains("value") ? result["value"] : Json();
  }
  return Err(UnavailableError("browser: the page kept changing; try again"));
}

void CdpPageDriver::SettleNavigation(const CallLimits& limits) {
  const CallLimits wait = {
      .deadline = std::min(limits.deadline, std::chrono::steady_clock::now() + kLoadWaitInSnapshot),
      .cancel = limits.cancel};
  (void)WaitFor([&] { return (!loading_ && nav_settled_ >= nav_requested_) || !refusal_.empty(); },
                wait, "the page load");
}

Result<Snapshot> CdpPageDriver::TakeSnapshot(const SnapshotOptions& options,
                                             const CallLimits& limits) {
  TALARIA_RETURN_IF_ERROR(Ready(limits));
  // A navigation in flight (a click that submitted a form) is waited for, so the snapshot is
  // of the page the action led to.
  SettleNavigation(limits);
  TALARIA_RETURN_IF_ERROR(Ready(limits));
  // A scope inside a cross-origin frame ("f2e7") is that frame's snapshot under its "e7".
  auto [key, scope] = SplitRef(options.scope);
  Json opts = {{"full", options.full}, {"scope", key == 0 ? options.scope : scope}};
  int frames_left = kMaxFramesPerSnapshot;
  Snapshot s = TALARIA_TRY(SnapshotOf(key, std::move(opts), 0, frames_left, limits));
  {
    std::lock_guard lock(mu_);
    if (world_ != 0) s.document = "d" + std::to_string(worlds_made_);
  }
  if (key != 0) {
    // The page's address and title, not the frame's.
    Json top = TALARIA_TRY(InWorld("({url: location.href, title: document.title})", limits));
    s.url = JsonStringField(top, "url");
    s.title = JsonStringField(top, "title");
  }
  return s;
}

Status CdpPageDriver::MouseClick(double x, double y, const CallLimits& limits) {
  Json press = {
      {"type", "mousePressed"}, {"x", x}, {"y", y}, {"button", "left"}, {"clickCount", 1}};
  Json release = press;
  release["type"] = "mouseReleased";
  // Both go out at once: the browser passes a page's input on in order and answers each once
  // the page handled it, so the release's answer means the click's handlers have run; waiting
  // for the press's answer before sending the release only cost a round trip.
  return PageCallEach({{"Input.dispatchMouseEvent", std::move(press)},
                       {"Input.dispatchMouseEvent", std::move(release)}},
                      limits);
}

Status CdpPageDriver::Click(std::string_view ref, const CallLimits& limits) {
  TALARIA_RETURN_IF_ERROR(Ready(limits));
  Json p = TALARIA_TRY(PointOf(ref, limits));
  if (!p.is_object() || p.contains("error")) {
    return InvalidArgumentError("browser: " + (p.is_object() ? JsonStringField(p, "error")
                                                             : std::string("no such element")));
  }
  const std::string watch = ArmSettle(limits);
  return Acted(watch, MouseClick(p.value("x", 0.0), p.value("y", 0.0), limits), limits);
}

Status CdpPageDriver::Acted(const std::string& watch, Status action, const CallLimits& limits) {
  if (!action.ok()) {
    DropSettle(watch);
    return action;
  }
  return AwaitSettle(watch, limits);
}

Status CdpPageDriver::Type(std::string_view ref, std::string_view text, const CallLimits& limits) {
  TALARIA_RETURN_IF_ERROR(Ready(limits));
  const std::pair<int, std::string> split = SplitRef(ref);
  const int key = split.first;
  const std::string& local = split.second;
  Json p;
  if (key != 0) {
    // A cross-origin frame may not take focus from a script alone: a real click gives it focus
    // (and the user activation) first.
    p = TALARIA_TRY(PointOf(ref, limits));
    if (!p.is_object() || p.contains("error")) {
      return InvalidArgumentError("browser: " + (p.is_object() ? JsonStringField(p, "error")
                                                               : std::string("no such element")));
    }
  }
  const std::string watch = ArmSettle(limits);
  auto type = [&]() -> Status {
    if (key != 0) {
      TALARIA_RETURN_IF_ERROR(MouseClick(p.value("x", 0.0), p.value("y", 0.0), limits));
    }
    Json r = TALARIA_TRY(InAnyWorld(key, "__talaria.focusClear(" + JsonQuote(local) + ")", limits));
    if (!r.is_object() || r.contains("error")) {
      return InvalidArgumentError("browser: " + (r.is_object() ? JsonStringField(r, "error")
                                                               : std::string("no such element")));
    }
    if (text.empty()) return Status::Ok();
    return StatusOf(PageCall("Input.insertText", {{"text", std::string(text)}}, limits));
  };
  return Acted(watch, type(), limits);
}

Status CdpPageDriver::Scroll(bool down, const CallLimits& limits) {
  TALARIA_RETURN_IF_ERROR(Ready(limits));
  return StatusOf(
      InWorld(std::string("__talaria.scroll(") + (down ? "500" : "-500") + ")", limits));
}

Result<std::string> CdpPageDriver::Back(const CallLimits& limits) {
  TALARIA_RETURN_IF_ERROR(Ready(limits));
  Json history = TALARIA_TRY(PageCall("Page.getNavigationHistory", Json::object(), limits));
  const int current = history.value("currentIndex", 0);
  const Json& entries = history["entries"];
  if (!entries.is_array() || current <= 0 || current > static_cast<int>(entries.size())) {
    return Err(FailedPreconditionError("browser: there is no previous page"));
  }
  const Json& entry = entries[static_cast<size_t>(current - 1)];
  uint64_t before = 0;
  {
    std::lock_guard lock(mu_);
    before = navigations_;
  }
  TALARIA_RETURN_IF_ERROR(StatusOf(
      PageCall("Page.navigateToHistoryEntry", {{"entryId", entry.value("id", 0)}}, limits)));
  TALARIA_RETURN_IF_ERROR(WaitFor([&] { return navigations_ > before; }, limits, "going back"));
  TALARIA_RETURN_IF_ERROR(
      WaitFor([&] { return !loading_ || !refusal_.empty(); }, limits, "the page load"));
  TALARIA_RETURN_IF_ERROR(Ready(limits));
  return JsonStringField(entry, "url");
}

Status CdpPageDriver::Press(std::string_view key, const CallLimits& limits) {
  TALARIA_RETURN_IF_ERROR(Ready(limits));
  KeyStroke k = TALARIA_TRY(ParseKey(key));
  Json down = {{"type", k.text.empty() ? "rawKeyDown" : "keyDown"},
               {"key", k.key},
               {"code", k.code},
               {"windowsVirtualKeyCode", k.key_code},
               {"modifiers", k.modifiers}};
  if (!k.text.empty()) {
    down["text"] = k.text;
    down["unmodifiedText"] = k.text;
  }
  Json up = {{"type", "keyUp"},
             {"key", k.key},
             {"code", k.code},
             {"windowsVirtualKeyCode", k.key_code},
             {"modifiers", k.modifiers}};
  const std::string watch = ArmSettle(limits);
  // Down and up at once, as a click's press and release (MouseClick).
  Status pressed = PageCallEach(
      {{"Input.dispatchKeyEvent", std::move(down)}, {"Input.dispatchKeyEvent", std::move(up)}},
      limits);
  return Acted(watch, std::move(pressed), limits);
}

Result<std::vector<PageImage>> CdpPageDriver::Images(const CallLimits& limits) {
  TALARIA_RETURN_IF_ERROR(Ready(limits));
  Json list = TALARIA_TRY(InWorld("__talaria.images()", limits));
  std::vector<PageImage> out;
  if (!list.is_array()) return out;
  for (const Json& i : list) {
    if (!i.is_object()) continue;
    out.push_back({JsonStringField(i, "src"), JsonStringField(i, "alt"),
                   i.value("width", int64_t{0}), i.value("height", int64_t{0})});
  }
  return out;
}

Result<std::string> CdpPageDriver::Screenshot(bool annotate, const CallLimits& limits) {
  TALARIA_RETURN_IF_ERROR(Ready(limits));
  // The frames the page script cannot enter label their own elements, in their own world
  // (their renderer composites them into the page's screenshot).
  std::vector<int> frames;
  if (annotate) {
    TALARIA_RETURN_IF_ERROR(StatusOf(InWorld("__talaria.labels(true)", limits)));
    {
      std::lock_guard lock(mu_);
      for (const auto& [key, frame] : frames_) frames.push_back(key);
    }
    for (int key : frames) {
      // Best effort: a frame that went away since the snapshot has nothing to label.
      (void)InFrame(key, "__talaria.labels(true, " + JsonQuote("f" + std::to_string(key)) + ")",
                    limits);
    }
  }
  auto shot = PageCall("Page.captureScreenshot", {{"format", "png"}}, limits);
  if (annotate) {
    (void)InWorld("__talaria.labels(false)", limits);
    for (int key : frames) (void)InFrame(key, "__talaria.labels(false)", limits);
  }
  if (!shot) return Err(shot.error());
  auto png = Base64Decode(JsonStringField(*shot, "data"));
  if (!png || png->empty()) return Err(InternalError("browser: the screenshot was not base64 PNG"));
  return std::move(*png);
}

Result<PageDriver::Evaluation> CdpPageDriver::Evaluate(std::string_view expression,
                                                       const CallLimits& limits) {
  TALARIA_RETURN_IF_ERROR(Ready(limits));
  Json params = {{"expression", std::string(expression)},
                 {"returnByValue", true},
                 {"awaitPromise", true},
                 {"userGesture", true}};
  auto r = PageCall("Runtime.evaluate", params, limits);
  if (!r && r.error().code() == StatusCode::kInvalidArgument) {
    // A value that cannot be copied out (a DOM node, a cyclic object): its description instead.
    params["returnByValue"] = false;
    r = PageCall("Runtime.evaluate", params, limits);
  }
  if (!r) return Err(r.error());
  if (auto ex = r->find("exceptionDetails"); ex != r->end()) {
    return Err(InvalidArgumentError("JavaScript error: " + ExceptionText(*ex)));
  }
  // An expression that sent the page somewhere (location.href = ...) gets that navigation's
  // verdict: a refusal is its answer (the original's hole #44731).
  SettleNavigation(limits);
  {
    std::lock_guard lock(mu_);
    if (!refusal_.empty()) return Err(PermissionDeniedError(std::exchange(refusal_, "")));
  }
  const Json& result = (*r)["result"];
  Evaluation e;
  e.type = JsonStringField(result, "type");
  if (auto v = result.find("value"); v != result.end()) {
    e.value = *v;
  } else if (auto u = result.find("unserializableValue"); u != result.end()) {
    e.value = *u;
  } else if (e.type != "undefined") {
    e.value = JsonStringField(result, "description");
  }
  return e;
}

Result<std::vector<ConsoleEntry>> CdpPageDriver::Console(bool clear, const CallLimits& limits) {
  (void)limits;
  NoteEgressRefusals();
  std::lock_guard lock(mu_);
  std::vector<ConsoleEntry> out(console_.begin(), console_.end());
  if (clear) console_.clear();
  return out;
}

Status CdpPageDriver::CrashRendererForTest(const CallLimits& limits) {
  // Page.crash never answers (the renderer is gone): only wait for the crash to be seen.
  TALARIA_RETURN_IF_ERROR(cdp_->Notify("Page.crash", Json::object(), PageSession()));
  return WaitFor([&] { return crashed_; }, limits, "the crash");
}

std::string CdpPageDriver::NoteEgressRefusals() {
  if (!options_.egress_refusals) return "";
  std::vector<std::string> refused = options_.egress_refusals();  // not under mu_: it locks
  if (refused.empty()) return "";
  std::lock_guard lock(mu_);
  for (const std::string& r : refused) AddConsole("blocked", r);
  return refused.back();
}

void CdpPageDriver::AddConsole(std::string type, std::string text) {
  if (console_.size() >= kMaxConsoleEntries) console_.pop_front();
  console_.push_back({std::move(type), std::move(text)});
}

// Every request of the page and of its frames: continued when the guard admits its URL,
// failed otherwise. Runs on the client's event thread (never its reader), so resolving a name
// here delays only other events.
void CdpPageDriver::JudgeRequest(const Json& params, const std::string& session) {
  const std::string id = JsonStringField(params, "requestId");
  const Json& request = params.contains("request") ? params["request"] : Json::object();
  const std::string url = JsonStringField(request, "url");
  Status verdict = Status::Ok();
  if (IsRealRequestScheme(url)) {
    verdict = StatusOf(options_.guard->Admit(url));
    // A name this machine cannot resolve is not a refusal: Chromium will fail it itself.
    if (!verdict.ok() && web::RefusalRule(verdict).empty() &&
        verdict.code() == StatusCode::kUnavailable) {
      verdict = Status::Ok();
    }
  }
  if (verdict.ok()) {
    (void)cdp_->Notify("Fetch.continueRequest", {{"requestId", id}}, session);
    return;
  }
  const std::string type = JsonStringField(params, "resourceType");
  bool main_document = false;
  {
    // Recorded before the request fails, so a Navigate woken by that failure finds it.
    std::lock_guard lock(mu_);
    AddConsole("blocked", verdict.message() + " [" + type + " " + url + "]");
    main_document = type == "Document" && session == session_ &&
                    JsonStringField(params, "frameId") == target_id_;
    if (main_document) {
      refusal_ = "browser: navigation refused: " + verdict.message() +
                 "; the page was left on about:blank";
      nav_settled_ = nav_requested_;
    }
  }
  cv_.notify_all();
  (void)cdp_->Notify("Fetch.failRequest", {{"requestId", id}, {"errorReason", "BlockedByClient"}},
                     session);
  // Not waiting for a caller: a page script's navigation lands on about:blank now.
  if (main_document) (void)cdp_->Notify("Page.navigate", {{"url", "about:blank"}}, session);
}

void CdpPageDriver::OnEvent(const std::string& method, const Json& params,
                            const std::string& session) {
  if (method == "Fetch.requestPaused") {
    JudgeRequest(params, session);
    return;
  }
  if (method == "Target.attachedToTarget") {
    // An out-of-process iframe (or a worker): interception on, then let it run.
    const std::string child = JsonStringField(params, "sessionId");
    const Json& info = params.contains("targetInfo") ? params["targetInfo"] : Json::object();
    const std::string type = JsonStringField(info, "type");
    if (type == "iframe") {
      std::lock_guard lock(mu_);
      frame_sessions_[JsonStringField(info, "targetId")] = child;
    }
    if (type == "iframe" || type == "page") {
      (void)cdp_->Notify("Fetch.enable", {{"patterns", Json::array({{{"urlPattern", "*"}}})}},
                         child);
      (void)cdp_->Notify("Runtime.enable", Json::object(), child);
      (void)cdp_->Notify(
          "Target.setAutoAttach",
          {{"autoAttach", true}, {"waitForDebuggerOnStart", true}, {"flatten", true}}, child);
    }
    (void)cdp_->Notify("Runtime.runIfWaitingForDebugger", Json::object(), child);
    return;
  }
  if (method == "Page.javascriptDialogOpening") {
    // Nobody can answer a dialog: accept it (a prompt gets its default) and note it.
    (void)cdp_->Notify("Page.handleJavaScriptDialog",
                       {{"accept", true}, {"promptText", JsonStringField(params, "defaultPrompt")}},
                       session);
    std::lock_guard lock(mu_);
    AddConsole("dialog",
               JsonStringField(params, "type") + ": " + JsonStringField(params, "message"));
    return;
  }
  std::lock_guard lock(mu_);
  if (method == "talaria.closed") {
    closed_ = true;
  } else if (method == "Page.lifecycleEvent") {
    if (session == session_ && JsonStringField(params, "frameId") == target_id_ &&
        JsonStringField(params, "name") == "load") {
      if (loaded_.size() > 64) loaded_.clear();
      loaded_.insert(JsonStringField(params, "loaderId"));
    }
  } else if (method == "Page.frameStartedLoading") {
    if (session == session_ && JsonStringField(params, "frameId") == target_id_) loading_ = true;
  } else if (method == "Page.frameStoppedLoading") {
    if (session == session_ && JsonStringField(params, "frameId") == target_id_) {
      loading_ = false;
      nav_settled_ = nav_requested_;
    }
  } else if (method == "Page.frameRequestedNavigation") {
    if (session == session_ && JsonStringField(params, "frameId") == target_id_) ++nav_requested_;
  } else if (method == "Page.frameNavigated") {
    const Json& frame = params.contains("frame") ? params["frame"] : Json::object();
    if (session == session_ && !frame.contains("parentId")) {
      ++navigations_;
      nav_settled_ = nav_requested_;
    }
  } else if (method == "Page.navigatedWithinDocument") {
    if (session == session_ && JsonStringField(params, "frameId") == target_id_) ++navigations_;
  } else if (method == "Runtime.executionContextsCleared") {
    if (session == session_) world_ = 0;
  } else if (method == "Runtime.executionContextDestroyed") {
    if (session == session_ && params.value("executionContextId", int64_t{-1}) == world_)
      world_ = 0;
  } else if (method == "Runtime.consoleAPICalled") {
    std::string text;
    if (params.contains("args") && params["args"].is_array()) {
      for (const Json& a : params["args"]) {
        if (!text.empty()) text += ' ';
        text += RemoteObjectText(a);
      }
    }
    std::string type = JsonStringField(params, "type");
    if (type == "warning") type = "warning";
    AddConsole(type, std::move(text));
  } else if (method == "Runtime.exceptionThrown") {
    const Json& d =
        params.contains("exceptionDetails") ? params["exceptionDetails"] : Json::object();
    AddConsole("exception", ExceptionText(d));
  } else if (method == "Inspector.targetCrashed" || method == "Target.targetCrashed") {
    if (session == session_ || JsonStringField(params, "targetId") == target_id_) crashed_ = true;
  } else if (method == "Target.detachedFromTarget") {
    const std::string gone = JsonStringField(params, "sessionId");
    if (gone == session_) crashed_ = true;
    std::erase_if(frame_sessions_, [&](const auto& f) { return f.second == gone; });
  } else {
    return;
  }
  cv_.notify_all();
}

Result<std::unique_ptr<PageDriver>> OpenCdpPageDriver(std::unique_ptr<CdpTransport> transport,
                                                      CdpDriverOptions options,
                                                      const CallLimits& limits) {
  if (transport == nullptr) return Err(InvalidArgumentError("browser: no transport"));
  auto driver = std::make_unique<CdpPageDriver>(std::move(options));
  TALARIA_RETURN_IF_ERROR(driver->Start(std::move(transport), limits));
  return std::unique_ptr<PageDriver>(std::move(driver));
}

Result<std::unique_ptr<PageDriver>> LaunchLocalChromium(const LocalChromiumOptions& options,
                                                        const CallLimits& limits) {
  if (options.guard == nullptr)
    return Err(InvalidArgumentError("browser: a network guard is required"));
  std::shared_ptr<EgressProxy> proxy =
      TALARIA_TRY(EgressProxy::Start({.guard = options.guard,
                                      .connect_timeout = std::chrono::seconds(15),
                                      .max_connections = 256}));
  auto process = TALARIA_TRY(ChromiumProcess::Launch({.executable = options.executable,
                                                      .extra_args = options.extra_args,
                                                      .network_args = proxy->ChromiumArgs()}));
  std::shared_ptr<ChromiumProcess> owned(std::move(process));
  auto transport = owned->TakeTransport();
  CdpDriverOptions driver_options;
  driver_options.guard = options.guard;
  driver_options.backend = "chromium";
  // The browser first, then its way out (a tunnel cannot outlive the browser that opened it).
  driver_options.on_close = [owned, proxy]() mutable {
    owned->Kill();
    proxy.reset();
  };
  driver_options.egress_refusals = [weak = std::weak_ptr<EgressProxy>(proxy)] {
    auto p = weak.lock();
    return p != nullptr ? p->TakeRefusals() : std::vector<std::string>{};
  };
  return OpenCdpPageDriver(std::move(transport), std::move(driver_options), limits);
}

}  // namespace talaria::browser
