// mixture_of_agents: config, the two layers, and the tool's registration (toolset "moa").
#include "agent/mixture_of_agents.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>

#include "agent/agent_impl.h"
#include "agent/agent_routing.h"
#include "agent/messages.h"
#include "agent/text_util.h"
#include "talaria/base/strings.h"
#include "talaria/core/runtime.h"
#include "talaria/core/tool_registration.h"

namespace talaria::agent {
namespace {

using Clock = std::chrono::steady_clock;

[[maybe_unused]] const bool kMoaSectionDeclared = (DeclareConfigSection("moa"), true);

// The reference asks each reference model for up to 32,000 tokens (its answers are long,
// reasoned ones) and leaves the aggregator's limit to the endpoint.
constexpr int64_t kReferenceMaxTokens = 32'000;

constexpr std::string_view kFailedResponse =
    "MoA processing failed. Please try again or use a single model for this query.";

Status BadMoaSetting(std::string_view key, std::string_view why) {
  return InvalidArgumentError("config.yaml: moa." + std::string(key) + " " + std::string(why));
}

// The efforts a reasoning model can be asked for, as the reference and OpenRouter name them;
// "none" sends no effort at all (an endpoint that rejects the field).
Result<std::string> ReadEffort(const Json& value, std::string_view key) {
  constexpr std::string_view kEfforts[] = {"minimal", "low", "medium", "high", "xhigh"};
  if (value.is_string()) {
    const std::string effort = value.get<std::string>();
    if (effort == "none") return std::string();
    for (std::string_view known : kEfforts) {
      if (effort == known) return effort;
    }
  }
  return Err(BadMoaSetting(key, "must be one of none, minimal, low, medium, high, xhigh"));
}

Result<std::chrono::milliseconds> ReadSeconds(const Json& value, std::string_view key) {
  if (!value.is_number() || value.get<double>() <= 0 || value.get<double>() > 86'400) {
    return Err(BadMoaSetting(key, "must be a number of seconds above 0 (at most 86400)"));
  }
  return std::chrono::milliseconds(
      std::max<int64_t>(1, static_cast<int64_t>(value.get<double>() * 1000.0)));
}

Result<MoaModel> ReadModel(const Json& value, const std::string& key, int64_t max_tokens) {
  MoaModel m;
  m.max_tokens = max_tokens;
  if (value.is_string()) {
    m.name = value.get<std::string>();
  } else if (value.is_object()) {
    for (const auto& [k, v] : value.items()) {
      std::string at = key;
      at += '.';
      at += k;
      if (k == "name" || k == "model") {
        if (!v.is_string()) return Err(BadMoaSetting(at, "must be a string"));
        m.name = v.get<std::string>();
      } else if (k == "temperature") {
        if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 2) {
          return Err(BadMoaSetting(at, "must be a number from 0 to 2"));
        }
        m.temperature = v.get<double>();
      } else if (k == "max_tokens") {
        if (!v.is_number_integer() || v.get<int64_t>() < 0) {
          return Err(BadMoaSetting(at, "must be a whole number of at least 0"));
        }
        m.max_tokens = v.get<int64_t>();
      } else if (k == "reasoning_effort") {
        m.reasoning_effort = TALARIA_TRY(ReadEffort(v, at));
      } else {
        return Err(BadMoaSetting(
            at, "is not a known key (name, temperature, max_tokens, reasoning_effort)"));
      }
    }
  } else {
    return Err(BadMoaSetting(
        key, "must be a model name or {name, temperature, max_tokens, reasoning_effort}"));
  }
  if (Trim(m.name).empty()) return Err(BadMoaSetting(key, "names no model"));
  return m;
}

// One model's answer to `messages`, or why there is none.
struct Answer {
  std::string model;
  std::string text;
  std::string error;
  Usage usage;
  bool done = false;
};

Result<ChatResponse> Ask(const MoaSettings& settings, const MoaModel& model,
                         std::vector<Message> messages, std::stop_token stop) {
  ModelSettings ms = settings.endpoint;
  ms.model = model.name;
  ms.temperature = model.temperature;
  // The reference leaves temperature out for OpenAI's gpt- reasoning models, which refuse it.
  if (model.name.rfind("gpt-", 0) == 0 || model.name.find("/gpt-") != std::string::npos) {
    ms.temperature.reset();
  }
  if (model.max_tokens > 0) ms.max_output_tokens = model.max_tokens;
  ms.reasoning_effort = model.reasoning_effort.value_or(settings.reasoning_effort);
  auto client = ModelClient::Open(std::move(ms));
  if (!client) return Err(client.error());
  ChatRequest request;
  request.messages = std::move(messages);
  return (*client)->Complete(request, nullptr, std::move(stop));
}

std::string OneLine(std::string_view text) {
  std::string out(Utf8Prefix(text, 300));
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

Json ModelsUsed(const MoaSettings& settings) {
  Json refs = Json::array();
  for (const MoaModel& m : settings.references) refs.push_back(m.name);
  return Json{{"reference_models", refs}, {"aggregator_model", settings.aggregator.name}};
}

}  // namespace

Result<std::optional<MoaSettings>> MoaSettingsFromConfig(const Config& config) {
  if (!config.raw || !config.raw->is_object()) return std::optional<MoaSettings>();
  auto section = config.raw->find("moa");
  if (section == config.raw->end() || section->is_null()) return std::optional<MoaSettings>();
  if (!section->is_object()) return Err(InvalidArgumentError("config.yaml: moa must be a mapping"));
  MoaSettings s;
  // The endpoint starts as the model: section's (its key, headers, CA), then moa's keys.
  s.endpoint = TALARIA_TRY(ModelSettingsFromConfig(config, {}));
  s.endpoint.fallback.clear();
  std::string key_env;
  bool has_aggregator = false;
  for (const auto& [key, value] : section->items()) {
    if (key == "base_url") {
      if (!value.is_string() || value.get<std::string>().empty()) {
        return Err(BadMoaSetting(key, "must be a URL"));
      }
      s.endpoint.base_url = value.get<std::string>();
    } else if (key == "api_key_env") {
      if (!value.is_string()) return Err(BadMoaSetting(key, "must be a variable name"));
      key_env = value.get<std::string>();
    } else if (key == "reference_models") {
      if (!value.is_array()) return Err(BadMoaSetting(key, "must be a list of models"));
      for (size_t i = 0; i < value.size(); ++i) {
        std::string at = key;
        at += '[';
        at += std::to_string(i);
        at += ']';
        s.references.push_back(TALARIA_TRY(ReadModel(value[i], at, kReferenceMaxTokens)));
      }
    } else if (key == "aggregator") {
      s.aggregator = TALARIA_TRY(ReadModel(value, key, 0));
      has_aggregator = true;
    } else if (key == "reference_timeout_seconds") {
      s.reference_timeout = TALARIA_TRY(ReadSeconds(value, key));
    } else if (key == "timeout_seconds") {
      s.timeout = TALARIA_TRY(ReadSeconds(value, key));
    } else if (key == "min_successful") {
      if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > 64) {
        return Err(BadMoaSetting(key, "must be a whole number from 1 to 64"));
      }
      s.min_successful = static_cast<int>(value.get<int64_t>());
    } else if (key == "reasoning_effort") {
      s.reasoning_effort = TALARIA_TRY(ReadEffort(value, key));
    } else if (key == "max_retries") {
      if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > 10) {
        return Err(BadMoaSetting(key, "must be a whole number from 0 to 10"));
      }
      s.endpoint.max_retries = static_cast<int>(value.get<int64_t>());
    } else if (key == "pricing") {
      if (!value.is_object())
        return Err(BadMoaSetting(key, "must be a mapping {input, cached, output}"));
      s.endpoint.pricing = Pricing{};
      for (const auto& [price, amount] : value.items()) {
        std::string at = key;
        at += '.';
        at += price;
        if (!amount.is_number() || amount.get<double>() < 0) {
          return Err(BadMoaSetting(at, "must be a number of at least 0"));
        }
        if (price == "input") {
          s.endpoint.pricing.input_per_mtok = amount.get<double>();
        } else if (price == "cached") {
          s.endpoint.pricing.cached_per_mtok = amount.get<double>();
        } else if (price == "output") {
          s.endpoint.pricing.output_per_mtok = amount.get<double>();
        } else {
          return Err(BadMoaSetting(at, "is not a known key (input, cached, output)"));
        }
      }
    } else {
      return Err(
          BadMoaSetting(key,
                        "is not a setting (base_url, api_key_env, reference_models, aggregator, "
                        "reference_timeout_seconds, timeout_seconds, min_successful, "
                        "reasoning_effort, max_retries, pricing)"));
    }
  }
  if (s.references.empty()) {
    return Err(FailedPreconditionError("config.yaml: moa.reference_models names no model"));
  }
  if (!has_aggregator)
    return Err(FailedPreconditionError("config.yaml: moa.aggregator is not set"));
  if (!key_env.empty()) {
    s.endpoint.api_key_env = key_env;
    const char* key = std::getenv(key_env.c_str());
    if (key == nullptr || *key == '\0') {
      return Err(
          FailedPreconditionError("moa.api_key_env names " + key_env + ", which is not set"));
    }
    s.endpoint.api_key = key;
  }
  return std::optional<MoaSettings>(std::move(s));
}

std::string AggregatorPrompt(const std::vector<std::string>& answers) {
  std::string p =
      "Several models have answered the user's latest question; their answers follow. Combine "
      "them into one answer of the best quality you can give. Judge each critically: some may "
      "be wrong, biased or incomplete, so do not just repeat them. Keep what is correct, fix or "
      "drop what is not, and write one clear, well-organized and complete answer.\n\n"
      "Responses from models:";
  for (size_t i = 0; i < answers.size(); ++i) {
    p += "\n" + std::to_string(i + 1) + ". " + answers[i];
  }
  return p;
}

MoaOutcome RunMixture(const MoaSettings& settings, const std::string& prompt,
                      const std::stop_token& stop) {
  MoaOutcome out;
  const Clock::time_point started = Clock::now();
  const Clock::time_point overall = started + settings.timeout;
  auto failed = [&](std::string error) {
    out.result = Json{{"success", false},
                      {"response", kFailedResponse},
                      {"models_used", ModelsUsed(settings)},
                      {"error", std::move(error)}};
    return out;
  };

  // Layer 1: every reference model at once, each stopped at its own deadline, all at the
  // overall one or when the caller stops.
  const size_t n = settings.references.size();
  std::vector<Answer> answers(n);
  std::vector<std::stop_source> stops(n);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    answers[i].model = settings.references[i].name;
    threads.emplace_back([&, i] {
      auto r = Ask(settings, settings.references[i], {TextMessage(Role::kUser, prompt)},
                   stops[i].get_token());
      std::lock_guard l(mu);
      Answer& a = answers[i];
      if (r) {
        a.usage = r->usage;
        a.text = r->message.content;
        if (Trim(a.text).empty()) a.error = "answered with nothing";
      } else {
        a.error = r.error().code() == StatusCode::kCancelled && stops[i].stop_requested()
                      ? "stopped (timeout or interrupt)"
                      : r.error().message();
      }
      a.done = true;
      cv.notify_all();
    });
  }
  {
    const Clock::time_point each = std::min(started + settings.reference_timeout, overall);
    std::unique_lock l(mu);
    auto all_done = [&] {
      return std::all_of(answers.begin(), answers.end(), [](const Answer& a) { return a.done; });
    };
    while (!all_done()) {
      if (stop.stop_requested() || Clock::now() >= each) {
        for (size_t i = 0; i < n; ++i) {
          if (!answers[i].done) stops[i].request_stop();
        }
      }
      cv.wait_for(l, std::chrono::milliseconds(20));
    }
  }
  for (std::thread& t : threads) t.join();

  std::vector<std::string> good;
  Json failures = Json::array();
  for (const Answer& a : answers) {
    out.usage += a.usage;
    if (a.error.empty()) {
      good.push_back(a.text);
    } else {
      failures.push_back(Json{{"model", a.model}, {"error", OneLine(a.error)}});
    }
  }
  if (stop.stop_requested()) return failed("interrupted");
  if (static_cast<int>(good.size()) < settings.min_successful) {
    return failed(std::to_string(good.size()) + " of " + std::to_string(n) +
                  " reference models answered; at least " +
                  std::to_string(settings.min_successful) + " needed. " + DumpJson(failures));
  }

  // Layer 2: the aggregator, within what is left of the overall timeout.
  std::stop_source agg_stop;
  std::stop_callback forward(stop, [&agg_stop] { agg_stop.request_stop(); });
  std::mutex agg_mu;
  std::condition_variable agg_cv;
  bool agg_done = false;
  Result<ChatResponse> agg = Err(InternalError("not run"));
  std::thread aggregator([&] {
    auto r =
        Ask(settings, settings.aggregator,
            {TextMessage(Role::kSystem, AggregatorPrompt(good)), TextMessage(Role::kUser, prompt)},
            agg_stop.get_token());
    std::lock_guard l(agg_mu);
    agg = std::move(r);
    agg_done = true;
    agg_cv.notify_all();
  });
  {
    std::unique_lock l(agg_mu);
    if (!agg_cv.wait_until(l, overall, [&] { return agg_done; })) {
      agg_stop.request_stop();
      agg_cv.wait(l, [&] { return agg_done; });
    }
  }
  aggregator.join();
  if (!agg) {
    return failed(
        "the aggregator " + settings.aggregator.name + " failed: " +
        OneLine(Clock::now() >= overall ? "the overall timeout passed" : agg.error().message()));
  }
  out.usage += agg->usage;
  if (Trim(agg->message.content).empty()) {
    return failed("the aggregator " + settings.aggregator.name + " answered with nothing");
  }
  out.result = Json{
      {"success", true}, {"response", agg->message.content}, {"models_used", ModelsUsed(settings)}};
  if (!failures.empty()) out.result["failed_models"] = failures;
  return out;
}

namespace {

constexpr std::string_view kSchema = R"json({
  "name": "mixture_of_agents",
  "description": "Put one hard problem to several strong models at once, then have an aggregator model synthesize their answers into one. Use it sparingly, for problems where one model's answer is likely not good enough (hard math, intricate algorithms, difficult reasoning): every call makes one request per configured reference model plus one for the aggregator, and can take minutes. Give the whole problem in user_prompt: the models see nothing else of this conversation.",
  "parameters": {
    "type": "object",
    "properties": {
      "user_prompt": {
        "type": "string",
        "description": "The complete problem or question, with everything the models need to know."
      }
    },
    "required": ["user_prompt"]
  }
})json";

// The process's settings: read from the config a tool call reads (ToolCallConfig: the one the
// process's Runtime loaded) once, and again only when a new Runtime loads another.
std::shared_ptr<const MoaSessionSettings> ProcessSettings() {
  struct Parsed {
    std::mutex mu;
    std::shared_ptr<const Config> from;             // Guarded by mu.
    std::shared_ptr<const MoaSessionSettings> moa;  // Guarded by mu.
  };
  static Parsed* const parsed = new Parsed;  // never destroyed: read by late tool calls
  auto config = ToolCallConfig();
  if (!config) {
    return std::make_shared<const MoaSessionSettings>(MoaSessionSettings{Err(config.error())});
  }
  std::lock_guard lock(parsed->mu);
  if (parsed->from != *config) {
    parsed->moa = std::make_shared<const MoaSessionSettings>(
        MoaSessionSettings{MoaSettingsFromConfig(**config)});
    parsed->from = std::move(*config);
  }
  return parsed->moa;
}

// The calling session's settings, read once for it; a call with no agent behind it (`talaria
// call`, `talaria mcp`) uses the process's.
std::shared_ptr<const MoaSessionSettings> SettingsFor(const ToolContext& ctx) {
  std::shared_ptr<const MoaSessionSettings> settings;
  WithSessionAgent(ctx.session_id,
                   [&](AgentImpl& agent) { settings = agent.MoaSettingsOfSession(); });
  if (settings) return settings;
  return ProcessSettings();
}

ToolResult RunTool(const Json& args, ToolContext& ctx) {
  const std::string prompt = args.value("user_prompt", std::string());
  if (Trim(prompt).empty()) return ToolResult::Error("mixture_of_agents: user_prompt is empty");
  const std::shared_ptr<const MoaSessionSettings> session = SettingsFor(ctx);
  const Result<std::optional<MoaSettings>>& settings = session->loaded;
  if (!settings) return ToolResult::Error("mixture_of_agents: " + settings.error().message());
  if (!*settings) {
    return ToolResult::Error(
        "mixture_of_agents: config.yaml has no moa: section (models, endpoint)");
  }
  MoaOutcome outcome = RunMixture(**settings, prompt, ctx.cancel);
  const double cost = (*settings)->endpoint.pricing.Cost(outcome.usage);
  WithSessionAgent(ctx.session_id,
                   [&](AgentImpl& agent) { agent.AddOutsideUsage(outcome.usage, cost); });
  ToolResult r = ToolResult::Text(outcome.result.dump(2));
  if (!outcome.result.value("success", false)) r.status = CallStatus::kError;
  return r;
}

}  // namespace

std::shared_ptr<const MoaSessionSettings> AgentImpl::MoaSettingsOfSession() {
  std::lock_guard lock(moa_mu_);
  if (!moa_) {
    moa_ = std::make_shared<const MoaSessionSettings>(
        MoaSessionSettings{MoaSettingsFromConfig(runtime_->config())});
  }
  return moa_;
}

}  // namespace talaria::agent

TALARIA_TOOL(MixtureOfAgents, [] {
  talaria::ToolSpec spec;
  spec.name = "mixture_of_agents";
  spec.toolset = "moa";
  spec.schema = talaria::agent::kSchema;
  spec.handler = talaria::agent::RunTool;
  // Only with a usable configuration (the section, its models, and its key) in the config the
  // process loaded.
  spec.check_fn = [] {
    const auto moa = talaria::agent::ProcessSettings();
    return moa->loaded.has_value() && moa->loaded->has_value();
  };
  spec.unavailable_reason = []() -> std::string {
    const auto moa = talaria::agent::ProcessSettings();
    if (!moa->loaded) return moa->loaded.error().message();
    return "config.yaml has no moa: section (reference_models, aggregator, endpoint)";
  };
  spec.emoji = "\xF0\x9F\xA7\xA0";  // "🧠"
  spec.parallel = talaria::ParallelClass::kSafe;
  spec.annotations.read_only = true;
  spec.annotations.open_world = true;
  return spec;
}());
