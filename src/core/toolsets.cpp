#include "talaria/core/toolsets.h"

#include <algorithm>
#include <atomic>
#include <unordered_set>

#include "talaria/base/clock.h"

namespace talaria {

// The static table compiled for resolution: every tool name gets an id in sorted order, each
// toolset's tools and includes become ids, so resolving is a walk over integers into a bitset
// whose iteration order is already the sorted output.
struct Toolsets::Table {
  std::vector<ToolsetDef> defs;
  std::unordered_map<std::string_view, size_t, StringHash, std::equal_to<>> index;
  std::vector<std::string_view> universe;  // sorted, unique; views into defs
  std::unordered_map<std::string_view, uint32_t, StringHash, std::equal_to<>> universe_id;
  std::vector<std::vector<uint32_t>> tool_ids;     // per def
  std::vector<std::vector<int32_t>> include_defs;  // per def: index into defs, or -1

  explicit Table(std::vector<ToolsetDef> d) : defs(std::move(d)) {
    for (size_t i = 0; i < defs.size(); ++i) index[defs[i].name] = i;
    for (const auto& def : defs)
      universe.insert(universe.end(), def.tools.begin(), def.tools.end());
    std::sort(universe.begin(), universe.end());
    universe.erase(std::unique(universe.begin(), universe.end()), universe.end());
    for (uint32_t i = 0; i < universe.size(); ++i) universe_id.emplace(universe[i], i);
    tool_ids.resize(defs.size());
    include_defs.resize(defs.size());
    for (size_t i = 0; i < defs.size(); ++i) {
      for (const auto& t : defs[i].tools) tool_ids[i].push_back(universe_id.at(t));
      for (const auto& inc : defs[i].includes) {
        auto it = index.find(inc);
        include_defs[i].push_back(it == index.end() ? -1 : static_cast<int32_t>(it->second));
      }
    }
  }
  Table(const Table&) = delete;
  const ToolsetDef* Find(std::string_view name) const {
    auto it = index.find(name);
    return it == index.end() ? nullptr : &defs[it->second];
  }
};

namespace {

// The tools collected by one resolution: table tools as bits, registry-only names aside.
class ToolAccumulator {
 public:
  explicit ToolAccumulator(const Toolsets::Table& table)
      : table_(table), bits_((table.universe.size() + 63) / 64) {}
  void AddId(uint32_t id) { bits_[id / 64] |= uint64_t{1} << (id % 64); }
  void AddName(std::string_view name) {
    auto it = table_.universe_id.find(name);
    if (it != table_.universe_id.end()) {
      AddId(it->second);
    } else {
      extra_.push_back(name);
    }
  }
  void AddAllTableTools() {
    for (uint32_t i = 0; i < table_.universe.size(); ++i) AddId(i);
  }
  ToolList Finish() {
    std::sort(extra_.begin(), extra_.end());
    extra_.erase(std::unique(extra_.begin(), extra_.end()), extra_.end());
    auto out = std::make_shared<std::vector<std::string>>();
    auto extra = extra_.begin();
    for (size_t word = 0; word < bits_.size(); ++word) {
      for (uint64_t w = bits_[word]; w != 0; w &= w - 1) {
        std::string_view name =
            table_.universe[word * 64 + static_cast<size_t>(__builtin_ctzll(w))];
        for (; extra != extra_.end() && *extra < name; ++extra) out->emplace_back(*extra);
        out->emplace_back(name);
      }
    }
    for (; extra != extra_.end(); ++extra) out->emplace_back(*extra);
    return out;
  }

 private:
  const Toolsets::Table& table_;
  std::vector<uint64_t> bits_;
  std::vector<std::string_view> extra_;
};

}  // namespace

// The registry's tools grouped by toolset, for one registry generation.
struct Toolsets::RegistryIndex {
  std::map<std::string, std::vector<std::string>, std::less<>> by_toolset;
  std::map<std::string, std::string, std::less<>> aliases;

  const std::vector<std::string>* ToolsOf(std::string_view toolset) const {
    auto it = by_toolset.find(toolset);
    return it == by_toolset.end() ? nullptr : &it->second;
  }
};

struct Toolsets::Memo {
  uint64_t generation = 0;
  std::shared_ptr<const RegistryIndex> index;
  std::mutex mu;
  std::unordered_map<std::string, ToolList> resolved;  // Guarded by mu.
  struct Defs {
    std::shared_ptr<const std::string> text;
    std::chrono::steady_clock::time_point made;
  };
  std::unordered_map<std::string, Defs> definitions;  // Guarded by mu.
};

namespace {

bool IsAllName(std::string_view name) { return name == "all" || name == "*"; }

// Declared from a static initializer of another module, read at run time: an atomic, so the
// order of initialisation between modules does not matter once main() runs.
std::atomic<ToolsetTableFn> g_builtin_table{nullptr};

}  // namespace

void DeclareBuiltinToolsets(ToolsetTableFn table) { g_builtin_table.store(table); }

std::vector<ToolsetDef> BuiltinToolsets() {
  const ToolsetTableFn table = g_builtin_table.load();
  return table != nullptr ? table() : std::vector<ToolsetDef>{};
}

Toolsets::Toolsets(const Registry& registry, std::vector<ToolsetDef> table)
    : registry_(registry), table_(std::make_shared<const Table>(std::move(table))) {}

std::shared_ptr<const Toolsets::Table> Toolsets::table() const {
  std::lock_guard lock(mu_);
  return table_;
}

void Toolsets::Define(ToolsetDef def) {
  std::lock_guard lock(mu_);
  std::vector<ToolsetDef> defs = table_->defs;
  auto it = std::find_if(defs.begin(), defs.end(),
                         [&](const ToolsetDef& d) { return d.name == def.name; });
  if (it != defs.end()) {
    *it = std::move(def);
  } else {
    defs.push_back(std::move(def));
  }
  table_ = std::make_shared<const Table>(std::move(defs));
  memo_.reset();
}

void Toolsets::ResetTable(std::vector<ToolsetDef> table) {
  std::lock_guard lock(mu_);
  table_ = std::make_shared<const Table>(std::move(table));
  memo_.reset();
}

void Toolsets::ClearMemo() {
  std::lock_guard lock(mu_);
  memo_.reset();
}

std::shared_ptr<Toolsets::Memo> Toolsets::memo() const {
  const uint64_t generation = registry_.generation();
  {
    std::lock_guard lock(mu_);
    if (memo_ && memo_->generation == generation) return memo_;
  }
  auto snapshot = registry_.Snapshot();
  auto fresh = std::make_shared<Memo>();
  fresh->generation = snapshot->generation;
  fresh->index = BuildIndex(*snapshot);
  std::lock_guard lock(mu_);
  if (!memo_ || memo_->generation != fresh->generation) memo_ = fresh;
  return memo_;
}

std::shared_ptr<const Toolsets::RegistryIndex> Toolsets::BuildIndex(
    const RegistrySnapshot& snapshot) {
  auto index = std::make_shared<Toolsets::RegistryIndex>();
  for (const ToolEntry* e : snapshot.Sorted()) index->by_toolset[e->toolset()].push_back(e->name());
  index->aliases.insert(snapshot.toolset_aliases.begin(), snapshot.toolset_aliases.end());
  return index;
}

bool Toolsets::Exists(std::string_view name) const {
  if (IsAllName(name)) return true;
  if (table()->Find(name) != nullptr) return true;
  auto m = memo();
  return m->index->ToolsOf(name) != nullptr || m->index->aliases.contains(name);
}

std::vector<std::string> Toolsets::Names() const {
  auto t = table();
  auto m = memo();
  std::vector<std::string> names;
  for (const auto& def : t->defs) names.push_back(def.name);
  for (const auto& [toolset, tools] : m->index->by_toolset) {
    if (t->Find(toolset) == nullptr) names.push_back(toolset);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::optional<ToolsetDef> Toolsets::Find(std::string_view name) const {
  auto t = table();
  if (const ToolsetDef* def = t->Find(name)) return *def;
  auto m = memo();
  if (const auto* tools = m->index->ToolsOf(name)) {
    std::string n(name);
    return ToolsetDef{
        n,
        (n.starts_with("mcp-") ? "Tools of MCP server " + n.substr(4) : "Tools registered by " + n),
        *tools,
        {}};
  }
  return std::nullopt;
}

Result<ToolList> Toolsets::ResolveUncached(std::string_view name, const Table& table,
                                           const RegistryIndex& index) const {
  ToolAccumulator tools(table);
  auto add_registry_tools = [&](std::string_view toolset) {
    if (const auto* list = index.ToolsOf(toolset)) {
      for (const auto& t : *list) tools.AddName(t);
    }
  };
  if (IsAllName(name)) {
    // Every toolset resolves at least to its own tools, so the union over all toolsets is the
    // union of every direct tool list plus every registered tool: no per-toolset recursion.
    tools.AddAllTableTools();
    for (const auto& [toolset, list] : index.by_toolset) add_registry_tools(toolset);
    return tools.Finish();
  }
  const bool known =
      table.Find(name) != nullptr || index.ToolsOf(name) != nullptr || index.aliases.contains(name);
  if (!known) {
    std::string msg = "unknown toolset '" + std::string(name) + "'; valid toolsets: all";
    for (const auto& n : Names()) msg += ", " + n;
    return Err(InvalidArgumentError(std::move(msg)));
  }
  // Depth-first with one visited set: cycles and diamonds end without duplicates. Table
  // toolsets are visited by index; registry toolsets and aliases by name.
  struct Item {
    int32_t def;
    std::string_view name;
  };
  std::vector<char> visited_defs(table.defs.size(), 0);
  std::unordered_set<std::string_view> visited_names;
  auto find_def = [&](std::string_view n) {
    auto it = table.index.find(n);
    return it == table.index.end() ? int32_t{-1} : static_cast<int32_t>(it->second);
  };
  std::vector<Item> stack{{find_def(name), name}};
  while (!stack.empty()) {
    const Item item = stack.back();
    stack.pop_back();
    if (item.def >= 0) {
      if (visited_defs[item.def]) continue;
      visited_defs[item.def] = 1;
    } else if (!visited_names.insert(item.name).second) {
      continue;
    }
    add_registry_tools(item.name);
    if (auto alias = index.aliases.find(item.name); alias != index.aliases.end()) {
      stack.push_back({find_def(alias->second), alias->second});
    }
    if (item.def < 0) continue;
    for (uint32_t id : table.tool_ids[item.def]) tools.AddId(id);
    const ToolsetDef& def = table.defs[item.def];
    // Reverse so includes are visited in list order.
    for (size_t i = def.includes.size(); i-- > 0;) {
      stack.push_back({table.include_defs[item.def][i], def.includes[i]});
    }
  }
  return tools.Finish();
}

Result<ToolList> Toolsets::Resolve(std::string_view name) const {
  auto m = memo();
  {
    std::lock_guard lock(m->mu);
    if (auto it = m->resolved.find(std::string(name)); it != m->resolved.end()) return it->second;
  }
  auto t = table();
  auto resolved = ResolveUncached(name, *t, *m->index);
  if (!resolved) return resolved;
  std::lock_guard lock(m->mu);
  m->resolved.emplace(std::string(name), *resolved);
  return resolved;
}

Result<ToolList> Toolsets::ResolveSelection(std::span<const std::string> enabled,
                                            std::span<const std::string> disabled) const {
  std::vector<std::string> all_names{"all"};
  std::span<const std::string> include =
      enabled.empty() ? std::span<const std::string>(all_names) : enabled;
  std::unordered_set<std::string_view> picked;
  std::vector<ToolList> keep_alive;
  for (const auto& name : include) {
    ToolList list = TALARIA_TRY(Resolve(name));
    for (const auto& t : *list) picked.insert(t);
    keep_alive.push_back(std::move(list));
  }
  // Disabled toolsets are subtracted last, whatever enabled them.
  for (const auto& name : disabled) {
    ToolList list = TALARIA_TRY(Resolve(name));
    for (const auto& t : *list) picked.erase(t);
    keep_alive.push_back(std::move(list));
  }
  auto out = std::make_shared<std::vector<std::string>>(picked.begin(), picked.end());
  std::sort(out->begin(), out->end());
  return ToolList(std::move(out));
}

Result<std::shared_ptr<const std::string>> Toolsets::Definitions(
    std::span<const std::string> enabled, std::span<const std::string> disabled) const {
  std::string key;
  for (const auto& e : enabled) key += e + ',';
  key += '|';
  for (const auto& d : disabled) key += d + ',';
  auto m = memo();
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(m->mu);
    auto it = m->definitions.find(key);
    // Availability checks are cached for kCheckCacheTtl; cached definitions live no longer.
    if (it != m->definitions.end() && now - it->second.made < kCheckCacheTtl)
      return it->second.text;
  }
  ToolList names = TALARIA_TRY(ResolveSelection(enabled, disabled));
  std::shared_ptr<const std::string> text = registry_.GetDefinitions(*names);
  std::lock_guard lock(m->mu);
  m->definitions[key] = Memo::Defs{text, now};
  return text;
}

}  // namespace talaria
