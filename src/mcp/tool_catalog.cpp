#include "mcp/tool_catalog.h"

#include "talaria/base/log.h"

namespace talaria::mcp {

bool IsValidMcpToolName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

Json ToMcpTool(const ToolEntry& entry) {
  Json tool = Json::object();
  tool["name"] = entry.name();
  tool["description"] = entry.description();
  // The registry refused any schema whose "parameters" is not an object schema.
  Json input = Json::object({{"type", "object"}});
  if (auto schema = ParseJson(entry.schema_text()); schema && schema->is_object()) {
    if (auto it = schema->find("parameters"); it != schema->end() && it->is_object()) input = *it;
  }
  if (!input.contains("type")) input["type"] = "object";
  tool["inputSchema"] = std::move(input);
  const ToolAnnotations a = entry.annotations();
  // All four hints are sent explicitly: MCP's defaults (destructive, open world) are the
  // opposite of ToolAnnotations'.
  tool["annotations"] = {{"readOnlyHint", a.read_only},
                         {"destructiveHint", !a.read_only && a.destructive},
                         {"idempotentHint", a.idempotent},
                         {"openWorldHint", a.open_world}};
  tool["_meta"] = {{"talaria/toolset", entry.toolset()},
                   {"talaria/parallel", std::string(ParallelClassName(entry.parallel()))}};
  return tool;
}

Result<std::shared_ptr<const Catalog>> ToolCatalog::Current() {
  const uint64_t generation = registry_.generation();
  {
    std::lock_guard lock(mu_);
    if (cached_ && cached_->generation == generation) return cached_;
  }
  auto names = toolsets_.ResolveSelection(selection_, {});
  if (!names) return Err(names.error());
  auto catalog = std::make_shared<Catalog>();
  catalog->generation = generation;
  for (const std::string& name : **names) {  // sorted by Toolsets
    std::shared_ptr<const ToolEntry> entry = registry_.GetEntry(name);
    if (!entry) continue;
    if (Availability a = dispatcher_.CheckRunnable(*entry); !a.available) {
      catalog->withheld.emplace(name, a.reason.empty() ? "unavailable" : std::move(a.reason));
      continue;
    }
    if (!IsValidMcpToolName(name)) {
      LogWarn("mcp: not exposing tool '" + name + "': MCP tool names are 1-128 of [A-Za-z0-9_.-]");
      continue;
    }
    catalog->index.emplace(name, catalog->tools.size());
    catalog->tools.push_back({entry, ToMcpTool(*entry)});
  }
  std::lock_guard lock(mu_);
  cached_ = catalog;
  return std::shared_ptr<const Catalog>(std::move(catalog));
}

}  // namespace talaria::mcp
