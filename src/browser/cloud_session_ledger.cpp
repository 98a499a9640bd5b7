// The cloud session ledger (cloud_session_ledger.h).
#include "browser/cloud_session_ledger.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "talaria/base/file_io.h"
#include "talaria/base/json.h"
#include "talaria/base/paths.h"

namespace talaria::browser {
namespace {

constexpr std::string_view kClaimed = ".claimed-";

// The start time of `pid` in clock ticks since boot (field 22 of /proc/<pid>/stat), or -1 when
// no such process runs (a zombie does not: a SIGKILLed owner nobody reaped yet is dead). With
// the pid it names one process: a reused pid has another start.
long long ProcessStart(long pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return -1;
  // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  if (!(rest >> field) || field == "Z" || field == "X") return -1;  // field 3, the state
  for (int i = 4; i < 22 && rest >> field; ++i) {
  }
  long long start = -1;
  rest >> start;
  return start;
}

// Ids go into a file name: what rest::CheckId admits (no '/', not "." or "..") plus the
// provider's fixed names.
bool SafeNamePart(std::string_view s) {
  if (s.empty() || s.size() > 200 || s == "." || s == "..") return false;
  for (const char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string RecordPath(const RemoteBrowser& b) {
  return CloudLedgerDir() + "/" + b.provider + "." + b.session_id + ".json";
}

bool OwnerAlive(const Json& record) {
  const long pid = record.value("owner_pid", 0L);
  const long long start = record.value("owner_start", -1LL);
  if (pid <= 0) return false;
  const long long now = ProcessStart(pid);
  return now >= 0 && now == start;
}

class RecordingProvider final : public BrowserProvider {
 public:
  explicit RecordingProvider(std::shared_ptr<BrowserProvider> inner) : inner_(std::move(inner)) {}
  std::string_view name() const override { return inner_->name(); }
  Result<RemoteBrowser> Acquire(std::string_view task_id, std::stop_token cancel) override {
    RemoteBrowser browser = TALARIA_TRY(inner_->Acquire(task_id, std::move(cancel)));
    if (Status recorded = RecordCloudSession(browser); !recorded.ok()) {
      (void)inner_->Release(browser);  // never a session nobody could find again
      return Err(recorded);
    }
    return browser;
  }
  Status Release(const RemoteBrowser& browser) override {
    TALARIA_RETURN_IF_ERROR(inner_->Release(browser));
    ForgetCloudSession(browser);
    return Status::Ok();
  }

 private:
  std::shared_ptr<BrowserProvider> inner_;
};

}  // namespace

std::shared_ptr<BrowserProvider> RecordingCloudSessions(std::shared_ptr<BrowserProvider> provider) {
  return std::make_shared<RecordingProvider>(std::move(provider));
}

std::string CloudLedgerDir() { return TalariaHome() + "/run/cloud-browsers"; }

Status RecordCloudSession(const RemoteBrowser& browser) {
  if (!SafeNamePart(browser.provider) || !SafeNamePart(browser.session_id)) {
    return InvalidArgumentError("cloud session ledger: unusable provider or session id");
  }
  const std::string dir = CloudLedgerDir();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return UnavailableError("cloud session ledger: cannot create " + dir + ": " + ec.message());
  }
  ::chmod((TalariaHome() + "/run").c_str(), 0700);
  ::chmod(dir.c_str(), 0700);
  Json record = {{"provider", browser.provider},
                 {"session_id", browser.session_id},
                 {"owner_pid", static_cast<long>(::getpid())},
                 {"owner_start", ProcessStart(::getpid())},
                 {"created_ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count()}};
  if (!browser.route.empty()) record["route"] = browser.route;
  return WriteFileAtomic(RecordPath(browser), DumpJson(record) + "\n");
}

void ForgetCloudSession(const RemoteBrowser& browser) {
  if (!SafeNamePart(browser.provider) || !SafeNamePart(browser.session_id)) return;
  std::error_code ec;
  std::filesystem::remove(RecordPath(browser), ec);
}

std::vector<RemoteBrowser> ReleaseLeftoverCloudSessions(const CloudReleaser& release) {
  std::vector<RemoteBrowser> released;
  const std::string dir = CloudLedgerDir();
  std::error_code ec;
  std::vector<std::filesystem::path> records;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename();
    if (name.ends_with(".json") && !name.starts_with(".")) records.push_back(e.path());
  }
  for (const auto& path : records) {
    auto text = ReadWholeFile(path);
    if (!text) continue;
    auto record = ParseJson(*text);
    if (!record || !record->is_object()) continue;
    if (OwnerAlive(*record)) continue;
    RemoteBrowser browser{.provider = JsonStringField(*record, "provider"),
                          .session_id = JsonStringField(*record, "session_id"),
                          .cdp_url = "",
                          .cdp_headers = {},
                          .route = JsonStringField(*record, "route")};
    if (!SafeNamePart(browser.provider) || !SafeNamePart(browser.session_id)) continue;
    if (browser.route != "gateway" && browser.route != "direct") browser.route.clear();
    // Claimed by renaming: of two sweepers only one gets the record.
    const std::string claimed = dir + "/" + std::string(kClaimed) + std::to_string(::getpid()) +
                                "-" + path.filename().string();
    if (::rename(path.c_str(), claimed.c_str()) != 0) continue;
    if (release(browser).ok()) {
      std::filesystem::remove(claimed, ec);
      released.push_back(std::move(browser));
    } else {
      (void)::rename(claimed.c_str(), path.c_str());  // for the next sweep
    }
  }
  // A sweeper killed between its claim and the release left a claimed record: give it back.
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename();
    if (!name.starts_with(kClaimed)) continue;
    const std::string rest = name.substr(kClaimed.size());
    const size_t dash = rest.find('-');
    if (dash == std::string::npos) continue;
    const long claimer = std::strtol(rest.substr(0, dash).c_str(), nullptr, 10);
    if (claimer > 0 && ProcessStart(claimer) >= 0) continue;  // still at it
    (void)::rename(e.path().c_str(), (dir + "/" + rest.substr(dash + 1)).c_str());
  }
  return released;
}

}  // namespace talaria::browser
