// ToolCatalog: the tools an MCP server exposes, as MCP Tool objects, sorted by name. Built from
// a toolset selection and rebuilt when the registry's generation moves; only tools the
// dispatcher can run are exposed (never one that only an agent loop could answer).
// Thread-safety: thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "talaria/base/json.h"
#include "talaria/core/dispatcher.h"
#include "talaria/core/registry.h"
#include "talaria/core/toolsets.h"

namespace talaria::mcp {

struct CatalogTool {
  std::shared_ptr<const ToolEntry> entry;
  Json tool;  // {name, description, inputSchema, annotations, _meta}
};

struct Catalog {
  uint64_t generation = 0;
  std::vector<CatalogTool> tools;  // sorted by name
  std::map<std::string, size_t, std::less<>> index;
  // The selection's registered tools that are not exposed, and why (the registry's reason: a
  // missing key or config section, or a tool only an agent loop runs), so a call of one is
  // answered with the reason rather than as an unknown tool.
  std::map<std::string, std::string, std::less<>> withheld;

  const CatalogTool* Find(std::string_view name) const {
    auto it = index.find(name);
    return it == index.end() ? nullptr : &tools[it->second];
  }
  // Why `name` is withheld; nullptr when it is exposed or not in the selection at all.
  const std::string* WithheldReason(std::string_view name) const {
    auto it = withheld.find(name);
    return it == withheld.end() ? nullptr : &it->second;
  }
};

// The MCP Tool object for `entry` (annotations as hints, talaria's parallel class and toolset
// in _meta).
Json ToMcpTool(const ToolEntry& entry);

// True for names MCP allows: 1-128 characters of [A-Za-z0-9_.-].
bool IsValidMcpToolName(std::string_view name);

class ToolCatalog {
 public:
  ToolCatalog(const Dispatcher& dispatcher, const Toolsets& toolsets,
              std::vector<std::string> selection)
      : dispatcher_(dispatcher),
        registry_(dispatcher.registry()),
        toolsets_(toolsets),
        selection_(std::move(selection)) {}

  // The current catalog (unknown tools and those Dispatcher::CheckRunnable refuses left out; the
  // latter listed in `withheld` with the reason).
  // Errors: the selection's (an unknown toolset).
  Result<std::shared_ptr<const Catalog>> Current();

 private:
  const Dispatcher& dispatcher_;
  const Registry& registry_;
  const Toolsets& toolsets_;
  const std::vector<std::string> selection_;
  std::mutex mu_;
  std::shared_ptr<const Catalog> cached_;  // Guarded by mu_.
};

}  // namespace talaria::mcp
