// talaria trust [PATH] [--revoke]: review a project-local config (.talaria/config.yaml) and trust
// its exact content, so its mcp_servers and hooks run (see core/project_config.h).
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "talaria/base/json.h"
#include "talaria/base/shell_words.h"
#include "talaria/core/project_config.h"

namespace talaria::cli {
namespace {

// What the file will run once trusted, so the user sees it before it does.
void PrintWhatRuns(const ProjectConfig& config) {
  if (config.mcp_servers) {
    for (const auto& [name, entry] : config.mcp_servers->items()) {
      std::string what = JsonStringField(entry, "url");
      if (what.empty()) {
        std::vector<std::string> argv = {JsonStringField(entry, "command")};
        if (entry.is_object() && entry.contains("args") && entry["args"].is_array()) {
          for (const auto& a : entry["args"])
            argv.push_back(a.is_string() ? a.get<std::string>() : a.dump());
        }
        what = ShellJoin(argv);
      }
      std::printf("  mcp server %s: %s\n", name.c_str(), what.c_str());
    }
  }
  if (config.hooks) {
    for (const auto& [event, groups] : config.hooks->items()) {
      if (!groups.is_array()) continue;
      for (const auto& group : groups) {
        if (!group.is_object() || !group.contains("hooks") || !group["hooks"].is_array()) continue;
        for (const auto& hook : group["hooks"]) {
          std::printf("  hook %s: %s\n", event.c_str(), JsonStringField(hook, "command").c_str());
        }
      }
    }
  }
  for (const auto& file : config.executed_files) {
    std::printf("  runs project file %s (its content is trusted too)\n", file.path.c_str());
  }
  for (const auto& section : config.ignored) {
    std::printf(
        "  (section '%s' is ignored: only mcp_servers and hooks are read from a project config)\n",
        section.c_str());
  }
}

}  // namespace

int RunTrust(const TrustOptions& options) {
  std::string path = options.path.empty() ? ProjectConfigPath(".") : options.path;
  if (!path.ends_with(".yaml") && !path.ends_with(".yml"))
    path = ProjectConfigPath(path);  // a directory
  auto loaded = LoadProjectConfig(path, TrustStorePath());
  if (!loaded) {
    std::fprintf(stderr, "talaria trust: %s\n", loaded.error().message().c_str());
    return kExitUsage;
  }
  if (!loaded->has_value()) {
    std::fprintf(stderr, "talaria trust: no project config at %s\n", path.c_str());
    return kExitUsage;
  }
  const ProjectConfig& config = **loaded;
  if (options.revoke) {
    if (Status s = RevokeProjectConfig(config.path, TrustStorePath()); !s.ok()) {
      std::fprintf(stderr, "talaria trust: %s\n", s.message().c_str());
      return s.code() == StatusCode::kNotFound ? kExitUsage : kExitToolError;
    }
    std::printf("revoked trust in %s\n", config.path.c_str());
    return kExitOk;
  }
  std::printf("%s (sha256 %s)\n", config.path.c_str(), config.sha256.c_str());
  if (!config.RunsCode()) std::printf("  declares no mcp_servers or hooks\n");
  PrintWhatRuns(config);
  if (config.trusted) {
    std::printf("already trusted\n");
    return kExitOk;
  }
  if (Status s = TrustProjectConfig(config, TrustStorePath()); !s.ok()) {
    std::fprintf(stderr, "talaria trust: %s\n", s.message().c_str());
    return kExitToolError;
  }
  std::printf("trusted: this exact content may now run; any edit makes it untrusted again\n");
  return kExitOk;
}

}  // namespace talaria::cli
