// W&B run metrics over GraphQL (run_metrics.h).
#include "rl/run_metrics.h"

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "talaria/base/base64.h"
#include "talaria/net/send_and_collect.h"

namespace talaria::rl {
namespace {

constexpr size_t kMaxAnswerBytes = size_t{16} << 20;

constexpr std::string_view kRunsQuery =
    R"(query TalariaRuns($entity: String!, $project: String!, $filters: JSONString, $samples: Int!, $withHistory: Boolean!) {
  project(name: $project, entityName: $entity) {
    runs(filters: $filters, first: 1) {
      edges { node { name displayName state summaryMetrics history(samples: $samples) @include(if: $withHistory) } }
    }
  }
})";

// The web page of a run: the app's origin beside the API's (api.wandb.ai -> wandb.ai).
std::string RunUrl(const RlSettings& s, const std::string& project, const std::string& name) {
  std::string app = s.wandb_base_url;
  if (const size_t at = app.find("://api."); at != std::string::npos) app.erase(at + 3, 4);
  return app + "/" + s.wandb_entity + "/" + project + "/runs/" + name;
}

// object[key] when `object` is an object holding a non-null `key`, else null.
const Json* Member(const Json* object, std::string_view key) {
  if (object == nullptr || !object->is_object()) return nullptr;
  auto it = object->find(key);
  return it == object->end() || it->is_null() ? nullptr : &*it;
}

// A JSON string field holding JSON text, parsed; `fallback` when absent or not JSON.
Json EmbeddedJson(const Json& node, std::string_view key, Json fallback) {
  auto it = node.find(key);
  if (it == node.end() || !it->is_string()) return fallback;
  auto parsed = ParseJson(it->get_ref<const std::string&>());
  return parsed ? std::move(*parsed) : fallback;
}

}  // namespace

Result<RunMetrics> FetchRunMetrics(const RlSettings& settings, const std::string& project,
                                   const std::string& display_name, int history_samples,
                                   const std::stop_token& stop) {
  const std::string key = EnvValue("WANDB_API_KEY");
  if (key.empty()) return Err(FailedPreconditionError("WANDB_API_KEY is not set"));
  net::HttpRequest req;
  req.method = "POST";
  req.url = settings.wandb_base_url + "/graphql";
  req.headers.emplace_back("Authorization", "Basic " + Base64Encode("api:" + key));
  req.headers.emplace_back("Content-Type", "application/json");
  req.headers.emplace_back("Accept", "application/json");
  req.headers.emplace_back("User-Agent", "talaria-rl/1.0");
  req.body = DumpJson(Json{{"query", kRunsQuery},
                           {"variables",
                            {{"entity", settings.wandb_entity},
                             {"project", project},
                             {"filters", DumpJson(Json{{"display_name", display_name}})},
                             {"samples", history_samples},
                             {"withHistory", history_samples > 0}}}});
  req.total_timeout = std::chrono::seconds(30);
  req.connect_timeout = std::chrono::seconds(10);
  req.max_body_bytes = kMaxAnswerBytes;
  req.decompress = true;
  auto sent = net::SendAndCollect(req, stop);
  if (!sent) return Err(sent.error().WithContext("W&B"));
  const std::string& body = sent->body;
  if (sent->head.status < 200 || sent->head.status > 299) {
    return Err(UnavailableError("W&B answered HTTP " + std::to_string(sent->head.status) +
                                (body.empty() ? "" : ": " + body.substr(0, 300))));
  }
  auto json = ParseJson(body);
  if (!json || !json->is_object()) {
    return Err(UnavailableError("W&B answered with something that is not a JSON object"));
  }
  if (auto errors = json->find("errors");
      errors != json->end() && errors->is_array() && !errors->empty()) {
    std::string message = JsonStringField((*errors)[0], "message");
    return Err(UnavailableError("W&B: " + (message.empty() ? DumpJson(*errors) : message)));
  }
  const Json* project_node = Member(Member(&*json, "data"), "project");
  if (project_node == nullptr) {
    return Err(NotFoundError("W&B has no project " + settings.wandb_entity + "/" + project));
  }
  const Json* edges = Member(Member(project_node, "runs"), "edges");
  const Json* first =
      edges != nullptr && edges->is_array() && !edges->empty() ? &(*edges)[0] : nullptr;
  const Json* node_ptr = Member(first, "node");
  if (node_ptr == nullptr) {
    return Err(NotFoundError("W&B has no run named " + display_name + " in " +
                             settings.wandb_entity + "/" + project + " yet"));
  }
  const Json& node = *node_ptr;
  RunMetrics m;
  const std::string name = JsonStringField(node, "name");
  m.url = RunUrl(settings, project, name.empty() ? display_name : name);
  m.state = JsonStringField(node, "state");
  m.summary = EmbeddedJson(node, "summaryMetrics", Json::object());
  if (!m.summary.is_object()) m.summary = Json::object();
  m.history = Json::array();
  if (auto h = node.find("history"); h != node.end() && h->is_array()) {
    for (const Json& row : *h) {
      if (!row.is_string()) continue;
      auto parsed = ParseJson(row.get_ref<const std::string&>());
      if (parsed && parsed->is_object()) m.history.push_back(std::move(*parsed));
    }
  }
  return m;
}

Json StatusMetrics(const Json& summary) {
  auto get = [&](std::string_view key) {
    auto it = summary.find(key);
    return it == summary.end() ? Json() : *it;
  };
  Json step = get("_step");
  return Json{{"step", step.is_null() ? Json(0) : step},
              {"reward_mean", get("train/reward_mean")},
              {"loss", get("train/loss")},
              {"percent_correct", get("train/percent_correct")},
              {"eval_percent_correct", get("eval/percent_correct")}};
}

}  // namespace talaria::rl
