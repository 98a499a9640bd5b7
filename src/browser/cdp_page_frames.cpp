// CdpPageDriver's frames and closed shadow roots (cdp_page_driver_impl.h). The page script
// cannot enter a cross-origin iframe (in this renderer or, with site isolation, in a renderer
// of its own behind a flat session) nor see a closed shadow root. The driver can: it asks
// DOM.describeNode which frame an iframe element holds, runs the script in an isolated world of
// that frame on the session that owns it, and splices the frame's lines under the iframe's;
// closed roots are found with DOM.getDocument(pierce) and handed to the script as objects.
#include <regex>
#include <sstream>

#include "browser/cdp_page_driver_impl.h"
#include "browser/page_script.h"

namespace talaria::browser {
namespace {

// How deep one snapshot follows frames inside frames (kMaxFramesPerSnapshot bounds how many).
constexpr int kMaxFrameDepth = 8;
bool GoneContext(const Status& s) {
  const std::string& m = s.message();
  return m.find("context") != std::string::npos || m.find("ession") != std::string::npos ||
         m.find("frame") != std::string::npos;
}

// "[ref=eN]" -> "[ref=fKeN]" (spliced grandchildren already carry their own prefix).
std::string PrefixRefs(const std::string& text, int key) {
  static const std::regex kRef(R"(\[ref=(e[0-9]+)\])");
  return std::regex_replace(text, kRef, "[ref=f" + std::to_string(key) + "$1]");
}

// The closed shadow roots (backend node ids) of the document under `node` and of the frames in
// this renderer inside it: the page script walks same-origin frames in place, so their roots
// are adopted into the same world (a cross-origin frame's fail to resolve there, or are never
// walked: it has a world of its own).
void CollectClosedRoots(const Json& node, std::vector<int64_t>& out, int depth) {
  if (!node.is_object() || depth > 512) return;
  if (auto roots = node.find("shadowRoots"); roots != node.end() && roots->is_array()) {
    for (const Json& r : *roots) {
      if (JsonStringField(r, "shadowRootType") == "closed")
        out.push_back(r.value("backendNodeId", int64_t{0}));
      CollectClosedRoots(r, out, depth + 1);
    }
  }
  if (auto kids = node.find("children"); kids != node.end() && kids->is_array()) {
    for (const Json& k : *kids) CollectClosedRoots(k, out, depth + 1);
  }
  if (auto doc = node.find("contentDocument"); doc != node.end()) {
    CollectClosedRoots(*doc, out, depth + 1);
  }
}

// The content document of the frame owner whose frameId is `frame`, or null.
const Json* FrameDocument(const Json& node, const std::string& frame, int depth) {
  if (!node.is_object() || depth > 512) return nullptr;
  if (JsonStringField(node, "frameId") == frame && node.contains("contentDocument"))
    return &node["contentDocument"];
  for (const char* field : {"children", "shadowRoots"}) {
    if (auto kids = node.find(field); kids != node.end() && kids->is_array()) {
      for (const Json& k : *kids) {
        if (const Json* d = FrameDocument(k, frame, depth + 1)) return d;
      }
    }
  }
  if (auto d = node.find("contentDocument"); d != node.end()) {
    if (const Json* f = FrameDocument(*d, frame, depth + 1)) return f;
  }
  return nullptr;
}

}  // namespace

std::pair<int, std::string> CdpPageDriver::SplitRef(std::string_view ref) {
  static const std::regex kFramed("^@?f([0-9]{1,6})(e[0-9]{1,9})$");
  const std::string r(ref);
  std::smatch m;
  if (std::regex_match(r, m, kFramed)) return {std::stoi(m[1].str()), m[2].str()};
  return {0, r};
}

size_t CdpPageDriver::OutOfProcessFramesForTest() {
  std::lock_guard lock(mu_);
  return frame_sessions_.size();
}

Result<CdpPageDriver::WorldRef> CdpPageDriver::WorldOf(int key, const CallLimits& limits) {
  if (key == 0) {
    const int64_t world = TALARIA_TRY(World(limits));
    std::lock_guard lock(mu_);
    return WorldRef{session_, world};
  }
  std::lock_guard lock(mu_);
  auto it = frames_.find(key);
  if (it == frames_.end()) {
    return Err(InvalidArgumentError("browser: unknown frame f" + std::to_string(key) +
                                    " (take a new snapshot: refs belong to the page they came "
                                    "from)"));
  }
  return WorldRef{it->second.session, it->second.context};
}

Result<Json> CdpPageDriver::InFrame(int key, const std::string& call, const CallLimits& limits) {
  FrameWorld f;
  {
    std::lock_guard lock(mu_);
    auto it = frames_.find(key);
    if (it == frames_.end()) {
      return Err(InvalidArgumentError("browser: unknown frame f" + std::to_string(key) +
                                      " (take a new snapshot)"));
    }
    f = it->second;
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool ready = f.ready && attempt == 0;
    std::string expression = ready ? call : std::string(kPageScript) + ";\n" + call;
    auto r = cdp_->Call("Runtime.evaluate",
                        {{"expression", expression},
                         {"contextId", f.context},
                         {"returnByValue", true},
                         {"awaitPromise", false}},
                        f.session, limits);
    if (!r) {
      if (GoneContext(r.error())) {
        std::lock_guard lock(mu_);
        frames_.erase(key);
        return Err(InvalidArgumentError("browser: frame f" + std::to_string(key) +
                                        " has navigated or gone (take a new snapshot)"));
      }
      return Err(r.error());
    }
    if (auto ex = r->find("exceptionDetails"); ex != r->end()) {
      if (ready) continue;  // the world lost the script: put it in again
      return Err(InternalError("browser: page script failed in frame f" + std::to_string(key)));
    }
    {
      std::lock_guard lock(mu_);
      if (auto it = frames_.find(key); it != frames_.end()) it->second.ready = true;
    }
    const Json& result = (*r)["result"];
    return result.contains("value") ? result["value"] : Json();
  }
  return Err(UnavailableError("browser: the frame kept changing; try again"));
}

Result<Json> CdpPageDriver::InAnyWorld(int key, const std::string& call, const CallLimits& limits) {
  return key == 0 ? InWorld(call, limits) : InFrame(key, call, limits);
}

Status CdpPageDriver::AdoptClosedShadowRoots(int key, const CallLimits& limits) {
  std::string frame_id;
  {
    std::lock_guard lock(mu_);
    if (key == 0) {
      frame_id = target_id_;
    } else if (auto it = frames_.find(key); it != frames_.end()) {
      frame_id = it->second.frame_id;
    }
  }
  WorldRef w = TALARIA_TRY(WorldOf(key, limits));
  auto doc = cdp_->Call("DOM.getDocument", {{"depth", -1}, {"pierce", true}}, w.session, limits);
  if (!doc) return doc.error();
  const Json& root = (*doc)["root"];
  // A frame in this renderer is a document inside the session's; an out-of-process frame's
  // session is rooted at its own document.
  const Json* start = FrameDocument(root, frame_id, 0);
  std::vector<int64_t> closed;
  CollectClosedRoots(start != nullptr ? *start : root, closed, 0);
  for (int64_t id : closed) {
    auto obj = cdp_->Call("DOM.resolveNode",
                          {{"backendNodeId", id},
                           {"executionContextId", w.context},
                           {"objectGroup", "talaria-shadow"}},
                          w.session, limits);
    if (!obj) continue;  // the root went away in between
    const std::string object_id = JsonStringField((*obj)["object"], "objectId");
    if (object_id.empty()) continue;
    (void)cdp_->Call(
        "Runtime.callFunctionOn",
        {{"objectId", object_id},
         {"functionDeclaration", "function(){return globalThis.__talaria.adopt(this)}"},
         {"returnByValue", true}},
        w.session, limits);
  }
  (void)cdp_->Call("Runtime.releaseObjectGroup", {{"objectGroup", "talaria-shadow"}}, w.session,
                   limits);
  // getDocument turned the DOM agent on: off again, or every later mutation is an event.
  (void)cdp_->Call("DOM.disable", Json::object(), w.session, limits);
  return Status::Ok();
}

Result<int> CdpPageDriver::FrameBehind(int parent, const std::string& ref,
                                       const CallLimits& limits) {
  WorldRef w = TALARIA_TRY(WorldOf(parent, limits));
  Json found = TALARIA_TRY(cdp_->Call("Runtime.evaluate",
                                      {{"expression", "__talaria.element(" + JsonQuote(ref) + ")"},
                                       {"contextId", w.context},
                                       {"returnByValue", false},
                                       {"objectGroup", "talaria-frames"}},
                                      w.session, limits));
  const std::string object_id = JsonStringField(found["result"], "objectId");
  if (object_id.empty()) return Err(NotFoundError("browser: the iframe is gone"));
  auto node = cdp_->Call("DOM.describeNode", {{"objectId", object_id}}, w.session, limits);
  (void)cdp_->Call("Runtime.releaseObjectGroup", {{"objectGroup", "talaria-frames"}}, w.session,
                   limits);
  if (!node) return Err(node.error());
  const std::string frame_id = JsonStringField((*node)["node"], "frameId");
  if (frame_id.empty()) return Err(NotFoundError("browser: the iframe holds no frame yet"));
  const std::string parent_ref = parent == 0 ? ref : "f" + std::to_string(parent) + ref;
  // A known frame keeps its key while its world (its document) lives.
  int known = 0;
  FrameWorld old;
  std::string session;
  {
    std::lock_guard lock(mu_);
    for (const auto& [k, f] : frames_) {
      if (f.frame_id == frame_id && f.parent_ref == parent_ref) {
        known = k;
        old = f;
        break;
      }
    }
    auto oop = frame_sessions_.find(frame_id);
    session = oop != frame_sessions_.end() ? oop->second : w.session;
  }
  if (known != 0) {
    auto alive = cdp_->Call("Runtime.evaluate", {{"expression", "1"}, {"contextId", old.context}},
                            old.session, limits);
    if (alive && !alive->contains("exceptionDetails") && old.session == session) return known;
    std::lock_guard lock(mu_);
    frames_.erase(known);
  }
  Json made =
      TALARIA_TRY(cdp_->Call("Page.createIsolatedWorld",
                             {{"frameId", frame_id}, {"worldName", "talaria"}}, session, limits));
  const int64_t context = made.value("executionContextId", int64_t{0});
  if (context == 0) return Err(UnavailableError("browser: no isolated world in the frame"));
  std::lock_guard lock(mu_);
  const int key = next_frame_key_++;
  frames_[key] = {session, frame_id, context, false, parent_ref};
  return key;
}

Result<Snapshot> CdpPageDriver::SnapshotOf(int key, Json opts, int depth, int& frames_left,
                                           const CallLimits& limits) {
  Json v = TALARIA_TRY(InAnyWorld(key, "__talaria.snapshot(" + opts.dump() + ")", limits));
  if (v.is_object() && v.value("scan", false)) {
    // Best effort: a page that cannot be pierced is still shown without its closed roots.
    (void)AdoptClosedShadowRoots(key, limits);
    opts["scanned"] = true;
    v = TALARIA_TRY(InAnyWorld(key, "__talaria.snapshot(" + opts.dump() + ")", limits));
  }
  if (!v.is_object()) return Err(InternalError("browser: snapshot returned nothing"));
  if (v.contains("error"))
    return Err(InvalidArgumentError("browser: " + JsonStringField(v, "error")));
  Snapshot s;
  s.text = JsonStringField(v, "text");
  s.element_count = v.value("count", 0);
  s.url = JsonStringField(v, "url");
  s.title = JsonStringField(v, "title");
  if (v.contains("frames") && v["frames"].is_array() && !v["frames"].empty()) {
    TALARIA_RETURN_IF_ERROR(SpliceFrames(key, v["frames"], opts.value("full", false), s.text,
                                         s.element_count, depth, frames_left, limits));
  }
  if (key != 0) s.text = PrefixRefs(s.text, key);
  return s;
}

Status CdpPageDriver::SpliceFrames(int key, const Json& holes, bool full, std::string& text,
                                   int& count, int depth, int& frames_left,
                                   const CallLimits& limits) {
  static const std::regex kMarker(R"(^( *)- frame \[frame=(e[0-9]+)\]$)");
  std::set<std::string> expected;
  for (const Json& h : holes) {
    if (h.is_string()) expected.insert(h.get<std::string>());
  }
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, kMarker) || !expected.contains(m[2].str())) {
      out += line + '\n';
      continue;
    }
    const std::string indent = m[1].str();
    std::string why;
    if (depth >= kMaxFrameDepth || frames_left <= 0) {
      why = "too many frames";
    } else {
      --frames_left;
      auto child = FrameBehind(key, m[2].str(), limits);
      if (child) {
        auto snap = SnapshotOf(*child, Json{{"full", full}}, depth + 1, frames_left, limits);
        if (snap) {
          std::istringstream lines(snap->text);
          for (std::string l; std::getline(lines, l);) out += indent + l + '\n';
          count += snap->element_count;
          continue;
        }
        why = snap.error().message();
      } else {
        why = child.error().message();
      }
      if (limits.cancel.stop_requested()) return CancelledError("browser: cancelled");
    }
    out += indent + "- text: (frame not reached: " + why + ")\n";
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  text = std::move(out);
  return Status::Ok();
}

Result<Json> CdpPageDriver::PointOf(std::string_view ref, const CallLimits& limits) {
  auto [key, local] = SplitRef(ref);
  Json p = TALARIA_TRY(InAnyWorld(key, "__talaria.point(" + JsonQuote(local) + ")", limits));
  if (!p.is_object()) return p;
  if (p.contains("error")) {
    // The frame's script names its own ref ("@e3"); the model knows it as "@f2e3".
    std::string why = JsonStringField(p, "error");
    if (key != 0) {
      if (size_t at = why.find("@" + local); at != std::string::npos)
        why.replace(at, local.size() + 1, "@" + std::string(ref));
    }
    return Json{{"error", why}};
  }
  double x = p.value("x", 0.0), y = p.value("y", 0.0);
  // Up through the enclosing cross-origin frames: each adds where its content starts.
  for (int hops = 0; key != 0 && hops <= kMaxFrameDepth; ++hops) {
    std::string parent_ref;
    {
      std::lock_guard lock(mu_);
      auto it = frames_.find(key);
      if (it == frames_.end()) return Json{{"error", "the frame is gone (take a new snapshot)"}};
      parent_ref = it->second.parent_ref;
    }
    auto [parent, iframe] = SplitRef(parent_ref);
    Json o = TALARIA_TRY(InAnyWorld(parent, "__talaria.origin(" + JsonQuote(iframe) + ")", limits));
    if (!o.is_object() || o.contains("error")) return o;
    x += o.value("x", 0.0);
    y += o.value("y", 0.0);
    key = parent;
  }
  return Json{{"x", x}, {"y", y}};
}

}  // namespace talaria::browser
