// talaria checkpoints and /rollback over the checkpoint store.
#include "cli/checkpoints_command.h"

#include <unistd.h>

#include <climits>
#include <cstdio>
#include <ctime>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/table.h"
#include "talaria/base/json.h"
#include "talaria/checkpoints/checkpoint_store.h"

namespace talaria::cli {
namespace {

std::string LocalTimeOfSeconds(int64_t seconds) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string CheckpointsCwd() {
  char buf[PATH_MAX];
  return ::getcwd(buf, sizeof buf) != nullptr ? std::string(buf) : std::string("/");
}

Result<std::shared_ptr<checkpoints::CheckpointStore>> OpenStore(Runtime& rt) {
  checkpoints::CheckpointSettings settings =
      TALARIA_TRY(checkpoints::CheckpointSettingsFromConfig(rt.config()));
  return checkpoints::CheckpointStore::Open(std::move(settings));
}

Json InfoJson(const checkpoints::CheckpointInfo& c) {
  return Json{
      {"hash", c.hash},          {"short_hash", c.short_hash},       {"timestamp", c.timestamp},
      {"reason", c.reason},      {"files_changed", c.files_changed}, {"insertions", c.insertions},
      {"deletions", c.deletions}};
}

Json RestoreJson(const checkpoints::RestoreOutcome& r) {
  Json out{{"success", true},
           {"restored_to", r.restored_to},
           {"reason", r.reason},
           {"directory", r.directory}};
  if (!r.file.empty()) out["file"] = r.file;
  out["files_restored"] = r.files_restored.size();
  if (!r.pre_rollback.empty()) out["pre_rollback"] = r.pre_rollback;
  return out;
}

void PrintList(const std::vector<checkpoints::CheckpointInfo>& list, const std::string& dir) {
  if (list.empty()) {
    std::printf("no checkpoints of %s\n", dir.c_str());
    return;
  }
  std::printf("checkpoints of %s (newest first)\n", dir.c_str());
  Table table({"#", "hash", "when", "files", "+/-", "reason"});
  int n = 0;
  for (const auto& c : list) {
    table.AddRow({std::to_string(++n), c.short_hash, LocalTimeOfSeconds(c.timestamp),
                  std::to_string(c.files_changed),
                  "+" + std::to_string(c.insertions) + " -" + std::to_string(c.deletions),
                  c.reason});
  }
  table.Print(stdout);
}

void PrintRestore(const checkpoints::RestoreOutcome& r) {
  std::printf("restored %s to %s (%s): %zu file(s)\n",
              r.file.empty() ? r.directory.c_str() : r.file.c_str(), r.restored_to.c_str(),
              r.reason.c_str(), r.files_restored.size());
  if (!r.pre_rollback.empty()) {
    std::printf("the state before is checkpoint %s (restore it to undo)\n", r.pre_rollback.c_str());
  }
}

int ExitFor(const Status& s) {
  return s.code() == StatusCode::kInvalidArgument ? kExitUsage : kExitToolError;
}

}  // namespace

int RunCheckpoints(Runtime& rt, const CheckpointsOptions& options) {
  auto store = OpenStore(rt);
  if (!store) {
    std::fprintf(stderr, "talaria checkpoints: %s\n", store.error().message().c_str());
    return ExitFor(store.error());
  }
  const std::string dir =
      options.dir.empty() ? checkpoints::ProjectDirFor(CheckpointsCwd(), "") : options.dir;
  auto fail = [](const Status& s) {
    std::fprintf(stderr, "talaria checkpoints: %s\n", s.message().c_str());
    return ExitFor(s);
  };
  if (options.action == "list") {
    auto list = (*store)->List(dir);
    if (!list) return fail(list.error());
    if (options.json) {
      Json out = Json::array();
      for (const auto& c : *list) out.push_back(InfoJson(c));
      std::printf("%s\n", DumpJson(Json{{"directory", dir}, {"checkpoints", out}}).c_str());
    } else {
      PrintList(*list, dir);
    }
    return kExitOk;
  }
  if (options.action == "diff") {
    auto diff = (*store)->Diff(dir, options.hash);
    if (!diff) return fail(diff.error());
    std::fputs(diff->empty() ? "no differences\n" : diff->c_str(), stdout);
    return kExitOk;
  }
  auto restored = (*store)->Restore(
      dir, options.hash, options.file.empty() ? std::nullopt : std::optional(options.file));
  if (!restored) return fail(restored.error());
  if (options.json) {
    std::printf("%s\n", DumpJson(RestoreJson(*restored)).c_str());
  } else {
    PrintRestore(*restored);
  }
  return kExitOk;
}

void RunRollback(Runtime& rt, const std::string& dir, const std::string& args) {
  auto store = OpenStore(rt);
  if (!store) {
    std::printf("· %s\n", store.error().message().c_str());
    return;
  }
  auto list = (*store)->List(dir);
  if (!list) {
    std::printf("· %s\n", list.error().message().c_str());
    return;
  }
  std::istringstream in(args);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  if (words.empty()) {
    PrintList(*list, dir);
    if (!list->empty()) std::printf("/rollback N [FILE] restores one; /rollback diff N shows it\n");
    return;
  }
  const bool diff = words[0] == "diff";
  if (diff) words.erase(words.begin());
  if (words.empty()) {
    std::printf("· /rollback diff N|HASH\n");
    return;
  }
  // N (1 = newest) from the list, else a hash.
  std::string hash = words[0];
  if (words[0].size() <= 3 && words[0].find_first_not_of("0123456789") == std::string::npos) {
    const size_t n = std::stoul(words[0]);
    if (n < 1 || n > list->size()) {
      std::printf("· no checkpoint %zu (there are %zu)\n", n, list->size());
      return;
    }
    hash = (*list)[n - 1].hash;
  }
  if (diff) {
    auto text = (*store)->Diff(dir, hash);
    if (!text) {
      std::printf("· %s\n", text.error().message().c_str());
    } else {
      std::fputs(text->empty() ? "no differences\n" : text->c_str(), stdout);
    }
    return;
  }
  auto restored =
      (*store)->Restore(dir, hash, words.size() > 1 ? std::optional(words[1]) : std::nullopt);
  if (!restored) {
    std::printf("· %s\n", restored.error().message().c_str());
    return;
  }
  PrintRestore(*restored);
}

}  // namespace talaria::cli
