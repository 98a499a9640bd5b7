#include "talaria/core/toolsets.h"

#include <algorithm>
#include <unordered_set>

#include "talaria/base/clock.h"

namespace talaria {

struct Toolsets::Table {
  std::vector<ToolsetDef> defs;
  std::unordered_map<std::string_view, size_t, StringHash, std::equal_to<>> index;

  explicit Table(std::vector<ToolsetDef> d) : defs(std::move(d)) {
    for (size_t i = 0; i < defs.size(); ++i) index[defs[i].name] = i;
  }
  Table(const Table&) = delete;
  const ToolsetDef* Find(std::string_view name) const {
    auto it = index.find(name);
    return it == index.end() ? nullptr : &defs[it->second];
  }
};

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

}  // namespace

Toolsets::Toolsets(const Registry& registry, std::vector<ToolsetDef> table)
    : registry_(registry), table_(std::make_shared<const Table>(std::move(table))) {}

std::shared_ptr<const Toolsets::Table> Toolsets::table() const {
  std::lock_guard lock(mu_);
  return table_;
}

void Toolsets::Define(ToolsetDef def) {
  std::lock_guard lock(mu_);
  std::vector<ToolsetDef> defs = table_->defs;
  auto it = std::find_if(defs.begin(), defs.end(), [&](const ToolsetDef& d) { return d.name == def.name; });
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

std::shared_ptr<const Toolsets::RegistryIndex> Toolsets::BuildIndex(const RegistrySnapshot& snapshot) {
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
    return ToolsetDef{n, (n.starts_with("mcp-") ? "Tools of MCP server " + n.substr(4)
                                                 : "Tools registered by " + n),
                      *tools, {}};
  }
  return std::nullopt;
}

Result<ToolList> Toolsets::ResolveUncached(std::string_view name, const Table& table,
                                           const RegistryIndex& index) const {
  std::unordered_set<std::string_view> tools;
  auto add_all = [&](const std::vector<std::string>* list) {
    if (list == nullptr) return;
    for (const auto& t : *list) tools.insert(t);
  };
  if (IsAllName(name)) {
    // Every toolset resolves at least to its own tools, so the union over all toolsets is the
    // union of every direct tool list plus every registered tool: no per-toolset recursion.
    for (const auto& def : table.defs) {
      for (const auto& t : def.tools) tools.insert(t);
    }
    for (const auto& [toolset, list] : index.by_toolset) add_all(&list);
  } else {
    const bool known = table.Find(name) != nullptr || index.ToolsOf(name) != nullptr ||
                       index.aliases.contains(name);
    if (!known) {
      std::string msg = "unknown toolset '" + std::string(name) + "'; valid toolsets: all";
      for (const auto& n : Names()) msg += ", " + n;
      return Err(InvalidArgumentError(std::move(msg)));
    }
    // Depth-first with one visited set: cycles and diamonds end without duplicates.
    std::unordered_set<std::string_view> visited;
    std::vector<std::string_view> stack{name};
    while (!stack.empty()) {
      std::string_view current = stack.back();
      stack.pop_back();
      if (!visited.insert(current).second) continue;
      add_all(index.ToolsOf(current));
      if (auto alias = index.aliases.find(current); alias != index.aliases.end()) {
        stack.push_back(alias->second);
      }
      const ToolsetDef* def = table.Find(current);
      if (def == nullptr) continue;
      for (const auto& t : def->tools) tools.insert(t);
      // Reverse so includes are visited in list order.
      for (auto it = def->includes.rbegin(); it != def->includes.rend(); ++it) stack.push_back(*it);
    }
  }
  auto out = std::make_shared<std::vector<std::string>>(tools.begin(), tools.end());
  std::sort(out->begin(), out->end());
  return ToolList(std::move(out));
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
  std::span<const std::string> include = enabled.empty() ? std::span<const std::string>(all_names) : enabled;
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
    if (it != m->definitions.end() && now - it->second.made < kCheckCacheTtl) return it->second.text;
  }
  ToolList names = TALARIA_TRY(ResolveSelection(enabled, disabled));
  auto text = std::make_shared<const std::string>(registry_.GetDefinitions(*names));
  std::lock_guard lock(m->mu);
  m->definitions[key] = Memo::Defs{text, now};
  return text;
}

}  // namespace talaria
