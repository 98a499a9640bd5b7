#include "tools/synced_environment.h"

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <utility>

#include "talaria/base/file_io.h"
#include "talaria/base/shell_words.h"
#include "talaria/sandboxes/file_sync.h"

namespace talaria::tools {
namespace {

int64_t NowEpochSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A private local directory the changed files land in before they are written through the
// workspace; removed with the object.
class Staging {
 public:
  Staging() {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/talaria-sync-XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~Staging() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class SyncedEnvironment final : public env::Environment {
 public:
  SyncedEnvironment(std::shared_ptr<env::Environment> remote,
                    std::shared_ptr<const safety::Workspace> workspace, std::string local_root,
                    std::string remote_dir)
      : remote_(std::move(remote)),
        workspace_(std::move(workspace)),
        local_root_(std::move(local_root)),
        remote_dir_(std::move(remote_dir)) {}

  Status Open() {
    std::lock_guard lock(mu_);
    const int64_t started = NowEpochSeconds();
    TALARIA_RETURN_IF_ERROR(sandboxes::PushTree(*remote_, local_root_, remote_dir_, {}));
    pushed_at_ = started;
    env::CommandOptions enter;
    auto entered = remote_->Run("cd " + ShellQuote(remote_dir_), enter);
    if (!entered) return entered.error();
    return Status::Ok();
  }

  std::string_view kind() const override { return remote_->kind(); }
  bool RunsScriptsRemotely() const override { return remote_->RunsScriptsRemotely(); }
  std::string cwd() const override { return remote_->cwd(); }

  Result<env::CommandOutcome> Run(std::string_view command,
                                  const env::CommandOptions& options) override {
    std::lock_guard lock(mu_);
    std::string notes = PushLocalChanges();
    auto outcome = TALARIA_TRY(remote_->Run(command, options));
    notes += PullChanges();
    if (!notes.empty()) outcome.output += notes;
    return outcome;
  }

  Result<StartedProcess> Start(std::string_view command, const env::CommandOptions& options,
                               const StartOptions& start) override {
    {
      std::lock_guard lock(mu_);
      (void)PushLocalChanges();
    }
    return remote_->Start(command, options, start);
  }

 private:
  // The files changed here since the last exchange began (whole seconds: a file may go twice,
  // which is harmless; none is missed).
  std::string PushLocalChanges() {
    const int64_t started = NowEpochSeconds();
    sandboxes::SyncOptions sync;
    sync.newer_than_epoch_s = pushed_at_;
    if (Status pushed = sandboxes::PushTree(*remote_, local_root_, remote_dir_, sync);
        !pushed.ok()) {
      return "\n[sync: local changes did not reach the sandbox: " + pushed.message() + "]\n";
    }
    pushed_at_ = started;
    return "";
  }

  // The files the command changed, staged locally, then written through the workspace.
  std::string PullChanges() {
    const int64_t started = NowEpochSeconds();
    Staging staging;
    if (staging.path().empty()) return "\n[sync: no local staging directory]\n";
    auto changed = sandboxes::PullChanged(*remote_, remote_dir_, staging.path(), {});
    if (!changed) {
      return "\n[sync: changes did not come back from the sandbox: " + changed.error().message() +
             "]\n";
    }
    std::string notes;
    for (const std::string& rel : *changed) {
      auto content = ReadWholeFile(staging.path() + "/" + rel);
      Status written = content ? Status::Ok() : content.error();
      if (written.ok()) {
        auto w = workspace_->WriteAtomic(local_root_ + "/" + rel, *content);
        if (!w) written = w.error();
      }
      if (!written.ok())
        notes += "\n[sync: " + rel + " not written back: " + written.message() + "]";
    }
    // Local changes from here on go in with the next command (what was just written back may
    // go too: the same bytes).
    pushed_at_ = started;
    return notes.empty() ? notes : notes + "\n";
  }

  const std::shared_ptr<env::Environment> remote_;
  const std::shared_ptr<const safety::Workspace> workspace_;
  const std::string local_root_;
  const std::string remote_dir_;
  std::mutex mu_;
  int64_t pushed_at_ = 0;  // Guarded by mu_.
};

}  // namespace

Result<std::shared_ptr<env::Environment>> WithWorkspaceSync(
    std::shared_ptr<env::Environment> remote, std::shared_ptr<const safety::Workspace> workspace,
    std::string local_root, std::string remote_dir) {
  auto synced = std::make_shared<SyncedEnvironment>(std::move(remote), std::move(workspace),
                                                    std::move(local_root), std::move(remote_dir));
  TALARIA_RETURN_IF_ERROR(synced->Open());
  return std::shared_ptr<env::Environment>(std::move(synced));
}

}  // namespace talaria::tools
