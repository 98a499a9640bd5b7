// PluginLoader: discovery (list each directory, probe the candidates, decide) and loading (the
// trial process, dlopen, publishing what the plugin registered through plugin_host.h, script
// tools). The pre-scan is plugin_probe.cpp, reports plugin_report.cpp, config plugin_config.cpp.
#include "talaria/plugins/plugin_loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "plugins/plugin_bridge.h"
#include "plugins/plugin_host.h"
#include "plugins/plugin_probe.h"
#include "plugins/plugin_trial.h"
#include "plugins/verdict_cache.h"
#include "talaria/base/log.h"
#include "talaria/base/paths.h"
#include "talaria/base/unique_fd.h"
#include "talaria/mcp/features.h"
#include "talaria/plugin.h"
#include "talaria/plugins/script_tool.h"

namespace talaria::plugins {

PluginLoader::PluginLoader(Registry& registry, mcp::ServerFeatures* features)
    : registry_(registry), features_(features) {}
PluginLoader::~PluginLoader() = default;

DiscoveryReport PluginLoader::Discover(const DiscoveryOptions& options) {
  DiscoveryReport report;
  VerdictCache cache =
      options.cache_path.empty() ? VerdictCache() : VerdictCache::Load(options.cache_path);
  std::set<std::string, std::less<>> dirs_done;
  std::map<std::string, std::string, std::less<>> names;  // plugin name -> first path
  std::vector<PendingLoad> pending;
  // Without a cache file the verdicts would be remembered only until this call returns, and no
  // path is looked up twice in one call: nothing to record.
  const bool remember = !options.cache_path.empty();

  for (const std::string& raw_dir : options.dirs) {
    std::error_code ec;
    std::filesystem::path abs = std::filesystem::absolute(raw_dir, ec);
    if (ec) abs = raw_dir;
    std::string dir = abs.lexically_normal().string();
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (!dirs_done.insert(dir).second) continue;  // the same directory named twice

    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) {
      if (errno != ENOENT)
        report.warnings.push_back("cannot read plugin directory " + dir + ": " +
                                  std::strerror(errno));
      continue;
    }
    std::vector<std::string> files;
    while (const dirent* e = ::readdir(d)) {
      std::string_view n = e->d_name;
      ManifestFormat format;
      std::string_view stem;
      if ((n.size() > kSuffix.size() && n.ends_with(kSuffix)) ||
          ManifestFormatOf(n, format, stem)) {
        files.emplace_back(n);
      }
    }
    std::sort(files.begin(), files.end());

    const std::string prefix = dir == "/" ? dir : dir + "/";
    std::vector<Probe> probes(files.size());
    for (size_t i = 0; i < files.size(); ++i) probes[i].file = &files[i];
    // Reads only; the decisions below are sequential.
    std::atomic<bool> noatime{true};
    ProbeAll(ProbeContext{::dirfd(d), &prefix, &cache, &options, &noatime}, probes);
    ::closedir(d);

    std::set<std::string, std::less<>> seen;
    report.candidates.reserve(report.candidates.size() + probes.size());
    for (Probe& p : probes) {
      CandidateReport& c = p.c;  // path, name, kind, and for a scanned file its scan fields
      if (remember) seen.insert(c.path);
      if (p.disabled) {
        c.reason = "disabled in config (plugins.disabled)";
        report.candidates.push_back(std::move(c));
        continue;
      }
      // An I/O error says nothing lasting about the file: it is not remembered.
      if (remember && p.c.kind == CandidateKind::kSharedObject && !p.cached &&
          p.verdict.outcome != ScanOutcome::kIoError) {
        cache.Put(c.path, KeyOf(p.st), p.verdict);
      }
      if (auto first = names.find(c.name); first != names.end()) {
        c.scan = ScanOutcome::kIoError;  // as if never scanned: the name decides
        c.scan_cached = false;
        c.interface_version = 0;
        c.reason = "a plugin of the same name comes first: " + first->second;
        report.candidates.push_back(std::move(c));
        continue;
      }
      if (c.kind == CandidateKind::kScript) {  // the manifest is its own pre-scan
        LoadScript(c, options);
        if (c.scan == ScanOutcome::kAccepted) names.emplace(c.name, c.path);
        report.candidates.push_back(std::move(c));
        continue;
      }
      if (!p.verdict.accepted()) {  // the probe wrote the reason
        report.candidates.push_back(std::move(c));
        continue;
      }
      names.emplace(c.name, c.path);
      if (options.mode != LoadMode::kScanOnly) {
        pending.push_back(PendingLoad{report.candidates.size(), p.st});
      }
      report.candidates.push_back(std::move(c));
    }
    if (remember) cache.Retain(prefix, seen);
  }
  LoadPending(report, pending, options, cache);
  if (remember) {
    Status saved = cache.Save();
    if (!saved.ok()) report.warnings.push_back(saved.message());
  }
  return report;
}

const PluginLoader::Loaded* PluginLoader::LoadedUnchanged(const std::string& path,
                                                          const struct stat& st) const {
  const auto it = loaded_.find(path);
  if (it == loaded_.end()) return nullptr;
  const Loaded& l = it->second;
  const FileKey key = KeyOf(st);
  const bool same = l.dev == static_cast<uint64_t>(st.st_dev) && l.ino == key.ino &&
                    l.size == key.size && l.mtime_ns == key.mtime_ns;
  return same ? &l : nullptr;
}

void PluginLoader::LoadPending(DiscoveryReport& report, const std::vector<PendingLoad>& pending,
                               const DiscoveryOptions& options, VerdictCache& cache) {
  constexpr size_t kNoTrial = static_cast<size_t>(-1);
  std::vector<std::string> trial_paths;
  std::vector<size_t> trial_slot(pending.size(), kNoTrial);
  for (size_t i = 0; i < pending.size(); ++i) {
    CandidateReport& c = report.candidates[pending[i].report_index];
    if (LoadedUnchanged(c.path, pending[i].st) != nullptr) continue;  // nothing runs again
    if (!options.trial) {
      c.trial = "off";
    } else if (cache.TrialPassed(c.path, KeyOf(pending[i].st))) {
      c.trial = "cached";
    } else {
      trial_slot[i] = trial_paths.size();
      trial_paths.push_back(c.path);
    }
  }
  std::optional<PluginTrial> trial;
  std::string unavailable;  // why the trial could not run, once
  if (!trial_paths.empty()) {
    const std::string program =
        options.trial_executable.empty() ? FindTrialExecutable() : options.trial_executable;
    if (program.empty()) {
      unavailable =
          "the plugin trial program (talaria-plugin-trial, beside libtalaria, or "
          "$TALARIA_PLUGIN_TRIAL) was not found";
    } else {
      trial.emplace(program, std::move(trial_paths), options.trial_timeout);
    }
  }
  for (size_t i = 0; i < pending.size(); ++i) {
    CandidateReport& c = report.candidates[pending[i].report_index];
    if (trial_slot[i] != kNoTrial) {
      const TrialVerdict verdict = trial
                                       ? trial->Await(trial_slot[i])
                                       : TrialVerdict{TrialVerdict::Outcome::kNotRun, unavailable};
      switch (verdict.outcome) {
        case TrialVerdict::Outcome::kPassed:
          c.trial = "passed";
          cache.MarkTrialPassed(c.path, KeyOf(pending[i].st));
          break;
        case TrialVerdict::Outcome::kFailed:
          c.trial = "failed";
          c.verdict = Verdict::kFailed;
          c.reason = "trial load: " + verdict.reason;
          LogWarn("plugin " + c.path + " not loaded: " + c.reason);
          continue;
        case TrialVerdict::Outcome::kNotRun:
          c.trial = "unavailable";
          if (unavailable.empty()) unavailable = verdict.reason;
          break;
      }
    }
    Load(c, options, pending[i].st);
  }
  if (!unavailable.empty()) {
    report.warnings.push_back(unavailable + "; plugins were loaded without crash containment");
  }
}

void PluginLoader::Load(CandidateReport& c, const DiscoveryOptions& options,
                        const struct stat& st) {
  c.verdict = Verdict::kFailed;
  const FileKey key = KeyOf(st);
  const auto previous = loaded_.find(c.path);
  if (const Loaded* same = LoadedUnchanged(c.path, st)) {
    c.verdict = Verdict::kLoaded;
    c.tools = same->tools;
    return;
  }

  // The file was stat'ed (and, unless its verdict was cached, read) moments ago. One swapped in
  // since then would still be loaded: whoever can write the plugin directory can run code in
  // talaria anyway; the pre-scan keeps out broken files, not them. The entry point and version
  // are checked again below, on the loaded image.
  ::dlerror();
  void* handle = ::dlopen(c.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = ::dlerror();
    c.reason = std::string("dlopen: ") + (err != nullptr ? err : "unknown error");
    return;
  }
  // Never dlclose'd (see the header): a failed plugin may have left threads or atexit handlers.
  const auto* version =
      static_cast<const uint32_t*>(::dlsym(handle, TALARIA_PLUGIN_VERSION_SYMBOL));
  auto entry =
      reinterpret_cast<talaria_register_tools_fn>(::dlsym(handle, TALARIA_PLUGIN_ENTRY_SYMBOL));
  if (version == nullptr || *version != TALARIA_PLUGIN_INTERFACE_VERSION || entry == nullptr) {
    c.reason = "the loaded image does not match its pre-scan (entry point or interface version)";
    return;
  }

  Staging staging;
  staging.plugin_name = c.name;
  staging.allow_shadowing = Listed(options.allow_shadowing, c.name);
  staging.snapshot = registry_.Snapshot();
  if (previous != loaded_.end())
    staging.own.insert(previous->second.tools.begin(), previous->second.tools.end());
  talaria_plugin_host host = MakePluginHost(staging);
  staging.serve_features = features_ != nullptr;

  int rc = TALARIA_PLUGIN_ERROR;
  try {
    rc = entry(&host);
  } catch (const std::exception& e) {
    c.refused = std::move(staging.refused);
    c.reason = std::string("registration threw: ") + e.what();
    return;
  } catch (...) {
    c.refused = std::move(staging.refused);
    c.reason = "registration threw an exception";
    return;
  }
  c.refused = staging.refused;
  if (rc != TALARIA_PLUGIN_OK) {
    c.reason = "registration returned " + std::to_string(rc) +
               (staging.error.empty() ? std::string() : ": " + staging.error);
    return;
  }

  // Publish all of its tools at once, or none. Re-check shadowing against the newest snapshot
  // (for the readable reason); `only_new` then makes the registry itself refuse a name somebody
  // registered in between, under its write lock.
  staging.snapshot = registry_.Snapshot();
  std::vector<std::string> names;
  for (const ToolSpec& spec : staging.specs) {
    if (auto problem = ShadowProblem(staging, spec.name)) {
      c.reason = "publishing tools: " + *problem;
      return;
    }
    names.push_back(spec.name);
  }
  std::vector<ToolSpec> specs = std::move(staging.specs);
  for (size_t i = 0; i < specs.size(); ++i) specs[i].schema = SchemaSource(staging.schemas[i]);
  Status published = registry_.Replace({}, std::move(specs), PublishOptions(staging));
  if (!published.ok()) {
    c.reason = "publishing tools: " + published.message();
    return;
  }
  // Resources and prompts go out after the tools; one that clashes is refused, the rest stay.
  for (mcp::ResourceDef& r : staging.resources) {
    const std::string label = r.uri.empty() ? r.uri_template : r.uri;
    if (Status added = features_->AddResource(std::move(r)); !added.ok()) {
      c.refused.push_back(label + ": " + added.message());
    }
  }
  for (mcp::PromptDef& p : staging.prompts) {
    const std::string label = p.name;
    if (Status added = features_->AddPrompt(std::move(p)); !added.ok()) {
      c.refused.push_back(label + ": " + added.message());
    }
  }
  c.verdict = Verdict::kLoaded;
  c.reason.clear();
  c.tools = names;
  Loaded record;
  record.dev = static_cast<uint64_t>(st.st_dev);
  record.ino = key.ino;
  record.size = key.size;
  record.mtime_ns = key.mtime_ns;
  record.tools = std::move(names);
  loaded_[c.path] = std::move(record);
}

}  // namespace talaria::plugins

namespace talaria::plugins {

void PluginLoader::LoadScript(CandidateReport& c, const DiscoveryOptions& options) {
  constexpr size_t kMaxManifestBytes = 1 << 20;
  c.verdict = Verdict::kSkipped;
  ManifestFormat format;
  std::string_view stem;
  const std::string file_name = c.path.substr(c.path.rfind('/') + 1);
  (void)ManifestFormatOf(file_name, format, stem);

  UniqueFd fd(::open(c.path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    c.scan = ScanOutcome::kIoError;
    c.reason = fd ? "pre-scan: not a regular file"
                  : std::string("pre-scan: cannot open: ") + std::strerror(errno);
    return;
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxManifestBytes) {
    c.scan = ScanOutcome::kMalformed;
    c.reason = "pre-scan: manifest larger than 1 MiB";
    return;
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n =
        ::pread(fd.get(), text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  const std::string dir = c.path.substr(0, c.path.rfind('/'));
  auto manifest = ParseToolManifest(text, format, dir.empty() ? "/" : dir, options.guard);
  if (!manifest) {
    c.scan = manifest.error().code() == StatusCode::kPermissionDenied ? ScanOutcome::kCommandRefused
                                                                      : ScanOutcome::kMalformed;
    c.reason = "pre-scan: " + manifest.error().message();
    return;
  }
  c.scan = ScanOutcome::kAccepted;
  if (options.mode == LoadMode::kScanOnly) {
    c.reason = "not loaded (scan only)";
    return;
  }

  const FileKey key = KeyOf(st);
  const auto previous = loaded_.find(c.path);
  Staging staging;
  staging.plugin_name = c.name;
  staging.allow_shadowing = Listed(options.allow_shadowing, c.name);
  staging.snapshot = registry_.Snapshot();
  if (previous != loaded_.end()) {
    staging.own.insert(previous->second.tools.begin(), previous->second.tools.end());
    if (const Loaded* same = LoadedUnchanged(c.path, st)) {
      c.verdict = Verdict::kLoaded;
      c.tools = same->tools;
      return;
    }
  }
  c.verdict = Verdict::kFailed;
  if (auto problem = ShadowProblem(staging, manifest->name)) {
    c.refused.push_back(manifest->name + ": " + *problem);
    c.reason = "registration: " + *problem;
    return;
  }
  Status registered = registry_.Register(ScriptToolSpec(*manifest), PublishOptions(staging));
  if (!registered.ok()) {
    c.reason = "registration: " + registered.message();
    return;
  }
  c.verdict = Verdict::kLoaded;
  c.tools = {manifest->name};
  Loaded record;
  record.dev = static_cast<uint64_t>(st.st_dev);
  record.ino = key.ino;
  record.size = key.size;
  record.mtime_ns = key.mtime_ns;
  record.tools = c.tools;
  loaded_[c.path] = std::move(record);
}

}  // namespace talaria::plugins
