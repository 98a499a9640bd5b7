// The browser tools (toolset `browser`), the original's names, parameters and result shapes
// (hermes-wave2.md e.1), over the PageDriver of the call's task (browser_sessions.h). Page
// content is untrusted: results carrying it are marked so the dispatcher wraps them. After
// navigate the result carries the new snapshot, after click, type and press what changed on
// the page (or the new snapshot when it is another document), so the model needs no second
// round trip.
#include <filesystem>
#include <regex>

#include "browser/browser_sessions_internal.h"
#include "browser/chromium_process.h"
#include "browser/snapshot_budget.h"
#include "browser/snapshot_diff.h"
#include "talaria/base/base64.h"
#include "talaria/base/file_io.h"
#include "talaria/base/paths.h"
#include "talaria/base/random.h"
#include "talaria/browser/screenshot_analyzer.h"
#include "talaria/core/tool_registration.h"

namespace talaria::browser {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kScreenshotLifetime = std::chrono::hours(24);

ToolResult Failure(std::string_view message) {
  return ToolResult::ErrorJson(Json{{"success", false}, {"error", std::string(message)}});
}

ToolResult Success(Json body, bool page_content) {
  body["success"] = true;
  ToolResult r = ToolResult::Text(body.dump(2, ' ', false, Json::error_handler_t::replace));
  if (page_content) r.untrusted_source = "browser";
  return r;
}

CallLimits LimitsFor(const ToolContext& ctx, const BrowserSettings& s, bool navigation) {
  int64_t seconds = s.command_timeout_s;
  if (navigation) seconds = std::max<int64_t>(seconds, 60);
  const auto own = Clock::now() + std::chrono::seconds(seconds);
  return {.deadline = std::min(ctx.deadline, own), .cancel = ctx.cancel};
}

// "@e5" or "e5" -> "e5", "@f1e5" -> "f1e5" (inside a cross-origin frame); "" when it is not a
// ref.
std::string RefArg(const Json& args) {
  static const std::regex kRef("^@?((?:f[0-9]{1,6})?e[0-9]{1,9})$");
  const std::string raw = JsonStringField(args, "ref");
  std::smatch m;
  if (!std::regex_match(raw, m, kRef)) return "";
  return m[1].str();
}

// Runs `body` with the task's browser; its errors become {success:false, error}.
ToolResult WithBrowser(
    ToolContext& ctx, bool navigation,
    const std::function<Result<ToolResult>(PageDriver&, Snapshot&, const BrowserSettings&,
                                           const CallLimits&)>& body) {
  auto settings = LoadBrowserSettings();
  if (!settings) return Failure(settings.error().message());
  const CallLimits limits = LimitsFor(ctx, *settings, navigation);
  auto lease = AcquireBrowser(ctx.task_id, *settings, limits);
  if (!lease) return Failure(lease.error().message());
  auto r = body(lease->driver(), lease->last_snapshot(), *settings, limits);
  if (!r) {
    ToolResult f = Failure(r.error().message());
    if (r.error().code() == StatusCode::kCancelled) f.status = CallStatus::kCancelled;
    return f;
  }
  return std::move(*r);
}

void AddSnapshot(Json& body, const Snapshot& snap, const BrowserSettings& s) {
  BudgetedSnapshot fitted = FitSnapshot(snap.text, s.snapshot_threshold);
  body["snapshot"] = fitted.text;
  body["element_count"] = snap.element_count;
  if (fitted.truncated) {
    body["snapshot_truncated"] = true;
    if (!fitted.full_path.empty()) body["snapshot_path"] = fitted.full_path;
  }
}

// The page after an action: what changed since the snapshot the model last got of this
// document, or the whole new snapshot when the page is another document (it navigated) or the
// change would not be shorter; or the reason there is none.
void AddSnapshotAfterAction(Json& body, PageDriver& page, Snapshot& seen, const BrowserSettings& s,
                            const CallLimits& limits) {
  auto snap = page.TakeSnapshot({}, limits);
  if (!snap) {
    body["snapshot_error"] = snap.error().message();
    return;
  }
  body["url"] = snap->url;
  body["title"] = snap->title;
  if (!snap->document.empty() && snap->document == seen.document) {
    SnapshotDiff diff = DiffSnapshots(seen.text, snap->text);
    if (diff.text.size() < snap->text.size()) {
      BudgetedSnapshot fitted = FitSnapshot(diff.text, s.snapshot_threshold);
      body["snapshot_diff"] = fitted.text;
      if (diff.text.empty()) body["unchanged"] = true;
      body["element_count"] = snap->element_count;
      if (fitted.truncated) {
        body["snapshot_truncated"] = true;
        if (!fitted.full_path.empty()) body["snapshot_path"] = fitted.full_path;
      }
      seen = std::move(*snap);
      return;
    }
  }
  AddSnapshot(body, *snap, s);
  seen = std::move(*snap);
}

bool LooksLikeBotWall(const std::string& title) {
  static const std::regex kWall("(blocked|captcha|are you a robot|access denied|just a moment)",
                                std::regex::icase);
  return std::regex_search(title, kWall);
}

ToolResult Navigate(const Json& args, ToolContext& ctx) {
  const std::string url = JsonStringField(args, "url");
  if (url.empty()) return Failure("url is required");
  return WithBrowser(ctx, true,
                     [&](PageDriver& page, Snapshot& seen, const BrowserSettings& s,
                         const CallLimits& limits) -> Result<ToolResult> {
                       Snapshot snap = TALARIA_TRY(page.Navigate(url, limits));
                       Json body = {{"url", snap.url}, {"title", snap.title}};
                       AddSnapshot(body, snap, s);
                       seen = snap;
                       if (LooksLikeBotWall(snap.title)) {
                         body["bot_detection_warning"] =
                             "The page title suggests a bot check or block page; the content may "
                             "not be the site's.";
                       }
                       return Success(std::move(body), true);
                     });
}

ToolResult TakeSnapshot(const Json& args, ToolContext& ctx) {
  SnapshotOptions options;
  options.full = args.value("full", false);
  options.scope = JsonStringField(args, "scope");
  return WithBrowser(ctx, false,
                     [&](PageDriver& page, Snapshot& seen, const BrowserSettings& s,
                         const CallLimits& limits) -> Result<ToolResult> {
                       Snapshot snap = TALARIA_TRY(page.TakeSnapshot(options, limits));
                       Json body = {{"url", snap.url}, {"title", snap.title}};
                       AddSnapshot(body, snap, s);
                       if (!options.full && options.scope.empty()) seen = snap;
                       return Success(std::move(body), true);
                     });
}

ToolResult Click(const Json& args, ToolContext& ctx) {
  const std::string ref = RefArg(args);
  if (ref.empty()) return Failure("ref must be a snapshot ref like @e5");
  return WithBrowser(ctx, false,
                     [&](PageDriver& page, Snapshot& seen, const BrowserSettings& s,
                         const CallLimits& limits) -> Result<ToolResult> {
                       TALARIA_RETURN_IF_ERROR(page.Click(ref, limits));
                       Json body = {{"clicked", "@" + ref}};
                       AddSnapshotAfterAction(body, page, seen, s, limits);
                       return Success(std::move(body), true);
                     });
}

ToolResult Type(const Json& args, ToolContext& ctx) {
  const std::string ref = RefArg(args);
  if (ref.empty()) return Failure("ref must be a snapshot ref like @e5");
  if (!args.contains("text") || !args["text"].is_string()) return Failure("text is required");
  const std::string text = args["text"].get<std::string>();
  return WithBrowser(ctx, false,
                     [&](PageDriver& page, Snapshot& seen, const BrowserSettings& s,
                         const CallLimits& limits) -> Result<ToolResult> {
                       TALARIA_RETURN_IF_ERROR(page.Type(ref, text, limits));
                       Json body = {{"typed", text}, {"element", "@" + ref}};
                       AddSnapshotAfterAction(body, page, seen, s, limits);
                       return Success(std::move(body), true);
                     });
}

ToolResult Scroll(const Json& args, ToolContext& ctx) {
  const std::string direction = JsonStringField(args, "direction");
  if (direction != "up" && direction != "down") return Failure("direction must be up or down");
  return WithBrowser(ctx, false,
                     [&](PageDriver& page, Snapshot&, const BrowserSettings&,
                         const CallLimits& limits) -> Result<ToolResult> {
                       TALARIA_RETURN_IF_ERROR(page.Scroll(direction == "down", limits));
                       return Success(Json{{"scrolled", direction}}, false);
                     });
}

ToolResult Back(const Json&, ToolContext& ctx) {
  return WithBrowser(ctx, true,
                     [&](PageDriver& page, Snapshot&, const BrowserSettings&,
                         const CallLimits& limits) -> Result<ToolResult> {
                       std::string url = TALARIA_TRY(page.Back(limits));
                       return Success(Json{{"url", url}}, false);
                     });
}

ToolResult Press(const Json& args, ToolContext& ctx) {
  const std::string key = JsonStringField(args, "key");
  if (key.empty()) return Failure("key is required");
  return WithBrowser(ctx, false,
                     [&](PageDriver& page, Snapshot& seen, const BrowserSettings& s,
                         const CallLimits& limits) -> Result<ToolResult> {
                       TALARIA_RETURN_IF_ERROR(page.Press(key, limits));
                       Json body = {{"pressed", key}};
                       AddSnapshotAfterAction(body, page, seen, s, limits);
                       return Success(std::move(body), true);
                     });
}

ToolResult GetImages(const Json&, ToolContext& ctx) {
  return WithBrowser(
      ctx, false,
      [&](PageDriver& page, Snapshot&, const BrowserSettings&,
          const CallLimits& limits) -> Result<ToolResult> {
        std::vector<PageImage> images = TALARIA_TRY(page.Images(limits));
        Json list = Json::array();
        for (const PageImage& i : images) {
          list.push_back(
              {{"src", i.src}, {"alt", i.alt}, {"width", i.width}, {"height", i.height}});
        }
        const size_t n = list.size();
        return Success(Json{{"images", std::move(list)}, {"count", n}}, true);
      });
}

// Screenshots older than a day go (the original's rule); best effort.
void SweepScreenshots(const std::string& dir) {
  std::error_code ec;
  const auto now = std::filesystem::file_time_type::clock::now();
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    auto t = std::filesystem::last_write_time(e.path(), ec);
    if (!ec && now - t > kScreenshotLifetime) std::filesystem::remove(e.path(), ec);
  }
}

ToolResult Vision(const Json& args, ToolContext& ctx) {
  const std::string question = JsonStringField(args, "question");
  if (question.empty()) return Failure("question is required");
  const bool annotate = args.value("annotate", false);
  return WithBrowser(
      ctx, false,
      [&](PageDriver& page, Snapshot&, const BrowserSettings&,
          const CallLimits& limits) -> Result<ToolResult> {
        // The screenshot is taken within the browser's limits; the model's answer has the call's.
        std::string png = TALARIA_TRY(page.Screenshot(annotate, limits));
        const std::string dir = TalariaHome() + "/cache/screenshots";
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        SweepScreenshots(dir);
        const std::string path = dir + "/browser_screenshot_" + RandomHex(16) + ".png";
        TALARIA_RETURN_IF_ERROR(WriteFileAtomic(path, png, {.mode = 0600, .sync = false}));
        // With an auxiliary vision model configured, it looks and answers (the original's
        // {success, analysis, screenshot_path}).
        if (ScreenshotAnalyzer analyze = CurrentScreenshotAnalyzer(); analyze != nullptr) {
          std::string asked = question;
          if (annotate) {
            asked +=
                "\n\n(Labels [N] drawn on the screenshot mark interactive elements; name "
                "them as @eN in the answer. Labels like [f2eN] are inside a frame: @f2eN.)";
          }
          std::optional<std::string> analysis = TALARIA_TRY(analyze(png, asked, ctx));
          if (analysis.has_value()) {
            Json body = {{"analysis", std::move(*analysis)}, {"screenshot_path", path}};
            if (annotate) body["annotated"] = true;
            return Success(std::move(body), true);
          }
        }
        // The native multimodal envelope: the model that asked looks at the image itself.
        Json meta = {{"success", true},
                     {"screenshot_path", path},
                     {"question", question},
                     {"annotated", annotate}};
        if (annotate) {
          meta["note"] =
              "Labels [N] on the image are the refs @eN of the snapshot; [fKeN] (inside a frame) "
              "are @fKeN.";
        }
        const std::string text = meta.dump(2);
        Json blocks = Json::array(
            {{{"type", "text"}, {"text", text}},
             {{"type", "image"}, {"data", Base64Encode(png)}, {"mimeType", "image/png"}}});
        return ToolResult::WithContent(text, std::move(blocks));
      });
}

ToolResult ConsoleTool(const Json& args, ToolContext& ctx) {
  const bool clear = args.value("clear", false);
  const std::string expression = JsonStringField(args, "expression");
  return WithBrowser(
      ctx, false,
      [&](PageDriver& page, Snapshot&, const BrowserSettings&,
          const CallLimits& limits) -> Result<ToolResult> {
        if (!expression.empty()) {
          const size_t before = TALARIA_TRY(page.Console(false, limits)).size();
          PageDriver::Evaluation e = TALARIA_TRY(page.Evaluate(expression, limits));
          // The expression may have sent the page somewhere (location.href = ...): that navigation
          // is judged like any other (Evaluate waits for it), and a refusal is this call's answer.
          std::vector<ConsoleEntry> after = TALARIA_TRY(page.Console(false, limits));
          for (size_t i = std::min(before, after.size()); i < after.size(); ++i) {
            if (after[i].type == "blocked") {
              return Err(
                  PermissionDeniedError("the expression's request was refused: " + after[i].text));
            }
          }
          return Success(Json{{"result", e.value}, {"result_type", e.type}}, true);
        }
        std::vector<ConsoleEntry> entries = TALARIA_TRY(page.Console(clear, limits));
        Json messages = Json::array(), errors = Json::array();
        for (const ConsoleEntry& c : entries) {
          if (c.type == "exception") {
            errors.push_back({{"message", c.text}, {"source", "exception"}});
          } else {
            messages.push_back({{"type", c.type}, {"text", c.text}, {"source", "console"}});
          }
        }
        const size_t m = messages.size(), n = errors.size();
        return Success(Json{{"console_messages", std::move(messages)},
                            {"js_errors", std::move(errors)},
                            {"total_messages", m},
                            {"total_errors", n}},
                       true);
      });
}

ToolResult CloseTool(const Json&, ToolContext& ctx) {
  const bool had = CloseBrowserSession(ctx.task_id);
  return Success(Json{{"closed", had}}, false);
}

bool BrowserAvailable() {
  auto s = LoadBrowserSettings();
  if (!s) return false;
  if (s->provider != "local") return true;  // the provider's own errors say what is missing
  return !s->executable.empty() || !FindChromium().empty();
}

std::string WhyUnavailable() {
  auto s = LoadBrowserSettings();
  if (!s) return "browser config: " + s.error().message();
  if (!s->executable.empty()) return "browser.executable is set but the browser does not start";
  return "no Chromium found: install Debian's chromium (make deps) or set TALARIA_CHROMIUM or "
         "browser.executable";
}

struct Def {
  const char* name;
  const char* schema;
  ToolResult (*handler)(const Json&, ToolContext&);
  bool read_only;
};

constexpr const char* kNavigateSchema =
    R"json({"name":"browser_navigate","description":"Open a URL in the browser and return the page's accessibility snapshot (interactive elements carry refs like [ref=e5]; pass them back as @e5). Use this for pages that need JavaScript, forms or clicks; for plain reading prefer web_extract. Private and internal addresses are refused.","parameters":{"type":"object","properties":{"url":{"type":"string","description":"The URL to open (http or https)."}},"required":["url"]}})json";
constexpr const char* kSnapshotSchema =
    R"json({"name":"browser_snapshot","description":"The current page's accessibility snapshot: headings, links, buttons and form fields with refs ([ref=e5], passed back as @e5; inside a frame from another site they look like f1e5). navigate, click, type and press already return one; call this after waiting or to see more.","parameters":{"type":"object","properties":{"full":{"type":"boolean","description":"Every element, not only the interesting ones.","default":false},"scope":{"type":"string","description":"Only the part under this ref (@e12) or CSS selector."}}}})json";
constexpr const char* kClickSchema =
    R"json({"name":"browser_click","description":"Click an element by its ref from the snapshot (for example @e5). Returns what changed on the page since its last snapshot (snapshot_diff: lines marked + added, - removed, ~ changed) or, when the page is a new document or the change is not shorter, its new snapshot.","parameters":{"type":"object","properties":{"ref":{"type":"string","description":"The element's ref, like @e5."}},"required":["ref"]}})json";
constexpr const char* kTypeSchema =
    R"json({"name":"browser_type","description":"Type text into a field by its ref (the field is cleared first); press Enter with browser_press to submit. Returns what changed on the page since its last snapshot (snapshot_diff: lines marked + added, - removed, ~ changed) or, when the page is a new document or the change is not shorter, its new snapshot.","parameters":{"type":"object","properties":{"ref":{"type":"string","description":"The field's ref, like @e3."},"text":{"type":"string","description":"The text to type."}},"required":["ref","text"]}})json";
constexpr const char* kScrollSchema =
    R"json({"name":"browser_scroll","description":"Scroll the page up or down by 500 pixels.","parameters":{"type":"object","properties":{"direction":{"type":"string","enum":["up","down"]}},"required":["direction"]}})json";
constexpr const char* kBackSchema =
    R"json({"name":"browser_back","description":"Go back to the previous page in the browser history.","parameters":{"type":"object","properties":{}}})json";
constexpr const char* kPressSchema =
    R"json({"name":"browser_press","description":"Press a key in the page (Enter, Tab, Escape, ArrowDown, a character, or Control+a). Returns what changed on the page since its last snapshot (snapshot_diff: lines marked + added, - removed, ~ changed) or, when the page is a new document or the change is not shorter, its new snapshot.","parameters":{"type":"object","properties":{"key":{"type":"string","description":"The key, like Enter or ArrowDown."}},"required":["key"]}})json";
constexpr const char* kImagesSchema =
    R"json({"name":"browser_get_images","description":"List the images on the current page with their URLs, alt text and sizes (inline data: images are left out).","parameters":{"type":"object","properties":{}}})json";
constexpr const char* kVisionSchema =
    R"json({"name":"browser_vision","description":"Take a screenshot of the current page to answer a visual question (layout, charts, CAPTCHAs, what the snapshot cannot say). With annotate, interactive elements are labelled [N] matching the refs @eN.","parameters":{"type":"object","properties":{"question":{"type":"string","description":"What you want to know about the page."},"annotate":{"type":"boolean","description":"Draw ref labels on interactive elements.","default":false}},"required":["question"]}})json";
constexpr const char* kConsoleSchema =
    R"json({"name":"browser_console","description":"The page's console messages and JavaScript errors since the last clear; or, with expression, evaluate JavaScript in the page and return its value.","parameters":{"type":"object","properties":{"clear":{"type":"boolean","description":"Clear the messages after reading them.","default":false},"expression":{"type":"string","description":"JavaScript to evaluate in the page (its value is returned as JSON)."}}}})json";
constexpr const char* kCloseSchema =
    R"json({"name":"browser_close","description":"Close this task's browser (it also closes by itself when idle).","parameters":{"type":"object","properties":{}}})json";

ToolSpec MakeSpec(const Def& d) {
  ToolSpec spec;
  spec.name = d.name;
  spec.toolset = "browser";
  spec.schema = d.schema;
  spec.handler = d.handler;
  spec.check_fn = BrowserAvailable;
  spec.unavailable_reason = WhyUnavailable;
  spec.emoji = "\xF0\x9F\x8C\x90";        // "🌐"
  spec.parallel = ParallelClass::kNever;  // one page per task: calls are ordered
  spec.annotations.read_only = d.read_only;
  spec.annotations.open_world = true;
  return spec;
}

}  // namespace
}  // namespace talaria::browser

TALARIA_TOOL(BrowserNavigate,
             talaria::browser::MakeSpec({"browser_navigate", talaria::browser::kNavigateSchema,
                                         talaria::browser::Navigate, false}));
TALARIA_TOOL(BrowserSnapshot,
             talaria::browser::MakeSpec({"browser_snapshot", talaria::browser::kSnapshotSchema,
                                         talaria::browser::TakeSnapshot, true}));
TALARIA_TOOL(BrowserClick,
             talaria::browser::MakeSpec({"browser_click", talaria::browser::kClickSchema,
                                         talaria::browser::Click, false}));
TALARIA_TOOL(BrowserType, talaria::browser::MakeSpec({"browser_type", talaria::browser::kTypeSchema,
                                                      talaria::browser::Type, false}));
TALARIA_TOOL(BrowserScroll,
             talaria::browser::MakeSpec({"browser_scroll", talaria::browser::kScrollSchema,
                                         talaria::browser::Scroll, false}));
TALARIA_TOOL(BrowserBack, talaria::browser::MakeSpec({"browser_back", talaria::browser::kBackSchema,
                                                      talaria::browser::Back, false}));
TALARIA_TOOL(BrowserPress,
             talaria::browser::MakeSpec({"browser_press", talaria::browser::kPressSchema,
                                         talaria::browser::Press, false}));
TALARIA_TOOL(BrowserGetImages,
             talaria::browser::MakeSpec({"browser_get_images", talaria::browser::kImagesSchema,
                                         talaria::browser::GetImages, true}));
TALARIA_TOOL(BrowserVision,
             talaria::browser::MakeSpec({"browser_vision", talaria::browser::kVisionSchema,
                                         talaria::browser::Vision, true}));
TALARIA_TOOL(BrowserConsole,
             talaria::browser::MakeSpec({"browser_console", talaria::browser::kConsoleSchema,
                                         talaria::browser::ConsoleTool, false}));
TALARIA_TOOL(BrowserClose,
             talaria::browser::MakeSpec({"browser_close", talaria::browser::kCloseSchema,
                                         talaria::browser::CloseTool, false}));
