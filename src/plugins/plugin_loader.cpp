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
#include "plugins/plugin_trial.h"
#include "plugins/verdict_cache.h"
#include "talaria/base/log.h"
#include "talaria/base/paths.h"
#include "talaria/base/unique_fd.h"
#include "talaria/mcp/features.h"
#include "talaria/plugin.h"
#include "talaria/plugins/script_tool.h"

namespace talaria::plugins {
namespace {

constexpr std::string_view kSuffix = ".so";
constexpr size_t kMaxNameLength = 64;

FileKey KeyOf(const struct stat& st) {
  return FileKey{static_cast<uint64_t>(st.st_size),
                 static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
                 static_cast<uint64_t>(st.st_ino)};
}

bool Listed(const std::vector<std::string>& list, std::string_view name) {
  return std::any_of(list.begin(), list.end(), [&](const std::string& item) {
    return item == name || (item.size() == name.size() + kSuffix.size() && item.starts_with(name) &&
                            item.ends_with(kSuffix));
  });
}

bool ValidToolName(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameLength) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

bool ValidToolsetName(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameLength) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

// ---- registration: what talaria_register_tools talks to ----

struct Staging {
  std::string plugin_name;
  bool allow_shadowing = false;
  std::shared_ptr<const RegistrySnapshot> snapshot;
  std::set<std::string, std::less<>> own;  // names this plugin registered before (a reload)
  std::vector<Json> schemas;               // parsed once here; ToolSpec borrows them
  std::vector<ToolSpec> specs;
  std::set<std::string, std::less<>> staged;
  std::vector<std::string> refused;
  std::string error;            // from set_error
  bool serve_features = false;  // a ServerFeatures takes resources and prompts
  std::vector<mcp::ResourceDef> resources;
  std::vector<mcp::PromptDef> prompts;
};

int Refuse(Staging& s, std::string_view name, int code, const std::string& why) {
  s.refused.push_back(std::string(name.empty() ? "<unnamed>" : name) + ": " + why);
  LogWarn("plugin " + s.plugin_name + ": tool " + std::string(name) + " refused: " + why);
  return code;
}

// Whether `name` may be (re)registered by this plugin; the reason when not.
std::optional<std::string> ShadowProblem(const Staging& s, std::string_view name) {
  const ToolEntry* existing = s.snapshot->Find(name);
  if (existing == nullptr || s.own.contains(name) || s.allow_shadowing) return std::nullopt;
  return "would replace the existing tool '" + std::string(name) + "' (toolset '" +
         existing->toolset() + "'); list the plugin under plugins.allow_shadowing to allow it";
}

// How a plugin's tools are published: over existing tools only when the config allows it;
// otherwise insert-if-absent, except for names this plugin itself registered before (a reload).
RegisterOptions PublishOptions(const Staging& s) {
  RegisterOptions options;
  options.allow_override = s.allow_shadowing;
  options.only_new = !s.allow_shadowing && s.own.empty();
  return options;
}

// Copies the first `size` bytes the plugin's struct has (a smaller, older struct leaves the rest
// zero); false when it is too small to hold `required` bytes.
template <typename Def>
bool ReadDef(const Def* def, size_t required, Def& out) {
  out = Def{};
  if (def == nullptr || def->struct_size < required) return false;
  std::memcpy(&out, def, std::min<size_t>(def->struct_size, sizeof out));
  return true;
}

int HostRegisterTool(void* context, const talaria_tool_def* def) {
  auto* s = static_cast<Staging*>(context);
  if (s == nullptr) return TALARIA_PLUGIN_INVALID_ARGUMENT;
  try {
    if (def == nullptr) return Refuse(*s, "", TALARIA_PLUGIN_INVALID_ARGUMENT, "null definition");
    // Read only the fields the plugin's struct has; the rest keep their defaults.
    talaria_tool_def d;
    if (!ReadDef(def, offsetof(talaria_tool_def, user_data) + sizeof(void*), d)) {
      return Refuse(*s, "", TALARIA_PLUGIN_INVALID_ARGUMENT,
                    "struct_size " + std::to_string(def->struct_size) + " is too small");
    }
    const std::string_view name = d.name != nullptr ? std::string_view(d.name) : std::string_view();
    if (!ValidToolName(name)) {
      return Refuse(*s, name, TALARIA_PLUGIN_INVALID_ARGUMENT,
                    "invalid name (want [A-Za-z0-9_-]{1,64})");
    }
    const std::string_view toolset =
        d.toolset != nullptr ? std::string_view(d.toolset) : std::string_view();
    if (!ValidToolsetName(toolset)) {
      return Refuse(*s, name, TALARIA_PLUGIN_INVALID_ARGUMENT, "invalid toolset name");
    }
    if (toolset.starts_with("mcp-")) {
      return Refuse(*s, name, TALARIA_PLUGIN_INVALID_ARGUMENT,
                    "toolsets named mcp-* belong to MCP servers");
    }
    if (d.handler == nullptr)
      return Refuse(*s, name, TALARIA_PLUGIN_INVALID_ARGUMENT, "no handler");
    if (d.schema_json == nullptr)
      return Refuse(*s, name, TALARIA_PLUGIN_INVALID_ARGUMENT, "no schema");
    auto schema = ParseJson(d.schema_json);
    if (!schema) {
      return Refuse(*s, name, TALARIA_PLUGIN_INVALID_ARGUMENT,
                    "schema is not JSON: " + schema.error().message());
    }
    auto params = schema->is_object() ? schema->find("parameters") : schema->end();
    if (!schema->is_object() || params == schema->end() || !params->is_object()) {
      return Refuse(*s, name, TALARIA_PLUGIN_INVALID_ARGUMENT,
                    "schema must be an object with an object \"parameters\"");
    }
    if (s->staged.contains(name)) {
      return Refuse(*s, name, TALARIA_PLUGIN_ALREADY_EXISTS, "registered twice by this plugin");
    }
    if (auto problem = ShadowProblem(*s, name)) {
      return Refuse(*s, name, TALARIA_PLUGIN_ALREADY_EXISTS, *problem);
    }
    s->schemas.push_back(std::move(*schema));
    ToolSpec spec;
    spec.name = std::string(name);
    spec.toolset = std::string(toolset);
    spec.handler = AdaptToolHandler(d.handler, d.user_data, spec.name);
    spec.parallel =
        d.parallel == TALARIA_PARALLEL_SAFE ? ParallelClass::kSafe : ParallelClass::kNever;
    if (def->struct_size >= offsetof(talaria_tool_def, emoji) + sizeof(d.emoji) &&
        d.emoji != nullptr) {
      spec.emoji = d.emoji;
    }
    s->specs.push_back(std::move(spec));
    s->staged.emplace(name);
    return TALARIA_PLUGIN_OK;
  } catch (...) {
    return Refuse(*s, "", TALARIA_PLUGIN_ERROR, "out of memory");
  }
}

// A resource or prompt definition: read, adapted, staged (served only when an MCP server takes
// the plugin's features). `kind` names it in refusals.
template <typename Def, typename Adapt, typename Member>
int RegisterFeature(void* context, const Def* def, const char* kind, Adapt adapt, Member staged) {
  auto* s = static_cast<Staging*>(context);
  if (s == nullptr) return TALARIA_PLUGIN_INVALID_ARGUMENT;
  try {
    Def d;
    if (!ReadDef(def, offsetof(Def, user_data) + sizeof(void*), d)) {
      return Refuse(*s, kind, TALARIA_PLUGIN_INVALID_ARGUMENT, "null or too small definition");
    }
    auto adapted = adapt(d, s->plugin_name);
    if (!adapted)
      return Refuse(*s, kind, TALARIA_PLUGIN_INVALID_ARGUMENT, adapted.error().message());
    if (!ValidToolsetName(adapted->toolset)) {
      return Refuse(*s, adapted->name, TALARIA_PLUGIN_INVALID_ARGUMENT, "invalid toolset name");
    }
    if (s->serve_features) (s->*staged).push_back(std::move(*adapted));
    return TALARIA_PLUGIN_OK;
  } catch (...) {
    return Refuse(*s, "", TALARIA_PLUGIN_ERROR, "out of memory");
  }
}

int HostRegisterResource(void* context, const talaria_resource_def* def) {
  return RegisterFeature(context, def, "resource", &AdaptResource, &Staging::resources);
}

int HostRegisterPrompt(void* context, const talaria_prompt_def* def) {
  return RegisterFeature(context, def, "prompt", &AdaptPrompt, &Staging::prompts);
}

void HostSetError(void* context, const char* message) {
  auto* s = static_cast<Staging*>(context);
  if (s == nullptr || message == nullptr) return;
  try {
    s->error = message;
  } catch (...) {
  }
}

void HostLog(void* context, int level, const char* message) {
  auto* s = static_cast<Staging*>(context);
  if (s == nullptr || message == nullptr) return;
  try {
    const LogLevel l = level == TALARIA_LOG_ERROR  ? LogLevel::kError
                       : level == TALARIA_LOG_WARN ? LogLevel::kWarn
                                                   : LogLevel::kInfo;
    Log(l, "plugin " + s->plugin_name + ": " + message);
  } catch (...) {
  }
}

Json StringArray(const std::vector<std::string>& items) {
  Json out = Json::array();
  for (const auto& s : items) out.push_back(s);
  return out;
}

Result<std::vector<std::string>> ReadStringList(const Json& section, const char* key) {
  std::vector<std::string> out;
  auto it = section.find(key);
  if (it == section.end() || it->is_null()) return out;
  if (!it->is_array())
    return Err(InvalidArgumentError(std::string("plugins.") + key + " must be a list of strings"));
  for (const auto& item : *it) {
    if (!item.is_string())
      return Err(
          InvalidArgumentError(std::string("plugins.") + key + " must be a list of strings"));
    out.push_back(item.get<std::string>());
  }
  return out;
}

// One candidate's pre-scan, done before any decision about it: a cached verdict (one fstatat)
// or a fresh scan (openat + fstat + pread + close). Relative to the directory's descriptor, so
// no path is walked again per file. The probe also builds the candidate's report as far as the
// scan alone decides it (path, name, scan fields, reason): those strings are made in the probe
// threads, and the sequential decisions afterwards only override them.
struct Probe {
  const std::string* file = nullptr;  // the name inside the directory
  CandidateReport c;
  bool disabled = false;
  bool cached = false;
  struct stat st {};
  ScanVerdict verdict;
};

// What ProbeOne needs besides the probe: the same for every candidate of one directory.
struct ProbeContext {
  int dir_fd = -1;
  const std::string* prefix = nullptr;  // the directory with a trailing '/'
  const VerdictCache* cache = nullptr;
  const DiscoveryOptions* options = nullptr;
  // Whether to open with O_NOATIME: a pre-scan is not a use of the file, and on a file written
  // since it was last read (a fresh install, every update) the atime update costs an inode write
  // and a journal entry per file. Only the owner (or CAP_FOWNER) may ask for it; the first EPERM
  // turns it off for the rest of the directory, so files owned by others cost one extra open at
  // most once per directory and thread race.
  std::atomic<bool>* noatime = nullptr;
};

// openat for a pre-scan (see ProbeContext::noatime).
int OpenForScan(const ProbeContext& ctx, const char* file) {
  constexpr int kFlags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  if (ctx.noatime->load(std::memory_order_relaxed)) {
    const int fd = ::openat(ctx.dir_fd, file, kFlags | O_NOATIME);
    if (fd >= 0 || errno != EPERM) return fd;
    ctx.noatime->store(false, std::memory_order_relaxed);
  }
  return ::openat(ctx.dir_fd, file, kFlags);
}

void Name(const ProbeContext& ctx, Probe& p) {
  const std::string& file = *p.file;
  p.c.path.reserve(ctx.prefix->size() + file.size());
  p.c.path.append(*ctx.prefix).append(file);
  ManifestFormat format;
  std::string_view stem;
  if (ManifestFormatOf(file, format, stem)) {
    p.c.kind = CandidateKind::kScript;
    p.c.name = std::string(stem);
  } else {
    p.c.name = file.substr(0, file.size() - kSuffix.size());
  }
  p.disabled = Listed(ctx.options->disabled, p.c.name);
}

void ProbeOne(const ProbeContext& ctx, Probe& p) {
  Name(ctx, p);
  if (p.disabled || p.c.kind == CandidateKind::kScript) return;  // manifests: LoadScript
  const char* file = p.file->c_str();
  const VerdictCache& cache = *ctx.cache;
  if (cache.Contains(p.c.path) && ::fstatat(ctx.dir_fd, file, &p.st, 0) == 0 &&
      S_ISREG(p.st.st_mode)) {
    if (auto v = cache.Find(p.c.path, KeyOf(p.st))) {
      p.verdict = std::move(*v);
      p.cached = true;
    }
  }
  if (!p.cached) {
    UniqueFd fd(OpenForScan(ctx, file));
    if (!fd) {
      p.verdict = ScanVerdict{ScanOutcome::kIoError,
                              std::string("cannot open: ") + std::strerror(errno), 0};
    } else if (::fstat(fd.get(), &p.st) != 0 || !S_ISREG(p.st.st_mode)) {
      p.verdict = ScanVerdict{ScanOutcome::kIoError, "not a regular file", 0};
    } else {
      p.verdict = ScanPluginFd(fd.get(), static_cast<uint64_t>(p.st.st_size));
    }
  }
  p.c.scan = p.verdict.outcome;
  p.c.scan_cached = p.cached;
  p.c.interface_version = p.verdict.interface_version;
  if (!p.verdict.accepted()) {
    p.c.reason.reserve(10 + p.verdict.reason.size());
    p.c.reason.append("pre-scan: ").append(p.verdict.reason);
  } else if (ctx.options->mode == LoadMode::kScanOnly) {
    p.c.reason = "not loaded (scan only)";
  }
}

// Probes every candidate; a large directory is spread over a few threads (the work is system
// calls, and a pre-scan neither runs nor maps anything). Each probe touches only its own slot
// and reads the cache, which nobody writes meanwhile.
void ProbeAll(const ProbeContext& ctx, std::vector<Probe>& probes) {
  constexpr size_t kPerThreadMinimum = 64;
  constexpr size_t kChunk = 16;
  const size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads = std::min<size_t>({hw, 4, probes.size() / kPerThreadMinimum});
  if (threads <= 1) {
    for (Probe& p : probes) ProbeOne(ctx, p);
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t begin; (begin = next.fetch_add(kChunk)) < probes.size();) {
      const size_t end = std::min(begin + kChunk, probes.size());
      for (size_t i = begin; i < end; ++i) ProbeOne(ctx, probes[i]);
    }
  };
  std::vector<std::jthread> helpers;
  for (size_t i = 1; i < threads; ++i) helpers.emplace_back(work);
  work();
}  // helpers join here

}  // namespace

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kLoaded:
      return "loaded";
    case Verdict::kSkipped:
      return "skipped";
    case Verdict::kFailed:
      return "failed";
  }
  return "unknown";
}

std::string_view CandidateKindName(CandidateKind kind) {
  return kind == CandidateKind::kScript ? "script" : "shared_object";
}

Json CandidateReport::ToJson() const {
  Json j = Json::object();
  j["path"] = path;
  j["name"] = name;
  j["kind"] = std::string(CandidateKindName(kind));
  j["verdict"] = std::string(VerdictName(verdict));
  j["reason"] = reason;
  j["scan"] = std::string(ScanOutcomeName(scan));
  j["scan_cached"] = scan_cached;
  j["interface_version"] = interface_version;
  j["trial"] = trial;
  j["tools"] = StringArray(tools);
  j["refused"] = StringArray(refused);
  return j;
}

size_t DiscoveryReport::Count(Verdict verdict) const {
  return static_cast<size_t>(
      std::count_if(candidates.begin(), candidates.end(),
                    [&](const CandidateReport& c) { return c.verdict == verdict; }));
}

Json DiscoveryReport::ToJson() const {
  Json j = Json::object();
  Json list = Json::array();
  for (const auto& c : candidates) list.push_back(c.ToJson());
  j["candidates"] = std::move(list);
  j["warnings"] = StringArray(warnings);
  return j;
}

Result<PluginConfig> ReadPluginConfig(const Config& config) {
  PluginConfig out;
  if (!config.raw) return out;
  auto it = config.raw->find("plugins");
  if (it == config.raw->end() || it->is_null()) return out;
  if (!it->is_object()) return Err(InvalidArgumentError("plugins must be a mapping"));
  out.dirs = TALARIA_TRY(ReadStringList(*it, "dirs"));
  out.allow_shadowing = TALARIA_TRY(ReadStringList(*it, "allow_shadowing"));
  out.disabled = TALARIA_TRY(ReadStringList(*it, "disabled"));
  if (auto c = it->find("cache"); c != it->end() && !c->is_null()) {
    if (!c->is_boolean()) return Err(InvalidArgumentError("plugins.cache must be true or false"));
    out.cache = c->get<bool>();
  }
  if (auto t = it->find("trial"); t != it->end() && !t->is_null()) {
    if (!t->is_boolean()) return Err(InvalidArgumentError("plugins.trial must be true or false"));
    out.trial = t->get<bool>();
  }
  if (auto t = it->find("trial_timeout_s"); t != it->end() && !t->is_null()) {
    if (!t->is_number() || t->get<double>() <= 0 || t->get<double>() > 3600) {
      return Err(
          InvalidArgumentError("plugins.trial_timeout_s must be a number of seconds in (0, 3600]"));
    }
    out.trial_timeout = std::chrono::milliseconds(static_cast<int64_t>(t->get<double>() * 1000));
  }
  return out;
}

std::string DefaultPluginDir() { return TalariaHome() + "/plugins"; }
std::string DefaultScanCachePath() { return TalariaHome() + "/plugin-scan-cache.json"; }

DiscoveryOptions OptionsFromConfig(const PluginConfig& config,
                                   const std::vector<std::string>& extra_dirs) {
  DiscoveryOptions options;
  options.dirs.push_back(DefaultPluginDir());
  options.dirs.insert(options.dirs.end(), config.dirs.begin(), config.dirs.end());
  options.dirs.insert(options.dirs.end(), extra_dirs.begin(), extra_dirs.end());
  if (config.cache) options.cache_path = DefaultScanCachePath();
  options.allow_shadowing = config.allow_shadowing;
  options.disabled = config.disabled;
  options.trial = config.trial;
  options.trial_timeout = config.trial_timeout;
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/')
    options.guard.home = home;
  options.guard.talaria_home = TalariaHome();
  return options;
}

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
  talaria_plugin_host host{};
  host.interface_version = TALARIA_PLUGIN_INTERFACE_VERSION;
  host.struct_size = sizeof(talaria_plugin_host);
  host.context = &staging;
  host.plugin_name = staging.plugin_name.c_str();
  host.register_tool = &HostRegisterTool;
  host.set_error = &HostSetError;
  host.log = &HostLog;
  host.register_resource = &HostRegisterResource;
  host.register_prompt = &HostRegisterPrompt;
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
