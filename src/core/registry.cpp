#include "talaria/core/registry.h"

#include <algorithm>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "core/compiled_schema.h"
#include "talaria/base/log.h"
#include "talaria/core/tool_registration.h"

namespace talaria {

// ---------------------------------------------------------------------------------------------
// RegistrySnapshot

RegistrySnapshot::RegistrySnapshot() {
  static const auto kEmptyShard = std::make_shared<const Shard>();
  shards.fill(kEmptyShard);
}

RegistrySnapshot::RegistrySnapshot(const RegistrySnapshot& other)
    : generation(other.generation),
      size(other.size),
      shards(other.shards),
      toolset_sizes(other.toolset_sizes),
      toolset_checks(other.toolset_checks),
      toolset_aliases(other.toolset_aliases),
      tool_aliases(other.tool_aliases) {}

const std::shared_ptr<const ToolEntry>* RegistrySnapshot::FindShared(std::string_view name) const {
  const HashedName key{name, StringHash{}(name)};
  const Shard& shard = *shards[ShardOf(key)];
  auto it = shard.find(key);
  return it == shard.end() ? nullptr : &it->second;
}

const ToolEntry* RegistrySnapshot::Find(std::string_view name) const {
  const auto* found = FindShared(name);
  return found ? found->get() : nullptr;
}

void RegistrySnapshot::BuildSortedView() const {
  std::call_once(sorted_once_, [this] {
    sorted_.reserve(size);
    for (const auto& shard : shards) {
      for (const auto& [name, entry] : *shard) sorted_.push_back(entry.get());
    }
    std::sort(sorted_.begin(), sorted_.end(),
              [](const ToolEntry* a, const ToolEntry* b) { return a->name() < b->name(); });
    rank_.reserve(sorted_.size());
    for (uint32_t i = 0; i < sorted_.size(); ++i) rank_.emplace(sorted_[i]->name(), i);
  });
}

const std::vector<const ToolEntry*>& RegistrySnapshot::Sorted() const {
  BuildSortedView();
  return sorted_;
}

std::optional<uint32_t> RegistrySnapshot::RankOfName(std::string_view name) const {
  BuildSortedView();
  auto it = rank_.find(name);
  if (it == rank_.end()) return std::nullopt;
  return it->second;
}

std::vector<uint32_t> RegistrySnapshot::RanksOf(std::span<const std::string> names) const {
  // Sorting small integers (each entry's rank in the sorted view) is far cheaper than sorting
  // by name.
  std::vector<uint32_t> ranks;
  ranks.reserve(names.size());
  for (const auto& name : names) {
    if (auto rank = RankOfName(name)) ranks.push_back(*rank);
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

// ---------------------------------------------------------------------------------------------
// Registration

namespace internal {
ToolRegistrar::ToolRegistrar(ToolSpec spec) {
  std::string name = spec.name;
  Status s = Registry::Global().Register(std::move(spec));
  if (!s.ok()) LogError("built-in tool " + name + " not registered: " + s.message());
}
}  // namespace internal

namespace {
std::atomic<uint64_t> g_next_registry_id{1};
}  // namespace

Registry& Registry::Global() {
  static Registry registry;
  return registry;
}

Registry::Registry(Clock& clock) : clock_(clock), id_(g_next_registry_id.fetch_add(1)) {
  current_.store(std::make_shared<const RegistrySnapshot>());
}

Registry::~Registry() = default;

namespace {

bool IsMcpToolset(std::string_view toolset) { return toolset.starts_with("mcp-"); }

Status CheckSchemaShape(const Json& schema, std::string_view name) {
  if (!schema.is_object()) {
    return InvalidArgumentError("tool '" + std::string(name) + "': schema must be a JSON object");
  }
  auto params = schema.find("parameters");
  if (params == schema.end()) return Status::Ok();
  if (!params->is_object()) {
    return InvalidArgumentError("tool '" + std::string(name) +
                                "': schema \"parameters\" must be a JSON object");
  }
  auto type = params->find("type");
  if (type != params->end() && !(type->is_string() && *type == "object")) {
    return InvalidArgumentError("tool '" + std::string(name) +
                                "': schema \"parameters\" must have \"type\": \"object\"");
  }
  return Status::Ok();
}

}  // namespace

Result<std::shared_ptr<const ToolEntry>> Registry::BuildEntry(ToolSpec spec) {
  if (spec.name.empty()) return Err(InvalidArgumentError("tool name must not be empty"));
  if (spec.toolset.empty()) {
    return Err(InvalidArgumentError("tool '" + spec.name + "': toolset must not be empty"));
  }
  if (!spec.handler == !spec.async_handler) {
    return Err(InvalidArgumentError("tool '" + spec.name +
                                    "': exactly one of handler and async_handler must be set"));
  }
  if (spec.parallel == ParallelClass::kPathScoped && spec.path_args.empty()) {
    return Err(InvalidArgumentError("tool '" + spec.name +
                                    "': a path-scoped tool must name its path arguments"));
  }
  Json parsed;
  const Json* dom = spec.schema.dom();
  if (dom == nullptr) {
    auto p = ParseJson(spec.schema.text());
    if (!p) return Err(p.error().WithContext("tool '" + spec.name + "': schema"));
    parsed = std::move(*p);
    dom = &parsed;
  }
  TALARIA_RETURN_IF_ERROR(CheckSchemaShape(*dom, spec.name));
  // Compiling here refuses a malformed schema at registration instead of on every call.
  if (auto compiled = CompiledSchema::Compile(*dom); !compiled) {
    return Err(compiled.error().WithContext("tool '" + spec.name + "': schema"));
  }
  std::string text;
  auto name_it = dom->find("name");
  if (name_it != dom->end() && name_it->is_string() && *name_it == spec.name) {
    text = DumpJson(*dom);
  } else {
    Json copy = *dom;
    copy["name"] = spec.name;
    text = DumpJson(copy);
  }
  text.shrink_to_fit();  // dump() grows by doubling; entries live long, keep them tight
  spec.schema = SchemaSource();
  return std::shared_ptr<const ToolEntry>(
      std::make_shared<ToolEntry>(std::move(spec), std::move(text)));
}

Status Registry::Insert(RegistrySnapshot& next, std::shared_ptr<const ToolEntry> entry,
                        const RegisterOptions& options) {
  const std::string& name = entry->name();
  const std::string& toolset = entry->toolset();
  if (const ToolEntry* existing = next.Find(name); existing != nullptr) {
    if (options.only_new) {
      return AlreadyExistsError("tool registration rejected: '" + name +
                                "' is already registered (toolset '" + existing->toolset() + "')");
    }
    const bool same_toolset = existing->toolset() == toolset;
    const bool both_mcp = IsMcpToolset(existing->toolset()) && IsMcpToolset(toolset);
    if (!same_toolset && !both_mcp && !options.allow_override) {
      std::string msg = "tool registration rejected: '" + name + "' (toolset '" + toolset +
                        "') would shadow the tool of toolset '" + existing->toolset() +
                        "'; deregister it first if this is intended";
      LogError(msg);
      return AlreadyExistsError(std::move(msg));
    }
    Remove(next, name);
  }
  const size_t shard_index = RegistrySnapshot::ShardOf(name);
  auto shard = std::make_shared<RegistrySnapshot::Shard>(*next.shards[shard_index]);
  if (entry->check_fn() && !next.toolset_checks.contains(toolset)) {
    next.toolset_checks.emplace(toolset, entry->check_fn());
  }
  ++next.toolset_sizes[toolset];
  for (const std::string& alias : entry->aliases()) next.tool_aliases[alias] = name;
  shard->emplace(std::string_view(entry->name()), std::move(entry));
  next.shards[shard_index] = std::move(shard);
  ++next.size;
  return Status::Ok();
}

bool Registry::Remove(RegistrySnapshot& next, std::string_view name) {
  const size_t shard_index = RegistrySnapshot::ShardOf(name);
  const auto* found = next.FindShared(name);
  if (found == nullptr) return false;
  std::shared_ptr<const ToolEntry> entry = *found;  // keeps the key's storage alive below
  auto shard = std::make_shared<RegistrySnapshot::Shard>(*next.shards[shard_index]);
  shard->erase(name);
  next.shards[shard_index] = std::move(shard);
  --next.size;
  std::erase_if(next.tool_aliases, [&](const auto& kv) { return kv.second == entry->name(); });
  auto sizes = next.toolset_sizes.find(entry->toolset());
  if (sizes != next.toolset_sizes.end() && --sizes->second == 0) {
    next.toolset_sizes.erase(sizes);
    next.toolset_checks.erase(entry->toolset());
    std::erase_if(next.toolset_aliases,
                  [&](const auto& kv) { return kv.second == entry->toolset(); });
  }
  return true;
}

void Registry::Publish(std::shared_ptr<RegistrySnapshot> next, RegistryChange change,
                       std::unique_lock<std::mutex> lock) {
  next->generation = generation_.load(std::memory_order_relaxed) + 1;
  change.generation = next->generation;
  current_.store(std::shared_ptr<const RegistrySnapshot>(std::move(next)));
  generation_.store(change.generation, std::memory_order_release);
  lock.unlock();

  std::vector<std::shared_ptr<std::function<void(const RegistryChange&)>>> listeners;
  {
    std::lock_guard l(listeners_mu_);
    for (const auto& [id, fn] : listeners_) listeners.push_back(fn);
  }
  for (const auto& fn : listeners) {
    try {
      (*fn)(change);
    } catch (...) {
      LogError("registry listener threw; ignored");
    }
  }
}

Status Registry::Register(ToolSpec spec, RegisterOptions options) {
  auto entry = BuildEntry(std::move(spec));
  if (!entry) {
    LogError(entry.error().message());
    return entry.error();
  }
  std::unique_lock lock(write_mu_);
  auto next = std::make_shared<RegistrySnapshot>(*current_.load());
  std::string name = (*entry)->name();
  TALARIA_RETURN_IF_ERROR(Insert(*next, std::move(*entry), options));
  RegistryChange change;
  change.added.push_back(std::move(name));
  Publish(std::move(next), std::move(change), std::move(lock));
  return Status::Ok();
}

bool Registry::Deregister(std::string_view name) {
  std::unique_lock lock(write_mu_);
  auto next = std::make_shared<RegistrySnapshot>(*current_.load());
  if (!Remove(*next, name)) return false;
  RegistryChange change;
  change.removed.emplace_back(name);
  Publish(std::move(next), std::move(change), std::move(lock));
  return true;
}

Status Registry::Replace(std::span<const std::string> remove, std::vector<ToolSpec> add,
                         RegisterOptions options) {
  std::vector<std::shared_ptr<const ToolEntry>> entries;
  entries.reserve(add.size());
  for (auto& spec : add) {
    auto entry = BuildEntry(std::move(spec));
    if (!entry) return entry.error();
    entries.push_back(std::move(*entry));
  }
  std::unique_lock lock(write_mu_);
  auto next = std::make_shared<RegistrySnapshot>(*current_.load());
  RegistryChange change;
  for (const auto& name : remove) {
    if (Remove(*next, name)) change.removed.push_back(name);
  }
  for (auto& entry : entries) {
    std::string name = entry->name();
    TALARIA_RETURN_IF_ERROR(Insert(*next, std::move(entry), options));
    change.added.push_back(std::move(name));
  }
  Publish(std::move(next), std::move(change), std::move(lock));
  return Status::Ok();
}

void Registry::RegisterToolsetAlias(std::string alias, std::string toolset) {
  std::unique_lock lock(write_mu_);
  auto next = std::make_shared<RegistrySnapshot>(*current_.load());
  next->toolset_aliases[std::move(alias)] = std::move(toolset);
  Publish(std::move(next), RegistryChange{}, std::move(lock));
}

// ---------------------------------------------------------------------------------------------
// Queries

namespace {

// Each thread remembers the last snapshot it loaded. atomic<shared_ptr>::load takes a short
// spinlock in libstdc++; with many readers on few cores a preempted holder stalls the rest, so
// readers go to it only when the generation moved.
struct SnapshotCache {
  uint64_t registry_id = 0;
  uint64_t generation = 0;
  std::shared_ptr<const RegistrySnapshot> snapshot;
  // The entry PeekEntry found last in `snapshot`: a hot caller asks for the same tool again
  // and again, and comparing its name is cheaper than hashing it.
  const ToolEntry* last_peeked = nullptr;
};
thread_local SnapshotCache t_snapshot_cache;

// Names are a few bytes: an inline loop beats a call to memcmp.
bool SameName(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// The calling thread's cache, brought up to `generation` of registry `id` (`load` reads the
// published snapshot). One thread-local access per call: in a shared library each costs a
// __tls_get_addr call.
template <typename Load>
SnapshotCache& FreshCache(uint64_t id, uint64_t generation, Load&& load) {
  SnapshotCache& cache = t_snapshot_cache;
  if (cache.registry_id != id || cache.generation != generation) {
    auto snapshot = load();
    cache.registry_id = id;
    cache.generation = snapshot->generation;
    cache.snapshot = std::move(snapshot);
    cache.last_peeked = nullptr;
  }
  return cache;
}

}  // namespace

const RegistrySnapshot& Registry::CachedSnapshot() const {
  return *FreshCache(id_, generation_.load(std::memory_order_acquire), [this] {
            return current_.load();
          }).snapshot;
}

std::shared_ptr<const RegistrySnapshot> Registry::Snapshot() const {
  CachedSnapshot();
  return t_snapshot_cache.snapshot;
}

const ToolEntry* Registry::PeekEntry(std::string_view name) const {
  SnapshotCache& cache = FreshCache(id_, generation_.load(std::memory_order_acquire),
                                    [this] { return current_.load(); });
  if (cache.last_peeked != nullptr && SameName(cache.last_peeked->name(), name)) {
    return cache.last_peeked;
  }
  const ToolEntry* entry = cache.snapshot->Find(name);
  if (entry != nullptr) cache.last_peeked = entry;
  return entry;
}

std::shared_ptr<const ToolEntry> Registry::GetEntry(std::string_view name) const {
  auto snapshot = Snapshot();
  const ToolEntry* entry = snapshot->Find(name);
  if (entry == nullptr) return nullptr;
  // Aliasing: the entry lives as long as the snapshot that holds it; no second refcount.
  return std::shared_ptr<const ToolEntry>(std::move(snapshot), entry);
}

std::shared_ptr<const ToolEntry> Registry::Resolve(std::string_view name) const {
  auto snapshot = Snapshot();
  const ToolEntry* entry = snapshot->Find(name);
  if (entry == nullptr) {
    auto alias = snapshot->tool_aliases.find(name);
    if (alias == snapshot->tool_aliases.end()) return nullptr;
    entry = snapshot->Find(alias->second);
    if (entry == nullptr) return nullptr;
  }
  return std::shared_ptr<const ToolEntry>(std::move(snapshot), entry);
}

std::optional<std::string> Registry::ToolsetOf(std::string_view name) const {
  auto entry = GetEntry(name);
  if (!entry) return std::nullopt;
  return entry->toolset();
}

std::optional<std::string> Registry::SchemaOf(std::string_view name) const {
  auto entry = GetEntry(name);
  if (!entry) return std::nullopt;
  return entry->schema_text();
}

std::string Registry::EmojiOf(std::string_view name) const {
  auto entry = GetEntry(name);
  return std::string(entry ? entry->emoji() : kDefaultEmoji);
}

std::optional<std::string> Registry::ResolveToolsetAlias(std::string_view alias) const {
  auto snapshot = Snapshot();
  auto it = snapshot->toolset_aliases.find(alias);
  if (it == snapshot->toolset_aliases.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> Registry::ToolsetNames() const {
  auto snapshot = Snapshot();
  std::vector<std::string> names;
  for (const auto& [toolset, count] : snapshot->toolset_sizes) names.push_back(toolset);
  return names;
}

std::vector<std::string> Registry::ToolsOfToolset(std::string_view toolset) const {
  auto snapshot = Snapshot();
  std::vector<std::string> names;
  for (const ToolEntry* e : snapshot->Sorted()) {
    if (e->toolset() == toolset) names.push_back(e->name());
  }
  return names;
}

bool Registry::RunCheck(const std::shared_ptr<const CheckFn>& fn) const {
  const Clock::TimePoint now = clock_.Now();
  {
    std::lock_guard lock(check_mu_);
    auto it = check_cache_.find(fn.get());
    if (it != check_cache_.end()) {
      if (it->second.fn.lock() != fn) {
        check_cache_.erase(it);
      } else if (it->second.has_value && now - it->second.checked_at < kCheckCacheTtl) {
        return it->second.value;
      }
    }
  }
  bool ok = false;
  try {
    ok = (*fn)();
  } catch (const std::exception& e) {
    LogWarn(std::string("availability check threw: ") + e.what());
  } catch (...) {
    LogWarn("availability check threw");
  }
  std::lock_guard lock(check_mu_);
  if (check_cache_.size() >= 512) check_cache_.clear();  // bounded, like the original's cap
  CheckCacheEntry& e = check_cache_[fn.get()];
  e.fn = fn;
  if (ok) {
    e.value = true;
    e.has_value = true;
    e.checked_at = now;
    e.last_success = now;
    e.ever_succeeded = true;
    return true;
  }
  if (e.ever_succeeded && now - e.last_success < kCheckFailureGrace) {
    // A flake right after a success: report available, but do not cache the failure.
    e.has_value = false;
    return true;
  }
  e.value = false;
  e.has_value = true;
  e.checked_at = now;
  return false;
}

Availability Registry::CheckAvailability(const ToolEntry& entry) const {
  for (const auto& var : entry.requires_env()) {
    const char* v = std::getenv(var.c_str());
    if (v == nullptr || *v == '\0') return {false, "environment variable " + var + " is not set"};
  }
  if (const auto& fn = entry.check_fn(); fn && !RunCheck(fn)) {
    std::string reason;
    if (const UnavailableReasonFn& why = entry.unavailable_reason()) {
      try {
        reason = why();
      } catch (...) {  // a throwing explanation must not turn into an available tool
        reason.clear();
      }
    }
    return {false, reason.empty() ? "availability check failed" : std::move(reason)};
  }
  return {};
}

Availability Registry::CheckAvailability(std::string_view name) const {
  auto entry = GetEntry(name);
  if (!entry) return {false, "unknown tool"};
  return CheckAvailability(*entry);
}

bool Registry::IsToolsetAvailable(std::string_view toolset) const {
  auto snapshot = Snapshot();
  for (const auto& shard : snapshot->shards) {
    for (const auto& [name, entry] : *shard) {
      if (entry->toolset() == toolset && CheckAvailability(*entry).available) return true;
    }
  }
  return false;
}

void Registry::InvalidateAvailabilityCache() {
  std::lock_guard lock(check_mu_);
  check_cache_.clear();
}

std::shared_ptr<const std::string> Registry::GetDefinitions(
    std::span<const std::string> names) const {
  auto snapshot = Snapshot();
  const auto& sorted = snapshot->Sorted();
  // One probe per distinct check_fn per call, as the original does.
  std::vector<std::pair<const CheckFn*, bool>> probed;
  auto available = [&](const ToolEntry& e) {
    for (const auto& var : e.requires_env()) {
      const char* v = std::getenv(var.c_str());
      if (v == nullptr || *v == '\0') return false;
    }
    const auto& fn = e.check_fn();
    if (!fn) return true;
    for (const auto& [f, ok] : probed) {
      if (f == fn.get()) return ok;
    }
    bool ok = RunCheck(fn);
    probed.emplace_back(fn.get(), ok);
    return ok;
  };

  using Query = RegistrySnapshot::DefinitionsQuery;
  std::shared_ptr<const Query> last = snapshot->last_definitions.load();
  const bool same_names = last != nullptr && std::equal(names.begin(), names.end(),
                                                        last->names.begin(), last->names.end());
  if (same_names) {
    // The tools without requires_env or check_fn are always available; judge the others now.
    bool same_availability = true;
    for (size_t i = 0; i < last->conditional.size() && same_availability; ++i) {
      same_availability = available(*sorted[last->conditional[i]]) == last->available[i];
    }
    if (same_availability) return last->text;
  }

  auto query = std::make_shared<Query>();
  if (same_names) {
    query->names = last->names;
    query->ranks = last->ranks;
    query->conditional = last->conditional;
  } else {
    query->names.assign(names.begin(), names.end());
    query->ranks = snapshot->RanksOf(names);
    for (uint32_t r : query->ranks) {
      if (!sorted[r]->requires_env().empty() || sorted[r]->check_fn())
        query->conditional.push_back(r);
    }
  }
  query->available.reserve(query->conditional.size());
  for (uint32_t r : query->conditional) query->available.push_back(available(*sorted[r]));

  // Both lists ascend: walk them together to skip the unavailable ranks.
  std::vector<uint32_t> shown;
  shown.reserve(query->ranks.size());
  size_t c = 0;
  for (uint32_t r : query->ranks) {
    while (c < query->conditional.size() && query->conditional[c] < r) ++c;
    if (c < query->conditional.size() && query->conditional[c] == r && !query->available[c])
      continue;
    shown.push_back(r);
  }
  static constexpr std::string_view kPrefix = "{\"type\":\"function\",\"function\":";
  size_t bytes = 2;
  for (uint32_t r : shown) bytes += kPrefix.size() + sorted[r]->schema_text().size() + 2;
  std::string out;
  out.reserve(bytes);
  out += '[';
  for (size_t i = 0; i < shown.size(); ++i) {
    if (i > 0) out += ',';
    out += kPrefix;
    out += sorted[shown[i]]->schema_text();
    out += '}';
  }
  out += ']';
  query->text = std::make_shared<const std::string>(std::move(out));
  std::shared_ptr<const std::string> text = query->text;
  // Last writer wins; a racing caller's text is as correct as ours, only not remembered.
  snapshot->last_definitions.store(std::move(query));
  return text;
}

int Registry::AddListener(std::function<void(const RegistryChange&)> listener) {
  std::lock_guard lock(listeners_mu_);
  const int id = next_listener_id_++;
  listeners_.emplace(
      id, std::make_shared<std::function<void(const RegistryChange&)>>(std::move(listener)));
  return id;
}

void Registry::RemoveListener(int id) {
  std::lock_guard lock(listeners_mu_);
  listeners_.erase(id);
}

}  // namespace talaria
