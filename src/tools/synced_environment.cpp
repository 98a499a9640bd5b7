#include "tools/synced_environment.h"

#include <stdlib.h>

#include <filesystem>
#include <mutex>
#include <utility>

#include "talaria/base/file_io.h"
#include "talaria/base/shell_words.h"
#include "talaria/sandboxes/file_sync.h"

namespace talaria::tools {
namespace {

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
    local_seen_ = TALARIA_TRY(sandboxes::ListLocalTree(local_root_, sync_));
    TALARIA_RETURN_IF_ERROR(sandboxes::PushTree(*remote_, local_root_, remote_dir_, sync_));
    remote_seen_ = TALARIA_TRY(sandboxes::ListRemoteTree(*remote_, remote_dir_, sync_));
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
  // The files changed or deleted here since the last exchange; none: no command at all.
  std::string PushLocalChanges() {
    auto now = sandboxes::ListLocalTree(local_root_, sync_);
    if (!now) return "\n[sync: the workspace could not be listed: " + now.error().message() + "]\n";
    const sandboxes::TreeChanges changes = sandboxes::DiffListings(local_seen_, *now);
    if (changes.empty()) return "";
    auto after = sandboxes::PushFiles(*remote_, local_root_, remote_dir_, changes, sync_);
    if (!after) {
      // local_seen_ stays: the same changes go again with the next command.
      return "\n[sync: local changes did not reach the sandbox: " + after.error().message() + "]\n";
    }
    local_seen_ = std::move(*now);
    remote_seen_ = std::move(*after);  // what the command will change is measured from here
    return "";
  }

  // The files the command changed, staged locally, then written through the workspace; the
  // files it deleted, removed through it.
  std::string PullChanges() {
    auto listing = sandboxes::ListRemoteTree(*remote_, remote_dir_, sync_);
    if (!listing) {
      return "\n[sync: changes did not come back from the sandbox: " + listing.error().message() +
             "]\n";
    }
    const sandboxes::TreeChanges changes = sandboxes::DiffListings(remote_seen_, *listing);
    if (changes.empty()) return "";
    std::string notes;
    if (!changes.changed.empty()) {
      Staging staging;
      if (staging.path().empty()) return "\n[sync: no local staging directory]\n";
      if (Status pulled =
              sandboxes::PullFiles(*remote_, remote_dir_, changes.changed, staging.path(), sync_);
          !pulled.ok()) {
        // remote_seen_ stays: the same changes come back with the next command.
        return "\n[sync: changes did not come back from the sandbox: " + pulled.message() + "]\n";
      }
      for (const std::string& rel : changes.changed) {
        auto content = ReadWholeFile(staging.path() + "/" + rel);
        if (!content) continue;  // gone in the sandbox since the listing: its deletion follows
        const std::string local = local_root_ + "/" + rel;
        auto w = workspace_->WriteAtomic(local, *content);
        if (!w) {
          notes += "\n[sync: " + rel + " not written back: " + w.error().message() + "]";
          continue;
        }
        // The local copy is the sandbox's now: not a local change to send back.
        if (auto stamp = sandboxes::LocalFileStamp(local)) local_seen_[rel] = std::move(*stamp);
      }
    }
    for (const std::string& rel : changes.deleted) {
      Status removed = workspace_->Remove(local_root_ + "/" + rel);
      if (removed.ok() || removed.code() == StatusCode::kNotFound) {
        local_seen_.erase(rel);
      } else {
        notes += "\n[sync: " + rel + " not removed here: " + removed.message() + "]";
      }
    }
    remote_seen_ = std::move(*listing);
    return notes.empty() ? notes : notes + "\n";
  }

  const std::shared_ptr<env::Environment> remote_;
  const std::shared_ptr<const safety::Workspace> workspace_;
  const std::string local_root_;
  const std::string remote_dir_;
  const sandboxes::SyncOptions sync_;
  std::mutex mu_;
  sandboxes::TreeListing local_seen_;   // Guarded by mu_. This side at the last exchange.
  sandboxes::TreeListing remote_seen_;  // Guarded by mu_. The sandbox's at the last exchange.
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
