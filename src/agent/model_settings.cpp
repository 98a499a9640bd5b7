// ModelSettingsFromConfig: config.yaml's `model:` section, then the environment, then flags.
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "talaria/agent/model_client.h"

namespace talaria::agent {
namespace {

[[maybe_unused]] const bool kModelSectionDeclared = (DeclareConfigSection("model"), true);

constexpr const char* kDefaultKeyVariables[] = {"TALARIA_API_KEY", "OPENAI_API_KEY"};

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

Status BadModelSetting(std::string_view key, std::string_view why) {
  const std::string where = key.empty() ? "model" : "model." + std::string(key);
  return InvalidArgumentError("config.yaml: " + where + " " + std::string(why));
}

Status ReadString(const Json& value, std::string_view key, std::string& out) {
  if (!value.is_string()) return BadModelSetting(key, "must be a string");
  out = value.get<std::string>();
  return Status::Ok();
}

Status ReadInt(const Json& value, std::string_view key, int64_t& out, int64_t min) {
  if (!value.is_number_integer() || value.get<int64_t>() < min) {
    return BadModelSetting(key, "must be a whole number of at least " + std::to_string(min));
  }
  out = value.get<int64_t>();
  return Status::Ok();
}

Status ReadNumber(const Json& value, std::string_view key, double& out) {
  if (!value.is_number() || value.get<double>() < 0) {
    return BadModelSetting(key, "must be a number of at least 0");
  }
  out = value.get<double>();
  return Status::Ok();
}

Status ReadMillis(const Json& value, std::string_view key, std::chrono::milliseconds& out) {
  double seconds = 0;
  TALARIA_RETURN_IF_ERROR(ReadNumber(value, key, seconds));
  out = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0));
  return Status::Ok();
}

// One model's keys (the section itself, or an entry of its fallback list) onto `out`.
Status ApplyModelKeys(const Json& section, std::string_view prefix, ModelSettings& out,
                      bool allow_fallback) {
  if (!section.is_object()) return BadModelSetting(prefix, "must be a mapping");
  const Json* fallback_list = nullptr;
  for (const auto& [key, value] : section.items()) {
    const std::string name = prefix.empty() ? key : std::string(prefix) + "." + key;
    if (key == "base_url") {
      TALARIA_RETURN_IF_ERROR(ReadString(value, name, out.base_url));
    } else if (key == "name" || key == "model") {
      TALARIA_RETURN_IF_ERROR(ReadString(value, name, out.model));
    } else if (key == "api_key_env") {
      TALARIA_RETURN_IF_ERROR(ReadString(value, name, out.api_key_env));
    } else if (key == "context_window") {
      TALARIA_RETURN_IF_ERROR(ReadInt(value, name, out.context_window, 1));
    } else if (key == "max_output_tokens") {
      TALARIA_RETURN_IF_ERROR(ReadInt(value, name, out.max_output_tokens, 0));
    } else if (key == "temperature") {
      if (value.is_null()) {
        out.temperature.reset();
      } else {
        double t = 0;
        TALARIA_RETURN_IF_ERROR(ReadNumber(value, name, t));
        out.temperature = t;
      }
    } else if (key == "headers") {
      if (!value.is_object())
        return BadModelSetting(name, "must be a mapping of header names to values");
      out.headers.clear();
      for (const auto& [header, header_value] : value.items()) {
        if (!header_value.is_string() && !header_value.is_number()) {
          std::string header_key = name;
          header_key += '.';
          header_key += header;
          return BadModelSetting(header_key, "must be a string");
        }
        out.headers.emplace_back(header, header_value.is_string() ? header_value.get<std::string>()
                                                                  : DumpJson(header_value));
      }
    } else if (key == "tool_call_format") {
      std::string format;
      TALARIA_RETURN_IF_ERROR(ReadString(value, name, format));
      if (format == "native") {
        out.tool_call_format = ToolCallFormat::kNative;
      } else if (format == "hermes_text" || format == "hermes") {
        out.tool_call_format = ToolCallFormat::kHermesText;
      } else {
        return BadModelSetting(name, "must be native or hermes_text, not '" + format + "'");
      }
    } else if (key == "stream") {
      if (!value.is_boolean()) return BadModelSetting(name, "must be true or false");
      out.stream = value.get<bool>();
    } else if (key == "pricing") {
      if (!value.is_object())
        return BadModelSetting(name, "must be a mapping {input, cached, output}");
      for (const auto& [price, amount] : value.items()) {
        std::string price_key = name;
        price_key += '.';
        price_key += price;
        if (price == "input") {
          TALARIA_RETURN_IF_ERROR(ReadNumber(amount, price_key, out.pricing.input_per_mtok));
        } else if (price == "cached") {
          TALARIA_RETURN_IF_ERROR(ReadNumber(amount, price_key, out.pricing.cached_per_mtok));
        } else if (price == "output") {
          TALARIA_RETURN_IF_ERROR(ReadNumber(amount, price_key, out.pricing.output_per_mtok));
        } else {
          return BadModelSetting(price_key, "is not a known key (input, cached, output)");
        }
      }
    } else if (key == "max_retries") {
      int64_t retries = 0;
      TALARIA_RETURN_IF_ERROR(ReadInt(value, name, retries, 0));
      if (retries > 10) return BadModelSetting(name, "must be at most 10");
      out.max_retries = static_cast<int>(retries);
    } else if (key == "connect_timeout") {
      TALARIA_RETURN_IF_ERROR(ReadMillis(value, name, out.connect_timeout));
    } else if (key == "idle_timeout") {
      TALARIA_RETURN_IF_ERROR(ReadMillis(value, name, out.idle_timeout));
    } else if (key == "ca_file") {
      TALARIA_RETURN_IF_ERROR(ReadString(value, name, out.ca_file));
    } else if (key == "fallback" && allow_fallback) {
      if (!value.is_array()) return BadModelSetting(name, "must be a list of models");
      fallback_list = &value;  // read last, so that each copies the whole main model
    } else {
      return BadModelSetting(name, "is not a known key");
    }
  }
  if (fallback_list != nullptr) {
    const std::string name = "fallback";
    out.fallback.clear();
    size_t i = 0;
    for (const Json& entry : *fallback_list) {
      // A fallback starts as a copy of the main model: it names only what differs.
      ModelSettings fallback = out;
      fallback.fallback.clear();
      fallback.api_key_env.clear();
      bool names_key = false;
      if (entry.is_object()) names_key = entry.contains("api_key_env");
      TALARIA_RETURN_IF_ERROR(ApplyModelKeys(entry, name + "[" + std::to_string(i) + "]", fallback,
                                             /*allow_fallback=*/false));
      if (!names_key) fallback.api_key_env = out.api_key_env;
      out.fallback.push_back(std::move(fallback));
      ++i;
    }
  }
  return Status::Ok();
}

// The key from the named variable, or from the first default variable that is set.
void ResolveKey(ModelSettings& model) {
  if (!model.api_key_env.empty()) {
    model.api_key = Env(model.api_key_env.c_str());
    return;
  }
  for (const char* name : kDefaultKeyVariables) {
    std::string key = Env(name);
    if (!key.empty()) {
      model.api_key_env = name;
      model.api_key = std::move(key);
      return;
    }
  }
}

}  // namespace

Result<ModelSettings> ModelSettingsFromConfig(const Config& config, const ModelOverrides& flags) {
  ModelSettings settings;
  if (config.raw && config.raw->is_object()) {
    if (auto it = config.raw->find("model"); it != config.raw->end() && !it->is_null()) {
      TALARIA_RETURN_IF_ERROR(ApplyModelKeys(*it, "", settings, /*allow_fallback=*/true));
    }
  }
  // The fallbacks were copied from the main model before these overrides: they keep the
  // configured endpoint and name of their own.
  if (std::string env = Env("TALARIA_MODEL"); !env.empty()) settings.model = env;
  if (std::string env = Env("TALARIA_BASE_URL"); !env.empty()) settings.base_url = env;
  if (!flags.model.empty()) settings.model = flags.model;
  if (!flags.base_url.empty()) settings.base_url = flags.base_url;
  if (!flags.api_key_env.empty()) settings.api_key_env = flags.api_key_env;
  ResolveKey(settings);
  for (ModelSettings& fallback : settings.fallback) ResolveKey(fallback);
  return settings;
}

}  // namespace talaria::agent
