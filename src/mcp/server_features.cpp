// McpServer's resources, prompts and completion handlers (features.h).
#include <algorithm>
#include <cstdlib>

#include "mcp/server_internal.h"
#include "talaria/mcp/jsonrpc.h"

namespace talaria::mcp {
namespace {

constexpr std::string_view kPageCursorPrefix = "page:";

constexpr size_t kMaxCompletions = 100;

const std::string* StringParam(const Json& params, const char* key) {
  auto it = params.find(key);
  return it != params.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

Json ResourceJson(const ResourceDef& r) {
  Json j = Json::object();
  if (!r.uri.empty()) {
    j["uri"] = r.uri;
  } else {
    j["uriTemplate"] = r.uri_template;
  }
  j["name"] = r.name;
  if (!r.title.empty()) j["title"] = r.title;
  if (!r.description.empty()) j["description"] = r.description;
  if (!r.mime_type.empty()) j["mimeType"] = r.mime_type;
  return j;
}

Json PromptJson(const PromptDef& p) {
  Json j = Json::object();
  j["name"] = p.name;
  if (!p.title.empty()) j["title"] = p.title;
  if (!p.description.empty()) j["description"] = p.description;
  if (!p.arguments.empty()) {
    Json args = Json::array();
    for (const PromptArgument& a : p.arguments) {
      Json arg = Json::object();
      arg["name"] = a.name;
      if (!a.description.empty()) arg["description"] = a.description;
      arg["required"] = a.required;
      args.push_back(std::move(arg));
    }
    j["arguments"] = std::move(args);
  }
  return j;
}

// A handler's Status as a JSON-RPC error.
Reply FromStatus(const Status& s, int not_found_code) {
  switch (s.code()) {
    case StatusCode::kNotFound:
      return Error(not_found_code, s.message());
    case StatusCode::kInvalidArgument:
      return Error(kInvalidParams, "Invalid params: " + s.message());
    default:
      return Error(kInternalError, "Internal error: " + s.message());
  }
}

Reply ResourceNotFound(const std::string& uri) {
  Reply r = Error(kResourceNotFound, "Resource not found: " + uri);
  r.data = Json::object({{"uri", uri}});
  return r;
}

}  // namespace

std::shared_ptr<const FeatureSnapshot> FeatureView::Snapshot() const {
  return features_ ? features_->Snapshot() : std::make_shared<const FeatureSnapshot>();
}

FeatureView::FeatureView(std::shared_ptr<ServerFeatures> features,
                         const std::vector<std::string>& selection, const Toolsets& toolsets,
                         size_t page_size)
    : features_(std::move(features)), page_size_(page_size) {
  std::vector<std::string> pending = selection;
  while (!pending.empty()) {
    std::string name = std::move(pending.back());
    pending.pop_back();
    if (std::find(selection_.begin(), selection_.end(), name) != selection_.end()) continue;
    if (auto def = toolsets.Find(name)) {
      for (const std::string& included : def->includes) pending.push_back(included);
    }
    selection_.push_back(std::move(name));
  }
}

bool FeatureView::Serves(const std::string& toolset) const {
  if (toolset.empty()) return true;
  return std::any_of(selection_.begin(), selection_.end(),
                     [&](const std::string& s) { return s == toolset || s == "all" || s == "*"; });
}

void FeatureView::AddCapabilities(Json& capabilities) const {
  if (!features_) return;
  auto snap = Snapshot();
  auto served = [this](const auto& list) {
    return std::any_of(list.begin(), list.end(),
                       [this](const auto& d) { return Serves(d->toolset); });
  };
  const bool resources = served(snap->resources) || served(snap->templates);
  const bool prompts = served(snap->prompts);
  if (resources)
    capabilities["resources"] = Json::object({{"subscribe", true}, {"listChanged", true}});
  if (prompts) capabilities["prompts"] = Json::object({{"listChanged", true}});
  if (resources || prompts) capabilities["completions"] = Json::object();
}

// The page of `served` (the JSON of each served definition, in the snapshot's order) that
// params.cursor names, under `key`. A cursor is the offset of the page's first item: the lists
// change rarely, and a change is announced with list_changed, after which clients list again.
template <class Defs, class ToJson>
Reply FeatureView::Page(const Json& params, const Defs& defs, ToJson to_json,
                        const char* key) const {
  size_t offset = 0;
  if (auto cursor = params.find("cursor"); cursor != params.end() && !cursor->is_null()) {
    const std::string* text =
        cursor->is_string() ? &cursor->get_ref<const std::string&>() : nullptr;
    const char* digits = text != nullptr && text->starts_with(kPageCursorPrefix)
                             ? text->c_str() + kPageCursorPrefix.size()
                             : nullptr;
    char* end = nullptr;
    const unsigned long long value =
        digits != nullptr && *digits != '\0' ? std::strtoull(digits, &end, 10) : 0;
    if (digits == nullptr || end == nullptr || *end != '\0' || value == 0) {
      return Error(kInvalidParams, "Invalid params: unknown cursor");
    }
    offset = static_cast<size_t>(value);
  }
  Json page = Json::array();
  size_t index = 0;
  bool more = false;
  for (const auto& d : defs) {
    if (!Serves(d->toolset)) continue;
    if (index++ < offset) continue;
    if (page.size() == page_size_) {
      more = true;
      break;
    }
    page.push_back(to_json(*d));
  }
  Reply reply;
  reply.result[key] = std::move(page);
  if (more)
    reply.result["nextCursor"] =
        std::string(kPageCursorPrefix) + std::to_string(offset + page_size_);
  return reply;
}

Reply FeatureView::ListResources(const Json& params) const {
  return Page(
      params, Snapshot()->resources, [](const auto& r) { return ResourceJson(r); }, "resources");
}

Reply FeatureView::ListTemplates(const Json& params) const {
  return Page(
      params, Snapshot()->templates, [](const auto& t) { return ResourceJson(t); },
      "resourceTemplates");
}

Reply FeatureView::ReadResource(const Json& params, ToolContext& ctx) const {
  const std::string* uri = StringParam(params, "uri");
  if (uri == nullptr)
    return Error(kInvalidParams, "Invalid params: resources/read needs a uri (a string)");
  ResourceRequest request;
  request.uri = *uri;
  auto def = Snapshot()->FindResource(*uri, &request.variables);
  if (!def || !Serves(def->toolset)) return ResourceNotFound(*uri);
  Result<Json> contents = def->read(request, ctx);
  if (!contents) {
    if (contents.error().code() == StatusCode::kNotFound) return ResourceNotFound(*uri);
    return FromStatus(contents.error(), kResourceNotFound);
  }
  if (!contents->is_array())
    return Error(kInternalError, "Internal error: the resource's contents are not an array");
  Reply reply;
  reply.result["contents"] = std::move(*contents);
  return reply;
}

Reply FeatureView::CheckSubscribable(const Json& params, std::string* uri) const {
  const std::string* given = StringParam(params, "uri");
  if (given == nullptr) return Error(kInvalidParams, "Invalid params: needs a uri (a string)");
  auto def = Snapshot()->FindResource(*given, nullptr);
  if (!def || !Serves(def->toolset)) return ResourceNotFound(*given);
  *uri = *given;
  return Reply{};
}

Reply FeatureView::ListPrompts(const Json& params) const {
  return Page(
      params, Snapshot()->prompts, [](const auto& p) { return PromptJson(p); }, "prompts");
}

Reply FeatureView::GetPrompt(const Json& params, ToolContext& ctx) const {
  const std::string* name = StringParam(params, "name");
  if (name == nullptr)
    return Error(kInvalidParams, "Invalid params: prompts/get needs a name (a string)");
  auto def = Snapshot()->FindPrompt(*name);
  if (!def || !Serves(def->toolset))
    return Error(kInvalidParams, "Invalid params: unknown prompt: " + *name);
  Json args = Json::object();
  if (auto a = params.find("arguments"); a != params.end() && !a->is_null()) {
    if (!a->is_object())
      return Error(kInvalidParams, "Invalid params: arguments must be an object");
    for (const auto& [key, value] : a->items()) {
      if (!value.is_string())
        return Error(kInvalidParams, "Invalid params: argument " + key + " must be a string");
    }
    args = *a;
  }
  for (const PromptArgument& arg : def->arguments) {
    if (arg.required && !args.contains(arg.name)) {
      return Error(kInvalidParams,
                   "Invalid params: prompt " + *name + " needs the argument " + arg.name);
    }
  }
  Result<Json> got = def->get(args, ctx);
  if (!got) return FromStatus(got.error(), kInvalidParams);
  if (!got->is_object() || !got->contains("messages")) {
    return Error(kInternalError, "Internal error: the prompt returned no messages");
  }
  Reply reply;
  reply.result = std::move(*got);
  return reply;
}

Reply FeatureView::Complete(const Json& params) const {
  auto ref = params.find("ref");
  auto argument = params.find("argument");
  if (ref == params.end() || !ref->is_object() || argument == params.end() ||
      !argument->is_object()) {
    return Error(kInvalidParams,
                 "Invalid params: completion/complete needs ref and argument objects");
  }
  const std::string* type = StringParam(*ref, "type");
  const std::string* arg_name = StringParam(*argument, "name");
  const std::string* arg_value = StringParam(*argument, "value");
  if (type == nullptr || arg_name == nullptr || arg_value == nullptr) {
    return Error(kInvalidParams,
                 "Invalid params: ref.type, argument.name and argument.value must be strings");
  }
  Json context_args = Json::object();
  if (auto c = params.find("context"); c != params.end() && c->is_object()) {
    if (auto a = c->find("arguments"); a != c->end() && a->is_object()) context_args = *a;
  }
  auto snap = Snapshot();
  CompleteFn complete;
  if (*type == "ref/prompt") {
    const std::string* name = StringParam(*ref, "name");
    auto def = name != nullptr ? snap->FindPrompt(*name) : nullptr;
    if (!def || !Serves(def->toolset))
      return Error(kInvalidParams, "Invalid params: unknown prompt in ref");
    complete = def->complete;
  } else if (*type == "ref/resource") {
    const std::string* uri = StringParam(*ref, "uri");
    auto def = uri != nullptr ? snap->FindTemplate(*uri) : nullptr;
    if (!def && uri != nullptr) def = snap->FindResource(*uri, nullptr);
    if (!def || !Serves(def->toolset))
      return Error(kInvalidParams, "Invalid params: unknown resource in ref");
    complete = def->complete;
  } else {
    return Error(kInvalidParams, "Invalid params: ref.type must be ref/prompt or ref/resource");
  }
  std::vector<std::string> values;
  if (complete) values = complete(*arg_name, *arg_value, context_args);
  const size_t total = values.size();
  if (values.size() > kMaxCompletions) values.resize(kMaxCompletions);
  Json completion = Json::object();
  completion["values"] = values;
  completion["total"] = total;
  completion["hasMore"] = total > values.size();
  Reply reply;
  reply.result["completion"] = std::move(completion);
  return reply;
}

}  // namespace talaria::mcp
