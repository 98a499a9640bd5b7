#include "talaria/core/config.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <sstream>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "talaria/base/paths.h"

namespace talaria {
namespace {

Json YamlToJson(const YAML::Node& node, int depth) {
  if (depth > 64) return nullptr;
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Sequence: {
      Json out = Json::array();
      for (const auto& item : node) out.push_back(YamlToJson(item, depth + 1));
      return out;
    }
    case YAML::NodeType::Map: {
      Json out = Json::object();
      for (const auto& kv : node)
        out[kv.first.as<std::string>()] = YamlToJson(kv.second, depth + 1);
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      if (node.Tag() == "!") return s;  // quoted: always a string
      if (s == "true" || s == "True" || s == "TRUE") return true;
      if (s == "false" || s == "False" || s == "FALSE") return false;
      if (s == "null" || s == "~" || s.empty()) return nullptr;
      auto number = ParseJson(s);
      if (number && number->is_number()) return *number;
      return s;
    }
  }
  return nullptr;
}

Status ShapeError(std::string_view origin, std::string_view what) {
  return InvalidArgumentError(std::string(origin) + ": " + std::string(what));
}

Result<std::vector<std::string>> StringList(const Json& v, std::string_view origin,
                                            std::string_view what) {
  std::vector<std::string> out;
  if (v.is_null()) return out;
  if (!v.is_array())
    return Err(ShapeError(origin, std::string(what) + " must be a list of strings"));
  for (const auto& item : v) {
    if (!item.is_string())
      return Err(ShapeError(origin, std::string(what) + " must be a list of strings"));
    out.push_back(item.get<std::string>());
  }
  return out;
}

Status ReadToolsets(const Json& section, std::string_view origin, Config& config) {
  if (section.is_null()) return Status::Ok();
  if (!section.is_object()) return ShapeError(origin, "toolsets must be a mapping");
  for (const auto& [name, body] : section.items()) {
    if (!body.is_object()) return ShapeError(origin, "toolsets." + name + " must be a mapping");
    ToolsetDef def;
    def.name = name;
    if (auto d = body.find("description"); d != body.end() && d->is_string()) def.description = *d;
    def.tools =
        TALARIA_TRY(StringList(body.value("tools", Json()), origin, "toolsets." + name + ".tools"));
    def.includes = TALARIA_TRY(
        StringList(body.value("includes", Json()), origin, "toolsets." + name + ".includes"));
    config.toolsets.push_back(std::move(def));
  }
  return Status::Ok();
}

Status ReadBudget(const Json& section, std::string_view origin, Config& config) {
  if (section.is_null()) return Status::Ok();
  if (!section.is_object()) return ShapeError(origin, "tool_budget must be a mapping");
  auto number = [&](const char* key, int64_t& out) -> Status {
    auto it = section.find(key);
    if (it == section.end() || it->is_null()) return Status::Ok();
    if (!it->is_number_integer() || it->get<int64_t>() < 0) {
      return ShapeError(origin,
                        std::string("tool_budget.") + key + " must be a non-negative integer");
    }
    out = it->get<int64_t>();
    return Status::Ok();
  };
  int64_t tokens = 0;
  TALARIA_RETURN_IF_ERROR(number("context_window_tokens", tokens));
  if (tokens > 0) config.budget = BudgetConfig::ForContextWindow(tokens);
  TALARIA_RETURN_IF_ERROR(number("result_size_chars", config.budget.default_result_chars));
  TALARIA_RETURN_IF_ERROR(number("turn_budget_chars", config.budget.turn_budget_chars));
  TALARIA_RETURN_IF_ERROR(number("preview_size_chars", config.budget.preview_chars));
  TALARIA_RETURN_IF_ERROR(number("mcp_result_size_chars", config.budget.mcp_result_chars));
  if (auto it = section.find("tool_overrides"); it != section.end() && !it->is_null()) {
    if (!it->is_object()) return ShapeError(origin, "tool_budget.tool_overrides must be a mapping");
    for (const auto& [tool, v] : it->items()) {
      if (!v.is_number_integer()) {
        return ShapeError(origin, "tool_budget.tool_overrides." + tool + " must be an integer");
      }
      config.budget.tool_overrides[tool] = v.get<int64_t>();
    }
  }
  return Status::Ok();
}

// Byte-wise edit distance (insert, delete, substitute, swap of neighbours), for "did you mean".
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// A top-level key nothing reads is most likely a misspelt section, silently ignored otherwise.
std::vector<std::string> UnknownSectionWarnings(const Json& root, std::string_view origin) {
  std::vector<std::string> warnings;
  const std::vector<std::string> known = KnownConfigSections();
  for (const auto& [key, _] : root.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string warning = std::string(origin) + ": unknown top-level key '" + key + "' is ignored";
    std::string_view best;
    size_t best_distance = std::max<size_t>(2, key.size() / 3) + 1;
    for (std::string_view name : known) {
      const size_t distance = EditDistance(key, name);
      if (distance < best_distance) {
        best = name;
        best_distance = distance;
      }
    }
    if (!best.empty()) warning += "; did you mean '" + std::string(best) + "'?";
    warnings.push_back(std::move(warning));
  }
  return warnings;
}

}  // namespace

namespace {

// Sections declared by the modules above core that read them.
struct DeclaredSections {
  std::mutex mu;
  std::vector<std::string> names;  // Guarded by mu.
};

DeclaredSections& Declared() {
  static DeclaredSections* declared = new DeclaredSections;  // never destroyed: read at exit
  return *declared;
}

}  // namespace

void DeclareConfigSection(std::string_view name) {
  DeclaredSections& d = Declared();
  std::lock_guard lock(d.mu);
  if (std::find(d.names.begin(), d.names.end(), name) == d.names.end()) d.names.emplace_back(name);
}

std::vector<std::string> KnownConfigSections() {
  // The sections core and the modules wired in by the runtime read; others declare theirs.
  std::vector<std::string> sections = {"approvals",  "code_execution", "files",   "hooks",
                                       "mcp",        "mcp_servers",    "plugins", "toolsets",
                                       "tool_budget"};
  DeclaredSections& d = Declared();
  std::lock_guard lock(d.mu);
  for (const std::string& name : d.names) {
    if (std::find(sections.begin(), sections.end(), name) == sections.end())
      sections.push_back(name);
  }
  return sections;
}

std::string DefaultConfigPath() { return TalariaHome() + "/config.yaml"; }

Result<Json> ParseYaml(std::string_view yaml_text) {
  try {
    return YamlToJson(YAML::Load(std::string(yaml_text)), 0);
  } catch (const YAML::Exception& e) {
    return Err(InvalidArgumentError(std::string("not valid YAML: ") + e.what()));
  }
}

Result<Config> ParseConfig(std::string_view yaml_text, std::string_view origin) {
  auto parsed = ParseYaml(yaml_text);
  if (!parsed) return Err(ShapeError(origin, parsed.error().message()));
  Json root = std::move(*parsed);
  Config config;
  if (root.is_null()) root = Json::object();
  if (!root.is_object()) return Err(ShapeError(origin, "the top level must be a mapping"));
  TALARIA_RETURN_IF_ERROR(ReadToolsets(root.value("toolsets", Json()), origin, config));
  TALARIA_RETURN_IF_ERROR(ReadBudget(root.value("tool_budget", Json()), origin, config));
  if (auto it = root.find("hooks"); it != root.end() && !it->is_null()) {
    if (!it->is_object()) return Err(ShapeError(origin, "hooks must be a mapping"));
    config.hooks = std::make_shared<const Json>(*it);
  }
  config.warnings = UnknownSectionWarnings(root, origin);
  config.raw = std::make_shared<const Json>(std::move(root));
  return config;
}

Result<Config> LoadConfig(const std::string& path, MissingConfig missing) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      if (missing == MissingConfig::kError)
        return Err(NotFoundError("config file " + path + " does not exist"));
      return Config{};  // no file: defaults
    }
    return Err(UnavailableError("cannot read " + path));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseConfig(buffer.str(), path);
}

}  // namespace talaria
