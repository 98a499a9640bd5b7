// MemoryStore: a write is validate → lock → re-read → drift check → apply → atomic replace.
// Everything the model is told comes back as the tool's JSON; what the person must hear comes
// back as the outcome's notice.
#include "talaria/memory/memory_store.h"

#include <nlohmann/json.hpp>

#include "memory/entries.h"
#include "memory/masked_entries.h"
#include "memory/memory_apply.h"
#include "memory/memory_file.h"
#include "talaria/base/paths.h"
#include "talaria/memory/operation_json.h"
#include "talaria/memory/threat_scan.h"

namespace talaria::memory {
namespace {

constexpr std::string_view kSavedNote =
    "Write saved. This update is complete \xE2\x80\x94 do not repeat it.";
constexpr size_t kMaxOperations = 100;

std::string_view Label(Target t) { return t == Target::kUser ? "User profile" : "Memory"; }

// What the model is shown of the entries (threat-matching ones masked).
Json ShownEntries(const std::vector<std::string>& entries, Target target) {
  Json out = Json::array();
  for (std::string& e : MaskThreats(entries, TargetFileName(target))) out.push_back(std::move(e));
  return out;
}

WriteOutcome Failure(Target target, std::string error, size_t chars, size_t limit) {
  WriteOutcome o;
  o.result = std::make_shared<Json>(Json::object());
  (*o.result)["success"] = false;
  (*o.result)["target"] = std::string(TargetName(target));
  (*o.result)["error"] = std::move(error);
  (*o.result)["usage"] = UsageShort(chars, limit);
  return o;
}

WriteOutcome ArgumentError(std::string error) {
  WriteOutcome o;
  o.result = std::make_shared<Json>(Json{{"success", false}, {"error", std::move(error)}});
  return o;
}

}  // namespace

std::string_view TargetName(Target target) { return target == Target::kUser ? "user" : "memory"; }

std::optional<Target> ParseTarget(std::string_view name) {
  if (name == "memory") return Target::kMemory;
  if (name == "user") return Target::kUser;
  return std::nullopt;
}

std::string_view TargetFileName(Target target) {
  return target == Target::kUser ? "USER.md" : "MEMORY.md";
}

MemoryStore::MemoryStore(MemorySettings settings) : settings_(std::move(settings)) {
  if (settings_.dir.empty()) settings_.dir = TalariaHome() + "/memories";
}

std::string MemoryStore::PathOf(Target target) const {
  return settings_.dir + "/" + std::string(TargetFileName(target));
}

size_t MemoryStore::LimitOf(Target target) const {
  return target == Target::kUser ? settings_.user_char_limit : settings_.memory_char_limit;
}

WriteOutcome MemoryStore::Call(const Json& args, bool unattended) const {
  if (!args.is_object()) return ArgumentError("arguments must be an object");
  std::optional<Target> target;
  if (auto t = args.find("target"); t != args.end() && t->is_string()) {
    target = ParseTarget(t->get_ref<const std::string&>());
  }
  if (!target) return ArgumentError("target must be \"memory\" or \"user\"");

  // A call that cannot be understood still reports the usage, so the model sees where it stands.
  auto refuse = [&](std::string error) {
    auto entries = Read(*target);
    return Failure(*target, std::move(error), entries ? JoinedChars(*entries) : 0,
                   LimitOf(*target));
  };
  auto ops = args.find("operations");
  const bool has_ops = ops != args.end() && !ops->is_null() && !(ops->is_array() && ops->empty());
  const bool has_action = args.contains("action") && !args["action"].is_null();
  if (has_ops && has_action) {
    return refuse(
        "pass either action (one change) or operations (a batch), not both; for a batch put "
        "every change, this one too, into operations");
  }
  std::vector<Operation> operations;
  if (has_ops) {
    if (!ops->is_array()) return refuse("operations must be an array");
    if (ops->size() > kMaxOperations) {
      return refuse("operations has " + std::to_string(ops->size()) + " items; at most " +
                    std::to_string(kMaxOperations));
    }
    for (size_t i = 0; i < ops->size(); ++i) {
      auto op = ParseOperation((*ops)[i]);
      if (!op) return refuse("operation " + std::to_string(i + 1) + ": " + op.error().message());
      operations.push_back(std::move(*op));
    }
    return ApplyOrStage(*target, operations, /*batch=*/true, unattended);
  }
  auto op = ParseOperation(args);
  if (!op) return refuse(op.error().message());
  operations.push_back(std::move(*op));
  return ApplyOrStage(*target, operations, /*batch=*/false, unattended);
}

WriteOutcome MemoryStore::Apply(Target target, const std::vector<Operation>& operations,
                                bool batch) const {
  const std::string path = PathOf(target);
  const std::string file(TargetFileName(target));
  const size_t limit = LimitOf(target);

  if (auto valid = ValidateOperations(operations, batch); !valid) {
    const Refusal& r = valid.error();
    auto entries = Read(target);
    const std::vector<std::string> current = entries ? *entries : std::vector<std::string>();
    WriteOutcome o = Failure(target, r.error, JoinedChars(current), limit);
    if (r.show_entries) (*o.result)["current_entries"] = ShownEntries(current, target);
    if (r.kind == RefusalKind::kThreat) {
      o.notice =
          "memory: a write to " + file + " was refused by the threat scan; nothing was saved";
    }
    return o;
  }

  auto lock = FileLock::Acquire(path);
  if (!lock) {
    WriteOutcome o = Failure(target, "memory is unavailable: " + lock.error().message(), 0, limit);
    o.notice = "memory: " + file + " could not be locked: " + lock.error().message();
    return o;
  }
  auto raw = ReadMemoryFile(path);
  if (!raw) {
    WriteOutcome o = Failure(target, "memory is unavailable: " + raw.error().message(), 0, limit);
    o.notice = "memory: " + file + " could not be read: " + raw.error().message();
    return o;
  }
  if (std::string why = DriftReason(*raw, limit); !why.empty()) {
    auto backup = BackUpMemoryFile(path, *raw);
    const std::string copy =
        backup ? "A copy is at " + *backup + ". "
               : "(No backup could be written: " + backup.error().message() + ") ";
    WriteOutcome o =
        Failure(target,
                file + " was edited outside talaria and cannot be rewritten safely: " + why +
                    ". Nothing was written. " + copy +
                    "Tell the user: they can fix it with `talaria memory edit --target " +
                    std::string(TargetName(target)) +
                    "` (entries separated by a line holding only \xC2\xA7, the whole file under " +
                    std::to_string(limit) + " characters); then the write can be retried.",
                CountChars(*raw), limit);
    o.notice = "memory: " + file + " needs fixing by hand (" + why +
               "); writes are refused until `talaria memory edit --target " +
               std::string(TargetName(target)) + "` fixes it" +
               (backup ? "; a copy is at " + *backup : std::string());
    return o;
  }

  std::vector<std::string> entries = SplitEntries(*raw);
  const size_t before = JoinedChars(entries);
  auto applied = ApplyOperations(entries, operations, limit, batch, Label(target));
  if (!applied) {
    const Refusal& r = applied.error();
    WriteOutcome o = Failure(target, r.error, before, limit);
    if (r.show_entries || r.kind == RefusalKind::kFull) {
      (*o.result)["current_entries"] = ShownEntries(entries, target);
    }
    if (!r.matches.is_null()) (*o.result)["matches"] = r.matches;
    if (r.kind == RefusalKind::kFull) {
      o.notice = "memory: " + file + " is full (" + UsageShort(before, limit) +
                 " chars); a write was refused and the model was asked to consolidate";
    }
    return o;
  }
  if (applied->changed) {
    std::string text = JoinEntries(applied->entries);
    if (!text.empty()) text += '\n';
    if (Status s = ReplaceMemoryFile(path, text); !s.ok()) {
      WriteOutcome o = Failure(target, "nothing was saved: " + s.message(), before, limit);
      o.notice = "memory: " + file + " could not be written: " + s.message();
      return o;
    }
  }
  WriteOutcome o;
  o.ok = true;
  const size_t after = JoinedChars(applied->entries);
  o.result = std::make_shared<Json>(Json::object());
  (*o.result)["success"] = true;
  (*o.result)["done"] = true;
  (*o.result)["target"] = std::string(TargetName(target));
  (*o.result)["entries"] = ShownEntries(applied->entries, target);
  (*o.result)["usage"] = UsageText(after, limit);
  (*o.result)["entry_count"] = applied->entries.size();
  (*o.result)["message"] = applied->message;
  (*o.result)["note"] = std::string(kSavedNote);
  return o;
}

// Readers take no lock: writers replace the file by rename, so a read sees one whole version.
Result<std::vector<std::string>> MemoryStore::Read(Target target) const {
  std::string raw = TALARIA_TRY(ReadMemoryFile(PathOf(target)));
  return SplitEntries(raw);
}

Result<std::string> MemoryStore::ReadRaw(Target target) const {
  return ReadMemoryFile(PathOf(target));
}

Status MemoryStore::ReplaceWhole(Target target, std::string_view expected,
                                 std::string_view text) const {
  const std::string path = PathOf(target);
  const std::string file(TargetFileName(target));
  if (std::string why = DriftReason(text, LimitOf(target)); !why.empty()) {
    return FailedPreconditionError("the edited " + file + " cannot be used: " + why);
  }
  const std::vector<std::string> entries = SplitEntries(text);
  if (JoinedChars(entries) > LimitOf(target)) {
    return FailedPreconditionError(
        "the edited " + file + " has " + std::to_string(JoinedChars(entries)) +
        " characters, more than its limit of " + std::to_string(LimitOf(target)));
  }
  auto lock = TALARIA_TRY(FileLock::Acquire(path));
  (void)lock;
  std::string now = TALARIA_TRY(ReadMemoryFile(path));
  if (now != expected) {
    return FailedPreconditionError(file +
                                   " was changed by a session while it was being edited; the "
                                   "edit was not saved");
  }
  std::string joined = JoinEntries(entries);
  if (!joined.empty()) joined += '\n';
  return ReplaceMemoryFile(path, joined);
}

Status MemoryStore::Check(Target target) const {
  std::string raw = TALARIA_TRY(ReadMemoryFile(PathOf(target)));
  if (std::string why = DriftReason(raw, LimitOf(target)); !why.empty()) {
    return FailedPreconditionError(std::string(TargetFileName(target)) + ": " + why);
  }
  return Status::Ok();
}

}  // namespace talaria::memory
