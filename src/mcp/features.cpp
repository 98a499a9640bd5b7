#include "talaria/mcp/features.h"
#include "talaria/base/base64.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace talaria::mcp {

Json TextContents(std::string_view uri, std::string_view mime_type, std::string_view text) {
  Json item = Json::object();
  item["uri"] = std::string(uri);
  if (!mime_type.empty()) item["mimeType"] = std::string(mime_type);
  item["text"] = std::string(text);
  return Json::array({std::move(item)});
}

Json BlobContents(std::string_view uri, std::string_view mime_type, std::string_view bytes) {
  Json item = Json::object();
  item["uri"] = std::string(uri);
  if (!mime_type.empty()) item["mimeType"] = std::string(mime_type);
  item["blob"] = Base64Encode(bytes);
  return Json::array({std::move(item)});
}

bool MatchUriTemplate(std::string_view tmpl, std::string_view uri,
                      std::map<std::string, std::string>* variables) {
  std::map<std::string, std::string> found;
  size_t t = 0, u = 0;
  while (t < tmpl.size()) {
    if (tmpl[t] != '{') {
      if (u >= uri.size() || uri[u] != tmpl[t]) return false;
      ++t;
      ++u;
      continue;
    }
    const size_t close = tmpl.find('}', t);
    if (close == std::string_view::npos) return false;
    const std::string name(tmpl.substr(t + 1, close - t - 1));
    t = close + 1;
    // A variable runs up to the next literal character of the template (or '/', or the end).
    const char stop = t < tmpl.size() && tmpl[t] != '{' ? tmpl[t] : '/';
    size_t end = u;
    while (end < uri.size() && uri[end] != '/' && uri[end] != stop) ++end;
    if (end == u) return false;
    found[name] = std::string(uri.substr(u, end - u));
    u = end;
  }
  if (u != uri.size()) return false;
  if (variables != nullptr) *variables = std::move(found);
  return true;
}

std::shared_ptr<const ResourceDef> FeatureSnapshot::FindResource(
    std::string_view uri, std::map<std::string, std::string>* variables) const {
  auto it = std::lower_bound(resources.begin(), resources.end(), uri,
                             [](const auto& r, std::string_view u) { return r->uri < u; });
  if (it != resources.end() && (*it)->uri == uri) {
    if (variables != nullptr) variables->clear();
    return *it;
  }
  for (const auto& t : templates) {
    if (MatchUriTemplate(t->uri_template, uri, variables)) return t;
  }
  return nullptr;
}

std::shared_ptr<const PromptDef> FeatureSnapshot::FindPrompt(std::string_view name) const {
  auto it = std::lower_bound(prompts.begin(), prompts.end(), name,
                             [](const auto& p, std::string_view n) { return p->name < n; });
  return it != prompts.end() && (*it)->name == name ? *it : nullptr;
}

std::shared_ptr<const ResourceDef> FeatureSnapshot::FindTemplate(
    std::string_view uri_template) const {
  for (const auto& t : templates) {
    if (t->uri_template == uri_template) return t;
  }
  return nullptr;
}

ServerFeatures::ServerFeatures() : snapshot_(std::make_shared<const FeatureSnapshot>()) {}
ServerFeatures::~ServerFeatures() = default;

Status ServerFeatures::AddResource(ResourceDef def) {
  if (def.name.empty()) return InvalidArgumentError("a resource needs a name");
  if (def.uri.empty() == def.uri_template.empty()) {
    return InvalidArgumentError("resource " + def.name +
                                ": set exactly one of uri and uri_template");
  }
  if (!def.read) return InvalidArgumentError("resource " + def.name + ": no read function");
  const bool is_template = !def.uri_template.empty();
  if (is_template && def.uri_template.find('{') == std::string::npos) {
    return InvalidArgumentError("resource template " + def.uri_template + " has no {variable}");
  }
  auto shared = std::make_shared<const ResourceDef>(std::move(def));
  {
    std::lock_guard lock(mu_);
    auto next = std::make_shared<FeatureSnapshot>(*snapshot_);
    if (is_template) {
      if (next->FindTemplate(shared->uri_template)) {
        return InvalidArgumentError("resource template " + shared->uri_template +
                                    " is already registered");
      }
      next->templates.push_back(shared);
    } else {
      auto it = std::lower_bound(next->resources.begin(), next->resources.end(), shared->uri,
                                 [](const auto& r, const std::string& u) { return r->uri < u; });
      if (it != next->resources.end() && (*it)->uri == shared->uri) {
        return InvalidArgumentError("resource " + shared->uri + " is already registered");
      }
      next->resources.insert(it, shared);
    }
    snapshot_ = std::move(next);
  }
  FeatureEvent event;
  event.kind = FeatureEvent::Kind::kResourcesChanged;
  Publish(event);
  return Status::Ok();
}

Status ServerFeatures::AddPrompt(PromptDef def) {
  if (def.name.empty()) return InvalidArgumentError("a prompt needs a name");
  if (!def.get) return InvalidArgumentError("prompt " + def.name + ": no get function");
  auto shared = std::make_shared<const PromptDef>(std::move(def));
  {
    std::lock_guard lock(mu_);
    auto next = std::make_shared<FeatureSnapshot>(*snapshot_);
    auto it = std::lower_bound(next->prompts.begin(), next->prompts.end(), shared->name,
                               [](const auto& p, const std::string& n) { return p->name < n; });
    if (it != next->prompts.end() && (*it)->name == shared->name) {
      return InvalidArgumentError("prompt " + shared->name + " is already registered");
    }
    next->prompts.insert(it, shared);
    snapshot_ = std::move(next);
  }
  FeatureEvent event;
  event.kind = FeatureEvent::Kind::kPromptsChanged;
  Publish(event);
  return Status::Ok();
}

void ServerFeatures::NotifyResourceUpdated(std::string_view uri) {
  FeatureEvent event;
  event.kind = FeatureEvent::Kind::kResourceUpdated;
  event.uri = std::string(uri);
  Publish(event);
}

std::shared_ptr<const FeatureSnapshot> ServerFeatures::Snapshot() const {
  std::lock_guard lock(mu_);
  return snapshot_;
}

int ServerFeatures::AddListener(std::function<void(const FeatureEvent&)> listener) {
  std::lock_guard lock(listeners_mu_);
  const int id = next_listener_++;
  listeners_.emplace(
      id, std::make_shared<std::function<void(const FeatureEvent&)>>(std::move(listener)));
  return id;
}

void ServerFeatures::RemoveListener(int id) {
  std::lock_guard lock(listeners_mu_);
  listeners_.erase(id);
}

void ServerFeatures::Publish(const FeatureEvent& event) {
  std::vector<std::shared_ptr<std::function<void(const FeatureEvent&)>>> copy;
  {
    std::lock_guard lock(listeners_mu_);
    for (const auto& [id, fn] : listeners_) copy.push_back(fn);
  }
  for (const auto& fn : copy) (*fn)(event);
}

}  // namespace talaria::mcp
