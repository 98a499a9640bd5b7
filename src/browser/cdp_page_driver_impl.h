// CdpPageDriver: the PageDriver behind OpenCdpPageDriver (talaria/browser/cdp_page_driver.h),
// declared here so this module's tests can crash its renderer.
//
// State the event thread writes (loads, crashes, refusals, console) is kept under one mutex
// with a condition variable the calls wait on, each wait bounded by the call's deadline and
// woken by its cancel token.
// Thread-safety: as PageDriver.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "browser/cdp_client.h"
#include "talaria/browser/cdp_page_driver.h"

namespace talaria::browser {

class CdpPageDriver final : public PageDriver {
 public:
  explicit CdpPageDriver(CdpDriverOptions options);
  ~CdpPageDriver() override;

  Status Start(std::unique_ptr<CdpTransport> transport, const CallLimits& limits);

  std::string_view backend() const override { return options_.backend; }
  Result<Snapshot> Navigate(std::string_view url, const CallLimits& limits) override;
  Result<Snapshot> TakeSnapshot(const SnapshotOptions& options, const CallLimits& limits) override;
  Status Click(std::string_view ref, const CallLimits& limits) override;
  Status Type(std::string_view ref, std::string_view text, const CallLimits& limits) override;
  Status Scroll(bool down, const CallLimits& limits) override;
  Result<std::string> Back(const CallLimits& limits) override;
  Status Press(std::string_view key, const CallLimits& limits) override;
  Result<std::vector<PageImage>> Images(const CallLimits& limits) override;
  Result<std::string> Screenshot(bool annotate, const CallLimits& limits) override;
  Result<Evaluation> Evaluate(std::string_view expression, const CallLimits& limits) override;
  Result<std::vector<ConsoleEntry>> Console(bool clear, const CallLimits& limits) override;
  void Close() override;

  // A raw CDP command on the page's session (the bench's raw accessibility tree).
  Result<Json> RawCall(std::string_view method, const Json& params, const CallLimits& limits) {
    return PageCall(method, params, limits);
  }
  // Kills the page's renderer (Page.crash), as a crash would.
  Status CrashRendererForTest(const CallLimits& limits);
  // Frames that run in a renderer of their own (out-of-process iframes) attached right now.
  size_t OutOfProcessFramesForTest();
  // How the last action's watch ended: {settled (quiet, not the bound), mutations, waited} as
  // the page said, or null when it had none (no watch, or its document went away).
  Json LastSettleForTest() {
    std::lock_guard lock(mu_);
    return last_settle_;
  }

 private:
  // The page's CDP session id as it is now (a crashed page is replaced by a new session).
  std::string PageSession();
  Result<Json> PageCall(std::string_view method, const Json& params, const CallLimits& limits);
  // Commands on the page's session sent back to back (CdpClient::CallEach); the first error.
  Status PageCallEach(const std::vector<CdpClient::Command>& commands, const CallLimits& limits);
  Status OpenPage(const CallLimits& limits);
  // Before each call: a closed browser, a crashed page (reported once, then replaced) or a
  // refused navigation the page started on its own.
  Status Ready(const CallLimits& limits);
  Result<int64_t> World(const CallLimits& limits);
  // `call` is an expression over `__talaria` evaluated in the isolated world.
  Result<Json> InWorld(const std::string& call, const CallLimits& limits);
  // Waits until `done` holds (under mu_), the page crashed, the browser closed, or the limits
  // end. `what` names the wait in the DeadlineExceeded message.
  Status WaitFor(const std::function<bool()>& done, const CallLimits& limits,
                 std::string_view what);
  Status Refused(std::string message, const CallLimits& limits);
  Status MouseClick(double x, double y, const CallLimits& limits);
  // Waits (at most a few seconds) for a navigation in flight to commit, stop or be refused.
  void SettleNavigation(const CallLimits& limits);
  // Around an action (cdp_page_settle.cpp): ArmSettle before its input returns the page-side
  // watch (a remote object; "" when the page would not take one); Acted ends it: a failed
  // action puts the page's functions back, a done one waits (bounded) for the timers, frames,
  // requests and DOM changes it started to end, then for a navigation it started to load.
  // Errors: only the action's own, or Cancelled.
  std::string ArmSettle(const CallLimits& limits);
  Status Acted(const std::string& watch, Status action, const CallLimits& limits);
  Status AwaitSettle(const std::string& watch, const CallLimits& limits);
  void DropSettle(const std::string& watch);

  // Frames and closed shadow roots (cdp_page_frames.cpp). A frame the page script cannot enter
  // (cross-origin, in this renderer or out of it) gets an isolated world of its own and a key K:
  // its refs are "fKeN". Keys last as long as the frame's document and the main document.
  struct FrameWorld {
    std::string session;  // the flat session that owns the frame
    std::string frame_id;
    int64_t context = 0;     // its isolated world
    bool ready = false;      // the page script is in
    std::string parent_ref;  // its iframe element in the parent: "e5" (main) or "f1e5"
  };
  // Where a call runs: the main frame (key 0) or frame K.
  struct WorldRef {
    std::string session;
    int64_t context = 0;
  };
  // The snapshot of the world `key` (0: main), its closed shadow roots found first when the
  // document changed, frames spliced in under their iframe lines and refs made frame-aware.
  // `frames_left` bounds the frames one snapshot enters: a page can nest and repeat them.
  static constexpr int kMaxFramesPerSnapshot = 64;
  Result<Snapshot> SnapshotOf(int key, Json opts, int depth, int& frames_left,
                              const CallLimits& limits);
  Status SpliceFrames(int key, const Json& holes, bool full, std::string& text, int& count,
                      int depth, int& frames_left, const CallLimits& limits);
  // The frame behind the iframe `ref` of world `parent`: its key, made (with a new world) when
  // the frame is new or its document changed.
  Result<int> FrameBehind(int parent, const std::string& ref, const CallLimits& limits);
  Result<Json> InFrame(int key, const std::string& call, const CallLimits& limits);
  // `call` in world `key` (0: main), its value by value.
  Result<Json> InAnyWorld(int key, const std::string& call, const CallLimits& limits);
  Result<WorldRef> WorldOf(int key, const CallLimits& limits);
  Status AdoptClosedShadowRoots(int key, const CallLimits& limits);
  // "f2e7" -> {2, "e7"}; "e7" -> {0, "e7"}.
  static std::pair<int, std::string> SplitRef(std::string_view ref);
  // A ref's centre in top-level viewport pixels, every enclosing frame's offset added.
  Result<Json> PointOf(std::string_view ref, const CallLimits& limits);

  void OnEvent(const std::string& method, const Json& params, const std::string& session);
  void JudgeRequest(const Json& params, const std::string& session);
  void AddConsole(std::string type, std::string text);  // REQUIRES: mu_ held
  // Moves the egress proxy's refusals into the console list; the newest, or "" when none.
  std::string NoteEgressRefusals();

  CdpDriverOptions options_;
  std::unique_ptr<CdpClient> client_;
  CdpClient* cdp_ = nullptr;  // client_.get(), kept valid for the event thread until it joins

  std::mutex mu_;
  std::condition_variable cv_;
  std::string session_;       // the page's flat session
  std::string target_id_;     // also the main frame's id
  int64_t world_ = 0;         // the isolated world's context id; 0 until made for this document
  uint64_t worlds_made_ = 0;  // numbers the documents (Snapshot::document)
  bool world_ready_ = false;
  bool crashed_ = false;
  bool closed_ = false;
  std::set<std::string> loaded_;  // loaderIds whose main-frame load fired
  uint64_t navigations_ = 0;      // main-frame commits (frameNavigated, same-document too)
  bool loading_ = false;
  // Main-frame navigations the page asked for, and how many of them have ended (committed,
  // stopped or refused): while they differ, a navigation is in flight.
  uint64_t nav_requested_ = 0;
  uint64_t nav_settled_ = 0;
  std::string refusal_;  // a refused main-frame navigation not yet reported
  std::deque<ConsoleEntry> console_;
  std::map<int, FrameWorld> frames_;  // by key, for this main document
  int next_frame_key_ = 1;
  std::map<std::string, std::string> frame_sessions_;  // out-of-process frame id -> session
  Json last_settle_;  // what the page said of the last action's watch (LastSettleForTest)
};

}  // namespace talaria::browser
