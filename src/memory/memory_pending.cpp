// Staged memory writes (MemoryStore::Call with write_approval or unattended, Pending, Approve,
// Reject): a write the person has to approve is kept whole in pending/<id>.json beside the
// files, validated first (so a staged write was a valid one), and replayed through Apply on
// approval, which takes the lock and re-checks everything against the files as they are then.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include <nlohmann/json.hpp>

#include "memory/memory_apply.h"
#include "talaria/base/file_io.h"
#include "talaria/base/random.h"
#include "talaria/memory/memory_store.h"
#include "talaria/memory/operation_json.h"

namespace talaria::memory {
namespace {

bool ValidId(std::string_view id) {
  return id.size() == 8 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<PendingWrite> ParsePending(const std::string& text, std::string_view id) {
  auto json = TALARIA_TRY(ParseJson(text));
  if (!json.is_object()) return Err(InvalidArgumentError("not an object"));
  PendingWrite w;
  w.id = std::string(id);
  auto target = ParseTarget(JsonStringField(json, "target"));
  if (!target) return Err(InvalidArgumentError("bad target"));
  w.target = *target;
  w.batch = json.value("batch", false);
  w.created_at_ms = json.value("created_at_ms", int64_t{0});
  const auto ops = json.find("operations");
  if (ops == json.end() || !ops->is_array() || ops->empty()) {
    return Err(InvalidArgumentError("no operations"));
  }
  for (const Json& op : *ops) w.operations.push_back(TALARIA_TRY(ParseOperation(op)));
  return w;
}

}  // namespace

WriteOutcome MemoryStore::ApplyOrStage(Target target, const std::vector<Operation>& operations,
                                       bool batch, bool unattended) const {
  const bool edits = std::any_of(operations.begin(), operations.end(),
                                 [](const Operation& op) { return op.action != Action::kAdd; });
  if (settings_.write_approval || (unattended && edits)) return Stage(target, operations, batch);
  return Apply(target, operations, batch);
}

WriteOutcome MemoryStore::Stage(Target target, const std::vector<Operation>& operations,
                                bool batch) const {
  // A write that would be refused now is refused now (Apply says why), not staged.
  if (!ValidateOperations(operations, batch)) return Apply(target, operations, batch);
  const std::string dir = settings_.dir + "/pending";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string id = RandomHex(4);
  Json ops = Json::array();
  for (const Operation& op : operations) ops.push_back(OperationJson(op));
  const Json record{{"id", id},
                    {"target", std::string(TargetName(target))},
                    {"batch", batch},
                    {"created_at_ms", NowMs()},
                    {"operations", std::move(ops)}};
  WriteOutcome o;
  o.result = std::make_shared<Json>(Json::object());
  if (Status s = WriteFileAtomic(dir + "/" + id + ".json", record.dump(2)); !s.ok()) {
    (*o.result)["success"] = false;
    (*o.result)["error"] = "the write could not be staged for approval: " + s.message();
    return o;
  }
  o.ok = true;
  (*o.result)["success"] = true;
  (*o.result)["staged"] = true;
  (*o.result)["pending_id"] = id;
  (*o.result)["target"] = std::string(TargetName(target));
  (*o.result)["message"] =
      "Staged for the user's approval; nothing is saved until they approve it. Do not repeat "
      "the write.";
  o.notice = "memory: a write to " + std::string(TargetFileName(target)) +
             " waits for your approval: talaria memory approve " + id + " (or reject " + id +
             "; talaria memory pending lists them)";
  return o;
}

Result<std::vector<PendingWrite>> MemoryStore::Pending() const {
  std::vector<PendingWrite> out;
  const std::filesystem::path dir = settings_.dir + "/pending";
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return out;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() != 13 || !name.ends_with(".json") || !ValidId(name.substr(0, 8))) continue;
    auto text = ReadWholeFile(it->path().string());
    if (!text) continue;
    auto write = ParsePending(*text, name.substr(0, 8));
    if (write) out.push_back(std::move(*write));
  }
  if (ec) return Err(UnavailableError("cannot list " + dir.string() + ": " + ec.message()));
  std::sort(out.begin(), out.end(), [](const PendingWrite& a, const PendingWrite& b) {
    return a.created_at_ms != b.created_at_ms ? a.created_at_ms < b.created_at_ms : a.id < b.id;
  });
  return out;
}

WriteOutcome MemoryStore::Approve(std::string_view id) const {
  auto missing = [&] {
    WriteOutcome o;
    o.result = std::make_shared<Json>(
        Json{{"success", false}, {"error", "no staged memory write " + std::string(id)}});
    return o;
  };
  if (!ValidId(id)) return missing();
  const std::string path = settings_.dir + "/pending/" + std::string(id) + ".json";
  auto text = ReadWholeFile(path);
  if (!text) return missing();
  auto write = ParsePending(*text, id);
  if (!write) {
    WriteOutcome o;
    o.result = std::make_shared<Json>(
        Json{{"success", false},
             {"error", "staged write " + std::string(id) +
                           " is unreadable: " + write.error().message() + " (reject it)"}});
    return o;
  }
  WriteOutcome o = Apply(write->target, write->operations, write->batch);
  if (o.ok) std::remove(path.c_str());
  return o;
}

Status MemoryStore::Reject(std::string_view id) const {
  const std::string path = settings_.dir + "/pending/" + std::string(id) + ".json";
  if (!ValidId(id) || std::remove(path.c_str()) != 0) {
    return NotFoundError("no staged memory write " + std::string(id));
  }
  return Status::Ok();
}

}  // namespace talaria::memory
