// talaria memory show|edit|add|remove [--target memory|user] and pending|approve|reject: the
// agent's memory files and its writes staged for approval, for the person. Writes go through the
// same store as the tool (lock, drift check, atomic replace), so a running session and the person
// never overwrite each other. `edit` gives $VISUAL/$EDITOR a copy, then saves it only if the file
// did not change meanwhile and the edit still splits into entries within the limit.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "talaria/base/file_io.h"
#include "talaria/base/unique_fd.h"
#include "talaria/memory/memory_store.h"
#include "talaria/memory/operation_json.h"
#include "talaria/memory/threat_scan.h"

extern char** environ;

namespace talaria::cli {
namespace {

using memory::MemoryStore;
using memory::Target;

std::string MemoryUsage(const MemoryStore& store, Target target, size_t chars) {
  const size_t limit = store.LimitOf(target);
  return std::to_string(chars) + "/" + std::to_string(limit) + " chars (" +
         std::to_string(limit == 0 ? 100 : chars * 100 / limit) + "%)";
}

size_t Chars(std::string_view text) {
  size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

size_t JoinedChars(const std::vector<std::string>& entries) {
  size_t n = entries.empty() ? 0 : 3 * (entries.size() - 1);
  for (const std::string& e : entries) n += Chars(e);
  return n;
}

std::string Ids(const std::vector<std::string>& ids) {
  std::string out;
  for (const std::string& id : ids) out += (out.empty() ? "" : ", ") + id;
  return out;
}

int ShowMemory(const MemoryStore& store, const std::vector<Target>& targets, bool json) {
  Json out = Json::object();
  int code = kExitOk;
  for (Target t : targets) {
    auto entries = store.Read(t);
    if (!entries) {
      std::fprintf(stderr, "talaria memory: %s\n", entries.error().message().c_str());
      code = kExitToolError;
      continue;
    }
    const Status check = store.Check(t);
    if (json) {
      Json entry_list = Json::array();
      for (const std::string& e : *entries) {
        Json item{{"text", e}};
        if (auto ids = memory::ScanThreats(e); !ids.empty()) item["blocked"] = ids;
        entry_list.push_back(item);
      }
      Json section{{"path", store.PathOf(t)},
                   {"chars", JoinedChars(*entries)},
                   {"limit", store.LimitOf(t)},
                   {"entries", entry_list}};
      if (!check.ok()) section["problem"] = check.message();
      out[std::string(memory::TargetName(t))] = section;
      continue;
    }
    std::printf("%s  %s  %s\n", std::string(memory::TargetFileName(t)).c_str(),
                store.PathOf(t).c_str(), MemoryUsage(store, t, JoinedChars(*entries)).c_str());
    if (!check.ok()) {
      std::printf(
          "  ! %s: the agent cannot write to it until it is fixed (talaria memory edit "
          "--target %s)\n",
          check.message().c_str(), std::string(memory::TargetName(t)).c_str());
    }
    if (entries->empty()) std::printf("  (no entries)\n");
    for (size_t i = 0; i < entries->size(); ++i) {
      const std::string& e = (*entries)[i];
      std::string shown;
      for (const char c : e) {
        shown += c;
        if (c == '\n') shown += "     ";
      }
      std::printf("  %2zu. %s\n", i + 1, shown.c_str());
      if (auto ids = memory::ScanThreats(e); !ids.empty()) {
        std::printf("      (blocked in the agent's prompt: %s)\n", Ids(ids).c_str());
      }
    }
    std::printf("\n");
  }
  if (json) std::printf("%s\n", out.dump(2).c_str());
  return code;
}

int ReportWrite(const memory::WriteOutcome& o, Target target) {
  const Json& r = *o.result;
  if (!o.ok) {
    std::fprintf(stderr, "talaria memory: %s\n", r.value("error", std::string("failed")).c_str());
    if (r.contains("matches")) {
      for (const auto& m : r["matches"]) {
        std::fprintf(stderr, "  - %s\n", m.get<std::string>().c_str());
      }
    }
    return kExitToolError;
  }
  std::printf("%s %s: %s\n", r.value("message", std::string()).c_str(),
              std::string(memory::TargetFileName(target)).c_str(),
              r.value("usage", std::string()).c_str());
  return kExitOk;
}

int Write(const MemoryStore& store, Target target, memory::Operation op) {
  return ReportWrite(store.Apply(target, {std::move(op)}), target);
}

// The writes staged for approval (memory.write_approval, or a subagent's replace/remove).
int ListPending(const MemoryStore& store, bool json) {
  auto pending = store.Pending();
  if (!pending) {
    std::fprintf(stderr, "talaria memory: %s\n", pending.error().message().c_str());
    return kExitToolError;
  }
  Json out = Json::array();
  for (const memory::PendingWrite& w : *pending) {
    Json ops = Json::array();
    // The tool's own argument shape ({action, content?, old_text?}), as the write was staged.
    for (const memory::Operation& op : w.operations) ops.push_back(memory::OperationJson(op));
    if (json) {
      out.push_back(Json{{"id", w.id},
                         {"target", std::string(memory::TargetName(w.target))},
                         {"created_at_ms", w.created_at_ms},
                         {"operations", ops}});
      continue;
    }
    std::printf("%s  %s\n", w.id.c_str(), std::string(memory::TargetFileName(w.target)).c_str());
    for (const Json& op : ops) {
      const std::string action = op.value("action", "");
      const std::string old_text = op.value("old_text", ""), content = op.value("content", "");
      std::printf("    %s", action.c_str());
      if (!old_text.empty()) std::printf(" [%s]", old_text.c_str());
      if (!content.empty()) std::printf(" -> %s", content.c_str());
      std::printf("\n");
    }
  }
  if (json) {
    std::printf("%s\n", out.dump(2).c_str());
  } else if (pending->empty()) {
    std::printf("No memory writes wait for approval.\n");
  }
  return kExitOk;
}

int Approve(const MemoryStore& store, const std::string& id) {
  auto pending = store.Pending();
  Target target = Target::kMemory;
  if (pending) {
    for (const memory::PendingWrite& w : *pending) {
      if (w.id == id) target = w.target;
    }
  }
  return ReportWrite(store.Approve(id), target);
}

// $VISUAL, else $EDITOR, else vi, run through the shell (so "code --wait" works) on `path`.
int RunEditor(const std::string& path) {
  const char* editor = std::getenv("VISUAL");
  if (editor == nullptr || *editor == '\0') editor = std::getenv("EDITOR");
  std::string command = editor != nullptr && *editor != '\0' ? editor : "vi";
  command += " \"$1\"";
  std::string sh = "/bin/sh";
  std::string dash_c = "-c";
  std::string name = "talaria-memory-edit";
  std::string file = path;
  char* argv[] = {sh.data(), dash_c.data(), command.data(), name.data(), file.data(), nullptr};
  pid_t pid = -1;
  if (::posix_spawn(&pid, sh.c_str(), nullptr, nullptr, argv, environ) != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int Edit(const MemoryStore& store, Target target) {
  auto before = store.ReadRaw(target);
  if (!before) {
    std::fprintf(stderr, "talaria memory: %s\n", before.error().message().c_str());
    return kExitToolError;
  }
  const char* tmpdir = std::getenv("TMPDIR");
  std::string copy = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") +
                     "/talaria-" + std::string(memory::TargetFileName(target)) + ".XXXXXX";
  {
    UniqueFd fd(::mkstemp(copy.data()));
    if (!fd || !WriteAll(fd.get(), *before).ok()) {
      std::fprintf(stderr, "talaria memory: cannot make a copy to edit in %s\n", copy.c_str());
      return kExitToolError;
    }
  }
  if (const int rc = RunEditor(copy); rc != 0) {
    std::fprintf(stderr, "talaria memory: the editor failed (status %d); nothing was saved\n", rc);
    ::unlink(copy.c_str());
    return kExitToolError;
  }
  auto edited = ReadWholeFile(copy);
  if (!edited) {
    std::fprintf(stderr, "talaria memory: %s\n", edited.error().message().c_str());
    return kExitToolError;
  }
  if (*edited == *before) {
    ::unlink(copy.c_str());
    std::printf("No changes.\n");
    return kExitOk;
  }
  if (Status s = store.ReplaceWhole(target, *before, *edited); !s.ok()) {
    std::fprintf(stderr,
                 "talaria memory: %s\nYour edit is kept in %s; entries are separated by a line "
                 "holding only \xC2\xA7.\n",
                 s.message().c_str(), copy.c_str());
    return kExitToolError;
  }
  ::unlink(copy.c_str());
  auto entries = store.Read(target);
  std::printf("Saved %s: %zu entries, %s\n", std::string(memory::TargetFileName(target)).c_str(),
              entries ? entries->size() : 0,
              MemoryUsage(store, target, entries ? JoinedChars(*entries) : 0).c_str());
  return kExitOk;
}

}  // namespace

int RunMemoryCommand(const Config& config, const MemoryCommandOptions& options) {
  auto settings = memory::MemorySettingsFromConfig(config);
  if (!settings) {
    std::fprintf(stderr, "talaria memory: %s\n", settings.error().message().c_str());
    return kExitUsage;
  }
  const MemoryStore store(*settings);
  std::optional<Target> target = Target::kMemory;
  if (!options.target.empty()) target = memory::ParseTarget(options.target);
  if (!target) {
    std::fprintf(stderr, "talaria memory: --target must be memory or user\n");
    return kExitUsage;
  }
  if (options.action == "show") {
    if (options.target.empty())
      return ShowMemory(store, {Target::kMemory, Target::kUser}, options.json);
    return ShowMemory(store, {*target}, options.json);
  }
  if (options.action == "edit") return Edit(store, *target);
  if (options.action == "pending") return ListPending(store, options.json);
  if (options.action == "approve") return Approve(store, options.text);
  if (options.action == "reject") {
    if (Status s = store.Reject(options.text); !s.ok()) {
      std::fprintf(stderr, "talaria memory: %s\n", s.message().c_str());
      return kExitToolError;
    }
    std::printf("Rejected %s; nothing was saved.\n", options.text.c_str());
    return kExitOk;
  }
  if (options.action == "add") {
    return Write(store, *target, memory::Operation{memory::Action::kAdd, options.text, {}});
  }
  if (options.action == "remove") {
    return Write(store, *target, memory::Operation{memory::Action::kRemove, {}, options.text});
  }
  std::fprintf(stderr, "talaria memory: unknown action %s\n", options.action.c_str());
  return kExitUsage;
}

}  // namespace talaria::cli
