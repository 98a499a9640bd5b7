// Registry: every tool talaria knows, from built-ins to plugins and MCP servers.
//
// Writers serialize on a mutex and publish a new immutable RegistrySnapshot with a bumped
// generation; readers load the current snapshot atomically and never wait for a writer.
// Shadowing rules follow the original: a name clash across toolsets is rejected (except
// mcp-* over mcp-*), re-registration in the same toolset replaces the entry.
// Thread-safety: thread-safe. Listeners are called after a change is published, outside the
// registry's lock, on the writer's thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "talaria/base/clock.h"
#include "talaria/base/status.h"
#include "talaria/core/tool_entry.h"

namespace talaria {

// A name with its StringHash, so one hash picks the shard and the bucket within it.
struct HashedName {
  std::string_view name;
  size_t hash;
};

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  size_t operator()(const HashedName& h) const noexcept { return h.hash; }
};

struct StringEqual {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const noexcept { return a == b; }
  bool operator()(std::string_view a, const HashedName& b) const noexcept { return a == b.name; }
  bool operator()(const HashedName& a, std::string_view b) const noexcept { return a.name == b; }
};

// One published state of the registry. Immutable once published.
//
// The tool map is split into shards that snapshots share copy-on-write, so a write copies one
// shard (not the whole map): registering N tools one by one stays O(N * N/kShards), not O(N²).
struct RegistrySnapshot {
  static constexpr size_t kShards = 64;
  // Keys view the entry's own name.
  using Shard = std::unordered_map<std::string_view, std::shared_ptr<const ToolEntry>, StringHash,
                                   StringEqual>;

  RegistrySnapshot();
  // Copies everything but the lazily sorted view (for the next writer's copy).
  explicit RegistrySnapshot(const RegistrySnapshot& other);
  RegistrySnapshot& operator=(const RegistrySnapshot&) = delete;

  static size_t ShardOf(std::string_view name) { return StringHash{}(name) % kShards; }
  static size_t ShardOf(const HashedName& name) { return name.hash % kShards; }

  uint64_t generation = 0;
  size_t size = 0;
  std::array<std::shared_ptr<const Shard>, kShards> shards;
  std::map<std::string, size_t, std::less<>> toolset_sizes;  // toolset -> number of tools
  // toolset -> the first check_fn seen for it (dropped with the toolset's last tool).
  std::map<std::string, std::shared_ptr<const CheckFn>, std::less<>> toolset_checks;
  // alias -> toolset (dropped with the toolset's last tool).
  std::map<std::string, std::string, std::less<>> toolset_aliases;
  // A tool's older name -> the tool (ToolSpec::aliases; dropped with the tool).
  std::map<std::string, std::string, std::less<>> tool_aliases;

  const ToolEntry* Find(std::string_view name) const;
  const std::shared_ptr<const ToolEntry>* FindShared(std::string_view name) const;
  // Every entry, sorted by name byte-wise; built on first use.
  const std::vector<const ToolEntry*>& Sorted() const;
  // Position of the tool named `name` in Sorted(); nullopt when it is not registered. One hash
  // lookup: GetDefinitions maps names to ranks without a second lookup per tool.
  std::optional<uint32_t> RankOfName(std::string_view name) const;
  // The distinct ranks of the registered ones among `names`, ascending.
  std::vector<uint32_t> RanksOf(std::span<const std::string> names) const;

  // The last definitions query and its text (Registry::GetDefinitions). A front end asks for
  // the same tool list every turn; the text is a function of the snapshot (fixed), the names
  // and the availability of the few tools that have a requires_env or check_fn, so only those
  // are judged again on a hit. Immutable once published; replaced whole.
  struct DefinitionsQuery {
    std::vector<std::string> names;     // as asked
    std::vector<uint32_t> conditional;  // ranks among them with requires_env or check_fn
    std::vector<bool> available;        // per `conditional`, when `text` was built
    std::vector<uint32_t> ranks;        // distinct registered ones, ascending
    std::shared_ptr<const std::string> text;
  };
  // Published with atomic<shared_ptr>: readers take the spinlock only for the pointer copy, so
  // concurrent callers compare names in parallel (a mutex held across that would serialize).
  mutable std::atomic<std::shared_ptr<const DefinitionsQuery>> last_definitions;

 private:
  void BuildSortedView() const;
  mutable std::once_flag sorted_once_;
  mutable std::vector<const ToolEntry*> sorted_;
  mutable std::unordered_map<std::string_view, uint32_t, StringHash, std::equal_to<>> rank_;
};

struct RegistryChange {
  uint64_t generation = 0;
  std::vector<std::string> added;    // names registered or replaced
  std::vector<std::string> removed;  // names deregistered
};

struct RegisterOptions {
  // Replace a tool of another toolset (an operator's explicit opt-in, e.g. a trusted plugin).
  bool allow_override = false;
  // Insert-if-absent: AlreadyExists when the name is registered at all, even by the same
  // toolset. Judged under the registry's write lock, so a check-then-register race cannot
  // replace a tool somebody else published meanwhile (plugins use it).
  bool only_new = false;
};

struct Availability {
  bool available = true;
  std::string reason;  // why not, when unavailable
};

// check_fn results are cached this long; a failure within kCheckFailureGrace of the last
// success is treated as transient (reported available, not cached).
inline constexpr std::chrono::seconds kCheckCacheTtl{30};
inline constexpr std::chrono::seconds kCheckFailureGrace{60};

class Registry {
 public:
  // The process registry built-in tools register into (a function-local static).
  static Registry& Global();

  explicit Registry(Clock& clock = SystemClock());
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // InvalidArgument: empty name/toolset, no handler, or a schema that is not an object with
  // an object-schema "parameters". AlreadyExists: the name belongs to another toolset (the
  // clash is also logged). REQUIRES nothing else; safe from static initializers.
  Status Register(ToolSpec spec, RegisterOptions options = {});

  // Removes `name`; false when it was not registered. Deregistering a toolset's last tool also
  // drops its availability check and the aliases pointing at it.
  bool Deregister(std::string_view name);

  // Removes every listed name and registers every spec in one published change (MCP refresh).
  // All-or-nothing: on the first failing spec nothing changes.
  Status Replace(std::span<const std::string> remove, std::vector<ToolSpec> add,
                 RegisterOptions options = {});

  // alias -> toolset (e.g. "github" -> "mcp-github").
  void RegisterToolsetAlias(std::string alias, std::string toolset);

  std::shared_ptr<const RegistrySnapshot> Snapshot() const;
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  // Null when unknown. The returned pointer keeps its snapshot alive.
  std::shared_ptr<const ToolEntry> GetEntry(std::string_view name) const;
  // GetEntry without the shared_ptr (two atomic refcount operations) for a hot path. The entry
  // lives in the calling thread's cached snapshot: the pointer is valid until this thread's
  // next call into any Registry, which may move that cache on. Do not keep it across one.
  const ToolEntry* PeekEntry(std::string_view name) const;
  // The tool a model means by `name`: the tool of that name, else the one that declares it as
  // an alias (ToolSpec::aliases). Null when neither.
  std::shared_ptr<const ToolEntry> Resolve(std::string_view name) const;
  std::optional<std::string> ToolsetOf(std::string_view name) const;
  std::optional<std::string> SchemaOf(std::string_view name) const;
  std::string EmojiOf(std::string_view name) const;  // kDefaultEmoji for unknown tools
  std::optional<std::string> ResolveToolsetAlias(std::string_view alias) const;
  std::vector<std::string> ToolsetNames() const;  // toolsets with ≥1 registered tool, sorted
  std::vector<std::string> ToolsOfToolset(std::string_view toolset) const;  // sorted

  // requires_env (every variable set and non-empty) and check_fn (cached, see above).
  Availability CheckAvailability(std::string_view name) const;
  Availability CheckAvailability(const ToolEntry& entry) const;
  // True when at least one tool of the toolset is available.
  bool IsToolsetAvailable(std::string_view toolset) const;
  // Forget cached check results (after a config change).
  void InvalidateAvailabilityCache();

  // OpenAI function definitions for `names` as a JSON array text:
  // [{"type":"function","function":{...schema, "name": <registered name>}}, ...], sorted by
  // name; unknown and unavailable tools skipped (availability judged on every call, each
  // check_fn probed once per call). The text is shared and immutable: repeating a query on the
  // same generation while the same tools are available returns the same text without copying.
  std::shared_ptr<const std::string> GetDefinitions(std::span<const std::string> names) const;

  // Returns an id for RemoveListener.
  int AddListener(std::function<void(const RegistryChange&)> listener);
  void RemoveListener(int id);

 private:
  struct CheckCacheEntry {
    Clock::TimePoint checked_at{};
    Clock::TimePoint last_success{};
    bool value = false;
    bool has_value = false;
    bool ever_succeeded = false;
    std::weak_ptr<const CheckFn> fn;  // guards against a reused address
  };

  static Result<std::shared_ptr<const ToolEntry>> BuildEntry(ToolSpec spec);
  static Status Insert(RegistrySnapshot& next, std::shared_ptr<const ToolEntry> entry,
                       const RegisterOptions& options);
  static bool Remove(RegistrySnapshot& next, std::string_view name);
  // Publishes `next` with a bumped generation, releases `lock`, then tells the listeners.
  void Publish(std::shared_ptr<RegistrySnapshot> next, RegistryChange change,
               std::unique_lock<std::mutex> lock);
  bool RunCheck(const std::shared_ptr<const CheckFn>& fn) const;
  // The calling thread's cached current snapshot (see Snapshot()); no refcount taken.
  const RegistrySnapshot& CachedSnapshot() const;

  Clock& clock_;
  const uint64_t id_;    // distinguishes registries in per-thread snapshot caches
  std::mutex write_mu_;  // serializes writers
  std::atomic<std::shared_ptr<const RegistrySnapshot>> current_;
  std::atomic<uint64_t> generation_{0};

  mutable std::mutex listeners_mu_;
  int next_listener_id_ = 1;  // Guarded by listeners_mu_.
  std::map<int, std::shared_ptr<std::function<void(const RegistryChange&)>>>
      listeners_;  // Guarded by listeners_mu_.

  mutable std::mutex check_mu_;
  mutable std::unordered_map<const CheckFn*, CheckCacheEntry>
      check_cache_;  // Guarded by check_mu_.
};

}  // namespace talaria
