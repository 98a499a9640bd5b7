#include "talaria/core/project_config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "talaria/base/file_io.h"
#include "talaria/base/paths.h"
#include "talaria/core/config.h"
#include "talaria/safety/sha256.h"

namespace talaria {
namespace {

constexpr int kTrustStoreVersion = 1;

Result<std::optional<std::string>> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return std::optional<std::string>();
    return Err(UnavailableError("cannot read " + path));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return std::optional<std::string>(buffer.str());
}

// {"version": 1, "files": {"<absolute path>": "<sha256>"}}; a missing store is empty.
Result<Json> ReadTrustStore(const std::string& trust_store) {
  auto text = TALARIA_TRY(ReadWholeFile(trust_store));
  Json store = {{"version", kTrustStoreVersion}, {"files", Json::object()}};
  if (!text) return store;
  auto parsed = ParseJson(*text);
  if (!parsed || !parsed->is_object() || !parsed->contains("files") || !(*parsed)["files"].is_object()) {
    return Err(UnavailableError(trust_store + " is corrupt; remove it and trust the project configs again"));
  }
  return *parsed;
}

Status WriteTrustStore(const Json& store, const std::string& trust_store) {
  const size_t slash = trust_store.rfind('/');
  if (slash != std::string::npos) ::mkdir(trust_store.substr(0, slash).c_str(), 0700);
  std::string text = store.dump(2);
  text.push_back('\n');
  return WriteFileAtomic(trust_store, text);
}

std::string Names(const Json& object) {
  std::string out;
  if (!object.is_object()) return out;
  for (const auto& [name, value] : object.items()) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace

std::string ProjectConfig::DescribeCode() const {
  std::string out;
  if (mcp_servers) {
    out += "mcp_servers (";
    out += Names(*mcp_servers);
    out += ")";
  }
  if (hooks) {
    if (!out.empty()) out += " and ";
    out += "hooks (";
    out += Names(*hooks);
    out += ")";
  }
  return out;
}

std::string ProjectConfigPath(std::string_view dir) {
  std::string out(dir.empty() ? "." : dir);
  if (out.back() != '/') out.push_back('/');
  out += ".talaria/config.yaml";
  return out;
}

std::string TrustStorePath() { return TalariaHome() + "/trusted.json"; }

Result<std::optional<ProjectConfig>> LoadProjectConfig(const std::string& path,
                                                       const std::string& trust_store) {
  auto text = TALARIA_TRY(ReadWholeFile(path));
  if (!text) return std::optional<ProjectConfig>();
  ProjectConfig config;
  char* resolved = ::realpath(path.c_str(), nullptr);
  config.path = resolved != nullptr ? resolved : path;
  ::free(resolved);
  config.sha256 = safety::Sha256Hex(*text);
  auto parsed = ParseYaml(*text);
  if (!parsed) return Err(InvalidArgumentError(config.path + ": " + parsed.error().message()));
  Json root = std::move(*parsed);
  if (root.is_null()) root = Json::object();
  if (!root.is_object()) return Err(InvalidArgumentError(config.path + ": the top level must be a mapping"));
  for (auto& [key, value] : root.items()) {
    if (key == "mcp_servers") {
      if (value.is_null()) continue;
      if (!value.is_object()) return Err(InvalidArgumentError(config.path + ": mcp_servers must be a mapping"));
      config.mcp_servers = std::make_shared<const Json>(value);
    } else if (key == "hooks") {
      if (value.is_null()) continue;
      if (!value.is_object()) return Err(InvalidArgumentError(config.path + ": hooks must be a mapping"));
      config.hooks = std::make_shared<const Json>(value);
    } else {
      config.ignored.push_back(key);
    }
  }
  const Json store = TALARIA_TRY(ReadTrustStore(trust_store));
  const Json& files = store["files"];
  auto it = files.find(config.path);
  config.trusted = it != files.end() && it->is_string() && it->get<std::string>() == config.sha256;
  return std::optional<ProjectConfig>(std::move(config));
}

Status TrustProjectConfig(const ProjectConfig& config, const std::string& trust_store) {
  Json store = TALARIA_TRY(ReadTrustStore(trust_store));
  store["version"] = kTrustStoreVersion;
  store["files"][config.path] = config.sha256;
  return WriteTrustStore(store, trust_store);
}

Status RevokeProjectConfig(const std::string& path, const std::string& trust_store) {
  Json store = TALARIA_TRY(ReadTrustStore(trust_store));
  if (store["files"].erase(path) == 0) return NotFoundError(path + " is not trusted");
  return WriteTrustStore(store, trust_store);
}

}  // namespace talaria
