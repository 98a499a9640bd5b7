// Toolsets: named groups of tools that include other groups, resolved to flat tool lists.
//
// Three sources, merged: the static table (BuiltinToolsets(): declared by the tools module,
// which knows the tools: basic sets, scenario sets, bundles), user toolsets from config.yaml, and
// registry-only toolsets (plugins, mcp-<server>, and registry aliases). Resolution follows the
// original: a visited set makes cycles and diamonds terminate without duplicates; "all" and "*" are
// the union of every toolset. Results are memoized per (registry generation, table version).
// Thread-safety: thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/core/registry.h"

namespace talaria {

struct ToolsetDef {
  std::string name;
  std::string description;
  std::vector<std::string> tools;
  std::vector<std::string> includes;
};

// The static toolset table as the module that knows the tools declared it; empty when none did.
std::vector<ToolsetDef> BuiltinToolsets();
// Declares the static table (the tools module does, from a static initializer); the last
// declaration wins.
using ToolsetTableFn = std::vector<ToolsetDef> (*)();
void DeclareBuiltinToolsets(ToolsetTableFn table);

using ToolList = std::shared_ptr<const std::vector<std::string>>;

class Toolsets {
 public:
  explicit Toolsets(const Registry& registry, std::vector<ToolsetDef> table = BuiltinToolsets());

  // Adds or replaces a toolset (user toolsets from config). Invalidates the memo.
  void Define(ToolsetDef def);
  // Replaces the whole static table (benchmarks and tests).
  void ResetTable(std::vector<ToolsetDef> table);

  // True for static/user toolsets, registry toolsets and registry aliases, "all" and "*".
  bool Exists(std::string_view name) const;
  // Every toolset name (table + registry-only), sorted, without "all"/"*".
  std::vector<std::string> Names() const;
  // The definition of a table toolset; registry-only toolsets get a synthesized one.
  std::optional<ToolsetDef> Find(std::string_view name) const;

  // The sorted, duplicate-free tools of `name`. InvalidArgument for an unknown name; the
  // message lists the valid ones.
  Result<ToolList> Resolve(std::string_view name) const;

  // Union of the enabled toolsets (every toolset when `enabled` is empty) minus the disabled
  // ones, subtracted last. Sorted. InvalidArgument names any unknown toolset.
  Result<ToolList> ResolveSelection(std::span<const std::string> enabled,
                                    std::span<const std::string> disabled) const;

  // OpenAI definitions (JSON array text) for a selection, memoized.
  Result<std::shared_ptr<const std::string>> Definitions(
      std::span<const std::string> enabled, std::span<const std::string> disabled) const;

  // Drops memoized results (also happens by itself when the registry generation changes).
  void ClearMemo();

 public:
  struct Table;  // compiled static table (toolsets.cpp)

 private:
  struct RegistryIndex;
  struct Memo;

  static std::shared_ptr<const RegistryIndex> BuildIndex(const RegistrySnapshot& snapshot);
  std::shared_ptr<const Table> table() const;
  // The memo for the current registry generation (a new one when the generation moved).
  std::shared_ptr<Memo> memo() const;
  Result<ToolList> ResolveUncached(std::string_view name, const Table& table,
                                   const RegistryIndex& index) const;

  const Registry& registry_;
  mutable std::mutex mu_;
  std::shared_ptr<const Table> table_;  // Guarded by mu_.
  mutable std::shared_ptr<Memo> memo_;  // Guarded by mu_.
};

}  // namespace talaria
