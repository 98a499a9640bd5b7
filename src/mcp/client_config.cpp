// The `mcp_servers:` section of config.yaml, tool naming and filters.
#include <fnmatch.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "mcp/server_url.h"
#include "talaria/mcp/client.h"

namespace talaria::mcp {
namespace {

bool MatchesAny(const std::vector<std::string>& patterns, std::string_view name) {
  const std::string n(name);
  for (const auto& p : patterns) {
    if (p == n || ::fnmatch(p.c_str(), n.c_str(), 0) == 0) return true;
  }
  return false;
}

// Reads `key` of `entry` as a list of strings into `out`; false (with `error`) on a wrong shape.
bool ReadStringList(const Json& entry, const char* key, std::vector<std::string>& out,
                    std::string& error) {
  auto it = entry.find(key);
  if (it == entry.end() || it->is_null()) return true;
  if (!it->is_array()) {
    error = std::string("'") + key + "' must be a list";
    return false;
  }
  for (const auto& v : *it) {
    if (v.is_string()) {
      out.push_back(v.get<std::string>());
    } else if (v.is_number() || v.is_boolean()) {
      out.push_back(v.dump());
    } else {
      error = std::string("'") + key + "' must hold strings";
      return false;
    }
  }
  return true;
}

bool ReadStringMap(const Json& entry, const char* key, std::map<std::string, std::string>& out,
                   std::string& error) {
  auto it = entry.find(key);
  if (it == entry.end() || it->is_null()) return true;
  if (!it->is_object()) {
    error = std::string("'") + key + "' must be a mapping";
    return false;
  }
  for (const auto& [k, v] : it->items()) {
    if (v.is_string()) {
      out[k] = v.get<std::string>();
    } else if (v.is_number() || v.is_boolean()) {
      out[k] = v.dump();
    } else if (!v.is_null()) {
      error = std::string("'") + key + "." + k + "' must be a string";
      return false;
    }
  }
  return true;
}

bool ReadSeconds(const Json& entry, const char* key, std::chrono::milliseconds& out,
                 std::string& error) {
  auto it = entry.find(key);
  if (it == entry.end() || it->is_null()) return true;
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() <= 0) {
    error = std::string("'") + key + "' must be a positive number of seconds";
    return false;
  }
  out = std::chrono::milliseconds(static_cast<int64_t>(it->get<double>() * 1000.0));
  return true;
}

std::string ParseEntry(const Json& entry, ServerConfig& config) {
  if (!entry.is_object()) return "the entry must be a mapping";
  std::string error;
  if (auto it = entry.find("enabled"); it != entry.end() && !it->is_null()) {
    if (!it->is_boolean()) return "'enabled' must be true or false";
    config.enabled = it->get<bool>();
  }
  if (auto it = entry.find("command"); it != entry.end() && !it->is_null()) {
    if (!it->is_string()) return "'command' must be a string";
    config.command = it->get<std::string>();
  }
  if (auto it = entry.find("url"); it != entry.end() && !it->is_null()) {
    if (!it->is_string()) return "'url' must be a string";
    config.url = it->get<std::string>();
  }
  if (!ReadStringList(entry, "args", config.args, error) ||
      !ReadStringMap(entry, "env", config.env, error) ||
      !ReadStringMap(entry, "headers", config.headers, error) ||
      !ReadSeconds(entry, "timeout", config.timeout, error) ||
      !ReadSeconds(entry, "connect_timeout", config.connect_timeout, error)) {
    return error;
  }
  if (auto it = entry.find("tools"); it != entry.end() && !it->is_null()) {
    if (!it->is_object()) return "'tools' must be a mapping";
    if (auto inc = it->find("include"); inc != it->end() && !inc->is_null()) {
      std::vector<std::string> include;
      if (!ReadStringList(*it, "include", include, error)) return "tools: " + error;
      config.tools.include = std::move(include);
    }
    if (!ReadStringList(*it, "exclude", config.tools.exclude, error)) return "tools: " + error;
  }
  if (!config.url.empty() && !config.command.empty())
    return "give either 'command' or 'url', not both";
  if (!config.url.empty()) {
    auto url = client_internal::ParseServerUrl(config.url);
    if (!url) return url.error().message();
    if (!config.args.empty() || !config.env.empty())
      return "'args' and 'env' are for 'command' servers, not 'url' ones";
    return {};
  }
  if (!config.headers.empty()) return "'headers' are for 'url' servers, not 'command' ones";
  if (config.command.empty()) return "no 'command' given";
  return {};
}

}  // namespace

bool ToolFilter::Allows(std::string_view tool_name) const {
  if (include) return MatchesAny(*include, tool_name);
  return !MatchesAny(exclude, tool_name);
}

std::string McpToolName(std::string_view server, std::string_view tool) {
  std::string out = "mcp_";
  out.reserve(4 + server.size() + 1 + tool.size());
  auto append = [&out](std::string_view part) {
    for (const char c : part) {
      const bool keep =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      out.push_back(keep ? c : '_');
    }
  };
  append(server);
  out.push_back('_');
  append(tool);
  return out;
}

std::string_view ServerStateName(ServerState state) {
  switch (state) {
    case ServerState::kConnecting:
      return "connecting";
    case ServerState::kConnected:
      return "connected";
    case ServerState::kUnavailable:
      return "unavailable";
    case ServerState::kDisabled:
      return "disabled";
  }
  return "unknown";
}

Result<std::vector<ServerConfig>> ParseServerConfigs(const Json& mcp_servers) {
  std::vector<ServerConfig> out;
  if (mcp_servers.is_null()) return out;
  if (!mcp_servers.is_object()) {
    return Err(
        InvalidArgumentError("config section 'mcp_servers' must be a mapping of name -> server"));
  }
  for (const auto& [name, entry] : mcp_servers.items()) {
    ServerConfig config;
    config.name = name;
    if (name.empty()) {
      config.unusable_reason = "a server needs a non-empty name";
    } else {
      config.unusable_reason = ParseEntry(entry, config);
    }
    out.push_back(std::move(config));
  }
  return out;
}

}  // namespace talaria::mcp
