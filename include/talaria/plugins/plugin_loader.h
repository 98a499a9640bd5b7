// Plugin discovery: finds the shared-object plugins of one or more directories, pre-scans each
// candidate without running any of its code (elf_scan.h), loads only the accepted ones
// (dlopen RTLD_NOW | RTLD_LOCAL), calls their talaria_register_tools entry point (plugin.h) and
// publishes the tools each one registered — or none of them, when its registration fails.
// Every candidate ends with one verdict: loaded, skipped (and why) or failed (and why); one
// broken plugin never stops the others.
//
// Candidates are the `*.so` entries and the script-tool manifests (`*.tool.yaml`, `*.tool.yml`,
// `*.tool.json`; script_tool.h) of each directory, visited in byte-wise sorted order,
// directories in the order given. A manifest is its own pre-scan: parsed and judged, never run.
// Pre-scan verdicts are cached on disk (a small JSON file keyed by path, size, mtime and inode,
// replaced atomically), so a restart re-reads only new or changed files. Plugin tools obey the
// registry's shadowing rules and more: a plugin may only add names nobody registered yet, unless
// the config lists it under `plugins.allow_shadowing`.
//
// Crash containment: before a plugin is loaded in-process it is loaded, and its registration
// run, in a throwaway process (talaria-plugin-trial, installed beside libtalaria; see
// src/plugins/plugin_trial.h). One that crashes, exits or hangs there is reported as failed and
// never loaded here; the trial runs ahead of the loader on its own thread. A passed trial is
// remembered in the verdict cache, so an unchanged plugin is not tried again on the next start.
// A plugin that crashes only some of the time, or only in the host, is not contained: trust
// still decides what may be installed. Loaded (and failed) plugins are never dlclose'd: their
// handlers stay referenced by registry snapshots.
//
// Ownership: the loader keeps the registry by reference; one loader per registry (it remembers
// which tools each plugin registered, so a rescan reloads nothing).
// Thread-safety: not thread-safe; caller synchronises (discovery runs at startup).
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/core/config.h"
#include "talaria/core/registry.h"
#include "talaria/guard/command_guard.h"
#include "talaria/plugins/elf_scan.h"

namespace talaria::mcp {
class ServerFeatures;
}

namespace talaria::plugins {

class VerdictCache;  // src/plugins/verdict_cache.h

enum class Verdict : unsigned char {
  kLoaded,   // pre-scan accepted, loaded, registration succeeded (its tools are published)
  kSkipped,  // not loaded: rejected by the pre-scan, disabled in config, or a duplicate name
  kFailed,   // accepted but dlopen or registration failed; none of its tools were published
};

std::string_view VerdictName(Verdict verdict);  // "loaded" | "skipped" | "failed"

enum class CandidateKind : unsigned char {
  kSharedObject,  // *.so: the C ABI of plugin.h
  kScript,        // *.tool.yaml|yml|json: a manifest around a command
};

std::string_view CandidateKindName(CandidateKind kind);  // "shared_object" | "script"

struct CandidateReport {
  std::string path;  // absolute
  std::string name;  // the file name without ".so" / ".tool.yaml"...; what config lists use
  CandidateKind kind = CandidateKind::kSharedObject;
  Verdict verdict = Verdict::kSkipped;
  std::string reason;  // why skipped or failed; empty when loaded
  ScanOutcome scan = ScanOutcome::kIoError;
  bool scan_cached = false;        // the pre-scan verdict came from the on-disk cache
  uint32_t interface_version = 0;  // as read by the pre-scan (0: not found)
  std::vector<std::string> tools;  // the tools it registered, in registration order
  // register_tool calls the host refused ("<name>: <why>"); the plugin may still have loaded.
  std::vector<std::string> refused;
  // The trial load of a shared object about to be loaded: "passed", "cached" (passed before,
  // file unchanged), "failed" (then verdict is failed and reason says how it died), "off"
  // (DiscoveryOptions::trial false) or "unavailable" (the trial program could not run; see the
  // report's warnings). Empty when nothing was to be loaded.
  std::string trial;

  // {"path", "name", "kind", "verdict", "reason", "scan", "scan_cached", "interface_version",
  //  "trial", "tools", "refused"}
  Json ToJson() const;
};

struct DiscoveryReport {
  std::vector<CandidateReport> candidates;
  // Problems outside any one candidate (an unreadable directory, a cache that could not be
  // written); discovery went on regardless.
  std::vector<std::string> warnings;

  size_t Count(Verdict verdict) const;
  // {"candidates": [...], "warnings": [...]}
  Json ToJson() const;
};

// The `plugins` section of config.yaml:
//   plugins:
//     dirs: [/opt/talaria/plugins]     # scanned after $TALARIA_HOME/plugins
//     allow_shadowing: [my_plugin]     # plugins that may replace existing tools
//     disabled: [broken_plugin]        # plugins never loaded
//     cache: true                      # keep the pre-scan verdict cache (default true)
//     trial: true                      # trial-load plugins in a throwaway process first
//     trial_timeout_s: 10              # how long a trial load may take per plugin
struct PluginConfig {
  std::vector<std::string> dirs;
  std::vector<std::string> allow_shadowing;  // plugin names (file name with or without ".so")
  std::vector<std::string> disabled;
  bool cache = true;
  bool trial = true;
  std::chrono::milliseconds trial_timeout{10'000};
};

// A missing section gives the defaults. InvalidArgument naming the key for a wrong shape.
Result<PluginConfig> ReadPluginConfig(const Config& config);

// $TALARIA_HOME/plugins
std::string DefaultPluginDir();
// $TALARIA_HOME/plugin-scan-cache.json
std::string DefaultScanCachePath();

enum class LoadMode : unsigned char {
  kLoad,      // pre-scan, then load and register the accepted candidates
  kScanOnly,  // pre-scan only; accepted candidates are reported as skipped ("not loaded")
};

struct DiscoveryOptions {
  std::vector<std::string> dirs;  // a missing directory is skipped silently
  std::string cache_path;         // empty: no verdict cache
  std::vector<std::string> allow_shadowing;
  std::vector<std::string> disabled;
  LoadMode mode = LoadMode::kLoad;
  // How script-tool commands are judged (home, talaria_home); OptionsFromConfig fills it in.
  safety::GuardOptions guard;
  // Trial-load each shared object in a throwaway process before loading it here (see above).
  bool trial = true;
  std::string trial_executable;  // empty: $TALARIA_PLUGIN_TRIAL, else beside libtalaria
  std::chrono::milliseconds trial_timeout{10'000};  // per plugin
};

// Options from config: DefaultPluginDir() then config.dirs then `extra_dirs`, the default cache
// path (unless config.cache is false), and the config's lists.
DiscoveryOptions OptionsFromConfig(const PluginConfig& config,
                                   const std::vector<std::string>& extra_dirs = {});

class PluginLoader {
 public:
  // `features`: where the resources and prompts plugins register go (an MCP server serves
  // them); null: they are accepted and ignored. Both are kept by reference.
  explicit PluginLoader(Registry& registry, mcp::ServerFeatures* features = nullptr);
  ~PluginLoader();
  PluginLoader(const PluginLoader&) = delete;
  PluginLoader& operator=(const PluginLoader&) = delete;

  // Visits every candidate of options.dirs and returns one report per candidate. Never fails
  // as a whole: per-candidate problems are verdicts, directory and cache problems warnings.
  // A plugin this loader already loaded (same file, unchanged) is reported as loaded again
  // without being re-run.
  DiscoveryReport Discover(const DiscoveryOptions& options);

 private:
  struct Loaded {
    uint64_t dev = 0, ino = 0, size = 0;
    int64_t mtime_ns = 0;
    std::vector<std::string> tools;
  };

  // A shared object the pre-scan accepted, waiting for its trial and load.
  struct PendingLoad {
    size_t report_index = 0;
    struct stat st {};
  };

  // The record of `path` when this loader loaded it and the file is unchanged since; else null.
  const Loaded* LoadedUnchanged(const std::string& path, const struct stat& st) const;
  // Trial-loads (when options.trial) and then loads every pending candidate, in order.
  void LoadPending(DiscoveryReport& report, const std::vector<PendingLoad>& pending,
                   const DiscoveryOptions& options, VerdictCache& cache);
  // `st`: the candidate's stat from discovery (identity and cache key).
  void Load(CandidateReport& report, const DiscoveryOptions& options, const struct stat& st);
  void LoadScript(CandidateReport& report, const DiscoveryOptions& options);

  Registry& registry_;
  mcp::ServerFeatures* const features_;
  std::map<std::string, Loaded, std::less<>> loaded_;  // path -> what it registered
};

}  // namespace talaria::plugins
