// How CdpPageDriver waits after an action (cdp_page_driver_impl.h): a watch armed in the page
// before the input (settle_script.h), then its promise, then a navigation the action started.
#include <string>

#include "browser/cdp_page_driver_impl.h"
#include "browser/settle_script.h"

namespace talaria::browser {
namespace {

// At most this long for what an action started in the page (timers, frames, requests, DOM
// changes) to end; a navigation it started then gets the page-load wait of its own.
constexpr auto kSettleBound = std::chrono::milliseconds(2000);
// How long the page must stay quiet after its last activity: untracked work (a message
// channel, a timer through a reference the page kept) that follows at once is still seen.
constexpr int kSettleQuietMs = 10;
constexpr const char* kSettleGroup = "talaria-settle";

}  // namespace

std::string CdpPageDriver::ArmSettle(const CallLimits& limits) {
  const std::string expression =
      "(" + std::string(kSettleScript) + ")(" + std::to_string(kSettleBound.count()) + ")";
  auto r = PageCall(
      "Runtime.evaluate",
      {{"expression", expression}, {"returnByValue", false}, {"objectGroup", kSettleGroup}},
      limits);
  // A page that would not take the watch is still waited for by its navigation events.
  if (!r || r->contains("exceptionDetails") || !(*r)["result"].is_object()) return "";
  return JsonStringField((*r)["result"], "objectId");
}

void CdpPageDriver::DropSettle(const std::string& watch) {
  if (watch.empty()) return;
  std::string session;
  {
    std::lock_guard lock(mu_);
    session = session_;
  }
  (void)cdp_->Notify("Runtime.callFunctionOn",
                     {{"objectId", watch}, {"functionDeclaration", "function(){this.restore()}"}},
                     session);
  (void)cdp_->Notify("Runtime.releaseObjectGroup", {{"objectGroup", kSettleGroup}}, session);
}

Status CdpPageDriver::AwaitSettle(const std::string& watch, const CallLimits& limits) {
  {
    std::lock_guard lock(mu_);
    last_settle_ = Json();
  }
  if (!watch.empty()) {
    // The page keeps the bound itself; this deadline is for a page that stopped answering.
    const CallLimits inner = {
        .deadline = std::min(limits.deadline, std::chrono::steady_clock::now() + kSettleBound +
                                                  std::chrono::seconds(1)),
        .cancel = limits.cancel};
    auto r = PageCall("Runtime.callFunctionOn",
                      {{"objectId", watch},
                       {"functionDeclaration", "function(q){return this.settle(q)}"},
                       {"arguments", Json::array({{{"value", kSettleQuietMs}}})},
                       {"awaitPromise", true},
                       {"returnByValue", true}},
                      inner);
    if (!r) {
      if (limits.cancel.stop_requested()) return CancelledError("browser: cancelled");
      // Otherwise the document went away (a navigation the action started: waited for below)
      // or the page did not answer within the bound; either way the page is looked at next.
      DropSettle(watch);
    } else {
      std::string session;
      {
        std::lock_guard lock(mu_);
        session = session_;
        if (auto v = r->find("result"); v != r->end() && v->contains("value")) {
          last_settle_ = (*v)["value"];
        }
      }
      (void)cdp_->Notify("Runtime.releaseObjectGroup", {{"objectGroup", kSettleGroup}}, session);
    }
  }
  SettleNavigation(limits);
  if (limits.cancel.stop_requested()) return CancelledError("browser: cancelled");
  return Status::Ok();
}

}  // namespace talaria::browser
