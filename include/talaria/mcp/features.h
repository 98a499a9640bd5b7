// ServerFeatures: the resources, resource templates and prompts an MCP server offers besides
// tools, with their argument completions. Embedders (and plugins, through the plugin loader)
// add them; every McpServer given the object serves them (resources/list, resources/read,
// resources/templates/list, resources/subscribe, prompts/list, prompts/get,
// completion/complete) and declares the matching capabilities.
//
//   auto features = std::make_shared<talaria::mcp::ServerFeatures>();
//   talaria::mcp::ResourceDef readme;
//   readme.uri = "docs://readme";
//   readme.name = "readme";
//   readme.mime_type = "text/markdown";
//   readme.read = [](const talaria::mcp::ResourceRequest& req, talaria::ToolContext&) {
//     return talaria::mcp::TextContents(req.uri, "text/markdown", "# Hello");
//   };
//   (void)features->AddResource(std::move(readme));
//   server_options.features = features;
//
// Each definition names a toolset: a server serves it only when its toolset selection names
// that toolset (or "all" / "*"); an empty toolset is always served.
// Thread-safety: thread-safe. Handlers may run on any thread, concurrently; they are called
// without any lock held.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/core/tool_context.h"

namespace talaria::mcp {

// What resources/read asked for: the URI and, for a template, the values of its variables.
struct ResourceRequest {
  std::string uri;
  std::map<std::string, std::string> variables;  // {"id": "123"} for test://template/{id}/data
};

// Returns the MCP "contents" array ([{uri, mimeType?, text | blob}]). NotFound becomes the MCP
// "resource not found" error (-32002), InvalidArgument -32602, anything else -32603.
using ReadResourceFn =
    std::function<Result<Json>(const ResourceRequest& request, ToolContext& ctx)>;
// Returns the GetPromptResult object ({"messages": [...], "description"?}). `arguments` is an
// object of strings. InvalidArgument becomes -32602, anything else -32603.
using GetPromptFn = std::function<Result<Json>(const Json& arguments, ToolContext& ctx)>;
// Completion candidates for one argument, given its partial `value` and the other arguments
// already chosen (an object of strings). At most 100 are sent.
using CompleteFn = std::function<std::vector<std::string>(
    std::string_view argument, std::string_view value, const Json& context_arguments)>;

// [{uri, mimeType, text}] and [{uri, mimeType, blob}] (blob: base64 of `bytes`).
Json TextContents(std::string_view uri, std::string_view mime_type, std::string_view text);
Json BlobContents(std::string_view uri, std::string_view mime_type, std::string_view bytes);

struct ResourceDef {
  // Exactly one of the two: a fixed URI, or an RFC 6570 level-1 template whose {name}
  // variables each match one non-empty run of characters other than '/'.
  std::string uri;
  std::string uri_template;
  std::string name;  // required
  std::string title;
  std::string description;
  std::string mime_type;
  std::string toolset;  // empty: always served
  ReadResourceFn read;  // required
  CompleteFn complete;  // templates: completes their variables; optional
};

struct PromptArgument {
  std::string name;
  std::string description;
  bool required = false;
};

struct PromptDef {
  std::string name;  // required, unique
  std::string title;
  std::string description;
  std::vector<PromptArgument> arguments;
  std::string toolset;  // empty: always served
  GetPromptFn get;      // required
  CompleteFn complete;  // optional
};

// Something a server should tell its clients about.
struct FeatureEvent {
  enum class Kind : unsigned char { kResourceUpdated, kResourcesChanged, kPromptsChanged };
  Kind kind = Kind::kResourceUpdated;
  std::string uri;  // kResourceUpdated only
};

// An immutable view of everything registered; servers read it without locking.
struct FeatureSnapshot {
  std::vector<std::shared_ptr<const ResourceDef>> resources;  // fixed URIs, sorted by URI
  std::vector<std::shared_ptr<const ResourceDef>> templates;  // in registration order
  std::vector<std::shared_ptr<const PromptDef>> prompts;      // sorted by name

  // The resource serving `uri` (a fixed URI first, then the first matching template) and the
  // template's variables; null when none.
  std::shared_ptr<const ResourceDef> FindResource(
      std::string_view uri, std::map<std::string, std::string>* variables) const;
  std::shared_ptr<const PromptDef> FindPrompt(std::string_view name) const;
  std::shared_ptr<const ResourceDef> FindTemplate(std::string_view uri_template) const;
};

// Matches `uri` against a level-1 template; fills `variables` on success.
bool MatchUriTemplate(std::string_view uri_template, std::string_view uri,
                      std::map<std::string, std::string>* variables);

class ServerFeatures {
 public:
  ServerFeatures();
  ~ServerFeatures();
  ServerFeatures(const ServerFeatures&) = delete;
  ServerFeatures& operator=(const ServerFeatures&) = delete;

  // InvalidArgument for a definition missing its name, URI/template (or having both) or read
  // function, or a template without a {variable}; AlreadyExists-like InvalidArgument for a URI
  // or template registered twice. Servers are told the list changed.
  Status AddResource(ResourceDef def);
  // InvalidArgument for a missing name or get function, or a name registered twice.
  Status AddPrompt(PromptDef def);

  // Tells every server whose client subscribed to `uri` (notifications/resources/updated).
  void NotifyResourceUpdated(std::string_view uri);

  std::shared_ptr<const FeatureSnapshot> Snapshot() const;

  // Listeners run on the thread that caused the event, without any lock of ours held.
  int AddListener(std::function<void(const FeatureEvent&)> listener);
  void RemoveListener(int id);

 private:
  void Publish(const FeatureEvent& event);

  mutable std::mutex mu_;
  std::shared_ptr<const FeatureSnapshot> snapshot_;  // Guarded by mu_.
  std::mutex listeners_mu_;
  int next_listener_ = 1;  // Guarded by listeners_mu_.
  std::map<int, std::shared_ptr<std::function<void(const FeatureEvent&)>>>
      listeners_;  // Guarded by listeners_mu_.
};

}  // namespace talaria::mcp
