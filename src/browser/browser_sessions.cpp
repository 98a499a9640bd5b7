// Per-task browsers (browser_sessions.h, browser_sessions_internal.h): a slot per task id, a
// reaper thread that closes browsers idle past their timeout, and the provider factories.
#include <atomic>
#include <condition_variable>
#include <map>
#include <thread>
#include <vector>

#include "browser/browser_sessions_internal.h"
#include "browser/cloud_session_ledger.h"
#include "talaria/browser/cdp_page_driver.h"

namespace talaria::browser {

struct BrowserSlot {
  std::mutex call_mu;  // one call at a time; the reaper only try-locks it
  std::unique_ptr<PageDriver> driver;
  Snapshot seen;  // the last whole snapshot the tools returned, what an action's diff is against
  std::atomic<int64_t> last_used_ms{0};
  int64_t idle_limit_ms = 120'000;
  bool retired = false;  // taken out of the registry: an acquirer must start over
};

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class Sessions {
 public:
  static Sessions& Get() {
    static Sessions instance;
    return instance;
  }
  ~Sessions() {
    reaper_.request_stop();
    cv_.notify_all();
    if (reaper_.joinable()) reaper_.join();
    CloseAll();
  }

  std::shared_ptr<BrowserSlot> Slot(const std::string& task) {
    std::lock_guard lock(mu_);
    if (!reaper_.joinable()) {
      reaper_ = std::jthread([this](const std::stop_token& stop) { Reap(stop); });
    }
    auto& slot = slots_[task];
    if (slot == nullptr) slot = std::make_shared<BrowserSlot>();
    return slot;
  }

  bool Close(const std::string& task) {
    std::shared_ptr<BrowserSlot> slot;
    {
      std::lock_guard lock(mu_);
      auto it = slots_.find(task);
      if (it == slots_.end()) return false;
      slot = it->second;
      slots_.erase(it);
    }
    // A running call ends by its deadline; then the browser is ours to close.
    std::unique_ptr<PageDriver> driver;
    std::lock_guard call(slot->call_mu);
    slot->retired = true;
    driver = std::move(slot->driver);
    return driver != nullptr;
  }

  void CloseAll() {
    std::map<std::string, std::shared_ptr<BrowserSlot>> slots;
    {
      std::lock_guard lock(mu_);
      slots.swap(slots_);
    }
    for (auto& [task, slot] : slots) {
      std::lock_guard call(slot->call_mu);
      slot->retired = true;
      slot->driver.reset();
    }
  }

  int Count() {
    std::lock_guard lock(mu_);
    int n = 0;
    for (auto& [task, slot] : slots_) n += slot->driver != nullptr ? 1 : 0;
    return n;
  }

  void Register(std::string name, DriverFactory factory) {
    std::lock_guard lock(mu_);
    factories_[std::move(name)] = std::move(factory);
  }
  DriverFactory Factory(const std::string& name) {
    std::lock_guard lock(mu_);
    auto it = factories_.find(name);
    return it == factories_.end() ? nullptr : it->second;
  }

  std::shared_ptr<const web::NetworkGuard> Guard(const std::vector<std::string>& allow,
                                                 Status& error) {
    std::string key;
    for (const std::string& a : allow) key += a + "\n";
    std::lock_guard lock(mu_);
    if (auto it = guards_.find(key); it != guards_.end()) return it->second;
    auto guard = web::NetworkGuard::Create({.allow_private = allow, .resolver = nullptr});
    if (!guard) {
      error = guard.error();
      return nullptr;
    }
    guards_[key] = *guard;
    return *guard;
  }

 private:
  Sessions() = default;

  void Reap(const std::stop_token& stop) {
    std::unique_lock lock(mu_);
    while (!stop.stop_requested()) {
      cv_.wait_for(lock, std::chrono::seconds(1));
      if (stop.stop_requested()) return;
      const int64_t now = NowMs();
      std::vector<std::unique_ptr<PageDriver>> idle;
      for (auto it = slots_.begin(); it != slots_.end();) {
        auto& slot = it->second;
        std::unique_lock call(slot->call_mu, std::try_to_lock);
        if (call.owns_lock() && slot->driver != nullptr &&
            now - slot->last_used_ms.load() > slot->idle_limit_ms) {
          idle.push_back(std::move(slot->driver));
          slot->retired = true;
          call.unlock();
          it = slots_.erase(it);
          continue;
        }
        ++it;
      }
      // Closing waits for the browser to die: not under the registry's lock.
      lock.unlock();
      idle.clear();
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::shared_ptr<BrowserSlot>> slots_;
  std::map<std::string, DriverFactory> factories_;
  std::map<std::string, std::shared_ptr<const web::NetworkGuard>> guards_;
  std::jthread reaper_;
};

}  // namespace

BrowserLease::BrowserLease(std::shared_ptr<BrowserSlot> slot, std::unique_lock<std::mutex> lock)
    : slot_(std::move(slot)), lock_(std::move(lock)) {}

BrowserLease::BrowserLease(BrowserLease&& other) noexcept
    : slot_(std::move(other.slot_)), lock_(std::move(other.lock_)) {}

BrowserLease::~BrowserLease() {
  if (slot_ != nullptr) slot_->last_used_ms.store(NowMs());
}

PageDriver& BrowserLease::driver() const { return *slot_->driver; }

Snapshot& BrowserLease::last_snapshot() const { return slot_->seen; }

Result<BrowserLease> AcquireBrowser(std::string_view task_id, const BrowserSettings& settings,
                                    const CallLimits& limits) {
  const std::string task = task_id.empty() ? "default" : std::string(task_id);
  auto slot = Sessions::Get().Slot(task);
  std::unique_lock call(slot->call_mu);
  while (slot->retired) {  // reaped or closed between the lookup and the lock
    call.unlock();
    slot = Sessions::Get().Slot(task);
    call = std::unique_lock(slot->call_mu);
  }
  slot->idle_limit_ms = settings.inactivity_timeout_s * 1000;
  slot->last_used_ms.store(NowMs());
  if (slot->driver == nullptr) {
    slot->seen = {};  // a new browser's documents are numbered afresh
    // Sessions a killed talaria left running at a cloud provider: released before a new one.
    // Once per process: a provider that cannot be reached costs its timeout only once.
    static std::once_flag swept;
    std::call_once(swept, [] { ReleaseLeftoverCloudBrowsers(); });
    Status guard_error;
    auto guard = Sessions::Get().Guard(settings.allow_private, guard_error);
    if (guard == nullptr) return Err(guard_error);
    if (settings.provider == "local") {
      auto driver = TALARIA_TRY(LaunchLocalChromium(
          {.guard = guard, .executable = settings.executable, .extra_args = {}}, limits));
      slot->driver = std::move(driver);
    } else {
      DriverFactory factory = Sessions::Get().Factory(settings.provider);
      if (!factory) {
        return Err(InvalidArgumentError("browser.provider: unknown provider " + settings.provider));
      }
      auto driver = TALARIA_TRY(factory({.task_id = task, .guard = guard, .limits = limits}));
      slot->driver = std::move(driver);
    }
  }
  return BrowserLease(std::move(slot), std::move(call));
}

void RegisterDriverFactory(std::string name, DriverFactory factory) {
  Sessions::Get().Register(std::move(name), std::move(factory));
}

bool CloseBrowserSession(std::string_view task_id) {
  return Sessions::Get().Close(task_id.empty() ? "default" : std::string(task_id));
}

void CloseAllBrowserSessions() { Sessions::Get().CloseAll(); }

int BrowserSessionCount() { return Sessions::Get().Count(); }

}  // namespace talaria::browser
