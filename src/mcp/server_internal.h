// Pieces McpServer's handlers share across its source files.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "talaria/base/json.h"
#include "talaria/core/tool_context.h"
#include "talaria/core/toolsets.h"
#include "talaria/mcp/features.h"

namespace talaria::mcp {

// A request's answer: a result, or a JSON-RPC error when code != 0 (with optional data).
struct Reply {
  Json result = Json::object();
  int code = 0;
  std::string message;
  Json data;  // null: none
};

inline Reply Error(int code, std::string message) {
  Reply r;
  r.code = code;
  r.message = std::move(message);
  return r;
}

// What one server serves of a ServerFeatures: the definitions of its selected toolsets.
class FeatureView {
 public:
  // `selection`: the server's --toolsets; a definition is served when its toolset is one of
  // them or is included by one of them (bundles name their parts through includes).
  FeatureView(std::shared_ptr<ServerFeatures> features, const std::vector<std::string>& selection,
              const Toolsets& toolsets, size_t page_size);

  bool enabled() const { return features_ != nullptr; }
  // True when a definition of `toolset` is served.
  bool Serves(const std::string& toolset) const;
  // The capabilities to declare ({resources}, {prompts}, {completions}) for what is served now.
  void AddCapabilities(Json& capabilities) const;

  // The lists come in pages of page_size (params.cursor: the nextCursor of the page before).
  Reply ListResources(const Json& params) const;
  Reply ListTemplates(const Json& params) const;
  Reply ReadResource(const Json& params, ToolContext& ctx) const;
  // Checks that `params.uri` is served (the URI of a resource or a template's match).
  Reply CheckSubscribable(const Json& params, std::string* uri) const;
  Reply ListPrompts(const Json& params) const;
  Reply GetPrompt(const Json& params, ToolContext& ctx) const;
  Reply Complete(const Json& params) const;

 private:
  template <class Defs, class ToJson>
  Reply Page(const Json& params, const Defs& defs, ToJson to_json, const char* key) const;

  std::shared_ptr<const FeatureSnapshot> Snapshot() const;

  const std::shared_ptr<ServerFeatures> features_;
  std::vector<std::string> selection_;  // with what the selected toolsets include
  size_t page_size_;
};

}  // namespace talaria::mcp
