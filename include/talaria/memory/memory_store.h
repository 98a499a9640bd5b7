// MemoryStore: the `memory` tool's durable notes — $TALARIA_HOME/memories/MEMORY.md (target
// `memory`, the agent's own notes) and USER.md (target `user`, who the user is). A file holds
// entries separated by "\n§\n"; its limit counts characters (code points) over the whole file.
//
// Every write takes an exclusive flock on a sibling lock file, re-reads the file under it,
// refuses (with a backup and a remedy) a file edited by hand that no longer round-trips, applies
// the change to what is on disk now and replaces the file atomically (temp file beside it,
// fsync, rename, fsync of the directory). Two processes writing at once lose nothing, and an
// edit made by hand between a session's start and its write is never clobbered.
//
// Results are the memory tool's JSON (the original's shapes): success
//   {success, done, target, entries, usage: "P% — cur/limit chars", entry_count, message, note}
// and failure {success: false, error, usage: "cur/limit", current_entries?, matches?}.
// Thread-safety: thread-safe (no mutable members; the file lock serialises writers, also
// across processes).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/core/config.h"

namespace talaria::memory {

enum class Target : unsigned char { kMemory, kUser };

// "memory" / "user".
std::string_view TargetName(Target target);
std::optional<Target> ParseTarget(std::string_view name);
// "MEMORY.md" / "USER.md".
std::string_view TargetFileName(Target target);

inline constexpr size_t kDefaultMemoryCharLimit = 2200;
inline constexpr size_t kDefaultUserCharLimit = 1375;
inline constexpr std::string_view kEntryDelimiter = "\n\xC2\xA7\n";  // "\n§\n"

struct MemorySettings {
  std::string dir;  // empty: $TALARIA_HOME/memories
  size_t memory_char_limit = kDefaultMemoryCharLimit;
  size_t user_char_limit = kDefaultUserCharLimit;
  // Every write waits for the person (`talaria memory approve <id>`) instead of landing.
  bool write_approval = false;
};

// config.yaml's `memory:` section:
//   memory:
//     memory_char_limit: 2200   # MEMORY.md, characters over the whole file
//     user_char_limit: 1375     # USER.md
//     write_approval: false     # true: writes are staged until the person approves them
// Errors: InvalidArgument naming the bad key.
Result<MemorySettings> MemorySettingsFromConfig(const Config& config);

enum class Action : unsigned char { kAdd, kReplace, kRemove };

struct Operation {
  Action action = Action::kAdd;
  std::string content;   // add, replace
  std::string old_text;  // replace, remove: a substring of the entry
};

// What a write did, for the caller to pass on.
struct WriteOutcome {
  // The tool result (see above); never null. Held by pointer: public headers see only
  // json_fwd.hpp.
  std::shared_ptr<Json> result;
  bool ok = false;
  // Non-empty when the person should hear about it even though only the model reads the
  // result: a store too full for the addition, a file that needs fixing by hand, content
  // refused by the threat scan. One line.
  std::string notice;
};

// A write staged for the person's approval: $TALARIA_HOME/memories/pending/<id>.json.
struct PendingWrite {
  std::string id;  // 8 hex digits
  Target target = Target::kMemory;
  std::vector<Operation> operations;
  bool batch = false;
  int64_t created_at_ms = 0;
};

class MemoryStore {
 public:
  explicit MemoryStore(MemorySettings settings);

  const MemorySettings& settings() const { return settings_; }
  std::string PathOf(Target target) const;
  size_t LimitOf(Target target) const;

  // The memory tool's call: {target, action, content?, old_text?} or {target, operations: [...]}.
  // Arguments it cannot use are an error result, never a crash. A valid write is staged instead
  // of applied when settings().write_approval is on, and a replace or remove is staged when
  // `unattended` (nobody watches the session: an unattended edit once deleted a user's rules);
  // staged: {success: true, staged: true, pending_id, target, message}.
  WriteOutcome Call(const Json& args, bool unattended = false) const;

  // The staged writes, oldest first (unreadable files skipped). Errors: Unavailable.
  Result<std::vector<PendingWrite>> Pending() const;
  // Applies a staged write now (as Apply) and forgets it once applied; a refused one is kept so
  // the person can reject it. NotFound result for an unknown id.
  WriteOutcome Approve(std::string_view id) const;
  // Forgets a staged write. NotFound for an unknown id.
  Status Reject(std::string_view id) const;

  // The changes, in order, all or nothing; the limit is checked on the end result (and, for a
  // lone replace, on the replacement). `batch`: the operations form (messages say "operation N").
  WriteOutcome Apply(Target target, const std::vector<Operation>& operations,
                     bool batch = false) const;

  // The entries on disk now (under the lock, so never a half-written file). A missing file is
  // no entries. Errors: Unavailable/PermissionDenied when the file cannot be read.
  Result<std::vector<std::string>> Read(Target target) const;

  // The frozen block for the system prompt: MEMORY then USER PROFILE, each
  //   <46 x '═'>\n<header> [P% — cur/limit chars]\n<46 x '═'>\n<entries joined by "\n§\n">
  // duplicates dropped, an entry matching the threat scan shown as
  // "[BLOCKED: <file> entry contained threat pattern(s): <ids>]" (the file keeps it raw).
  // Empty targets have no block; "" when both are empty or unreadable.
  std::string Snapshot() const;

  // The file as it is on disk ("" when missing). Errors: as Read.
  Result<std::string> ReadRaw(Target target) const;

  // The person's edit (`talaria memory edit`): under the lock, `text` replaces the file when the
  // file still holds `expected` (what the editor was given) and `text` passes the drift check;
  // it is written as its entries joined. Errors: FailedPrecondition when the file changed
  // meanwhile (a session wrote to it) or saying what is wrong with `text`; Unavailable/
  // PermissionDenied for the file itself.
  Status ReplaceWhole(Target target, std::string_view expected, std::string_view text) const;

  // The drift check alone (after `talaria memory edit`): Ok when the file splits and joins back
  // to itself and no entry is over the limit; else FailedPrecondition saying what is wrong.
  Status Check(Target target) const;

 private:
  WriteOutcome ApplyOrStage(Target target, const std::vector<Operation>& operations, bool batch,
                            bool unattended) const;
  WriteOutcome Stage(Target target, const std::vector<Operation>& operations, bool batch) const;

  MemorySettings settings_;
};

}  // namespace talaria::memory
