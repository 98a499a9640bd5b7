// talaria_plugin_bench: W6 of WORKLOADS.md (discovery) in talaria's terms (issue 7).
//
// 1,000 candidates bench_mod_0000.so ... bench_mod_0999.so in one flat directory: i mod 4 in
// {0, 2} a copy of one small plugin (500; each registers disc_<I4> into toolset "discovery"),
// i mod 4 = 1 an ordinary shared object without the entry point (it passes the ELF checks and
// fails the symbol lookup, like W6's template B), i mod 4 = 3 a text file (rejected at the magic,
// like template C). Fresh directories per measurement, files written before timing.
//
//   W6_prescan_only_ms            pre-scan of every candidate, sorted, no verdict cache
//   W6_prescan_cold_with_cache_write_ms  the same, writing a fresh verdict cache
//   W6_prescan_cached_ms          the same with a warm on-disk verdict cache (stat + lookup)
//   W6_discovery_total_ms         list, stat, pre-scan, write the cache, trial-load 500 in the
//                                 trial process (beside), dlopen + register 500
//   W6_discovery_total_cached_ms  the same with a warm verdict cache (written by an earlier
//                                 start, so scans and trials are remembered)
//   W6_discovery_total_no_trial_ms  cold, with the trial load turned off (what it costs)
//   W6_import_and_register_ms_derived  total - prescan (medians)
//   W6_dlopen_floor_500_ms        bare dlopen of 500 fresh copies: what loading costs at least
//   W6_registered_tools, W6_verdicts_fnv1a64 (over "name verdict scan\n" of every candidate)
//
// Each repetition runs in a fresh process (dlopen'ed images never go away):
//   talaria_plugin_bench [--repeat N]   (default 5; prints per-repeat lines prefixed with '#')
//   talaria_plugin_bench --once
//   talaria_plugin_bench --load DIR CACHE TRIAL(0|1) EXPECTED_TRIAL   (one start, timed)
#include <dlfcn.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench_util.h"
#include "talaria/core/registry.h"
#include "talaria/plugins/plugin_loader.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
namespace tp = talaria::plugins;
using Clock = std::chrono::steady_clock;

constexpr int kCandidates = 1000;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

void BuildCandidates(const std::string& dir) {
  fs::create_directories(dir);
  for (int i = 0; i < kCandidates; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "bench_mod_%04d.so", i);
    const std::string path = dir + "/" + name;
    switch (i % 4) {
      case 0:
      case 2:
        fs::copy_file(TALARIA_BENCH_PLUGIN, path);
        break;
      case 1:
        fs::copy_file(TALARIA_BENCH_LIBRARY, path);
        break;
      default: {
        std::ofstream out(path);
        out << "Generated discovery-benchmark file " << i << ": plain data, not a library.\n";
        for (int k = 0; k < 16; ++k) out << "TABLE row " << k << " of file " << i << "\n";
      }
    }
  }
}

tp::DiscoveryReport Discover(const std::string& dir, const std::string& cache, tp::LoadMode mode,
                             talaria::Registry& registry, double& ms, bool trial = true) {
  tp::PluginLoader loader(registry);
  tp::DiscoveryOptions options;
  options.dirs = {dir};
  options.cache_path = cache;
  options.mode = mode;
  options.trial = trial;
  const auto start = Clock::now();
  tp::DiscoveryReport report = loader.Discover(options);
  ms = MsSince(start);
  return report;
}

// Whether every loaded candidate's trial says `trial`.
bool AllTrials(const tp::DiscoveryReport& report, std::string_view trial) {
  return std::all_of(report.candidates.begin(), report.candidates.end(), [&](const auto& c) {
    return c.verdict != tp::Verdict::kLoaded || c.trial == trial;
  });
}

// Runs this program with `args`; its standard output when it exited 0.
std::optional<std::string> RunSelf(const std::vector<std::string>& args) {
  std::vector<std::string> copies = args;
  copies.insert(copies.begin(), "/proc/self/exe");
  std::vector<char*> argv;
  for (auto& arg : copies) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int fds[2];
  if (::pipe(fds) != 0) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  if (rc != 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    return std::nullopt;
  }
  return out;
}

// One start of talaria over `dir` (in a process of its own: images loaded before would make
// dlopen free, and 1,000 of them make it slower): loads everything, checks that all 500 plugins
// loaded with the expected trial state, and prints the milliseconds Discover took.
int RunLoad(const std::string& dir, const std::string& cache, bool trial,
            std::string_view expect_trial) {
  talaria::Registry registry;
  double ms = 0;
  const tp::DiscoveryReport report = Discover(dir, cache, tp::LoadMode::kLoad, registry, ms, trial);
  if (report.Count(tp::Verdict::kLoaded) != kCandidates / 2 ||
      registry.ToolsOfToolset("discovery").size() != kCandidates / 2 ||
      !AllTrials(report, expect_trial)) {
    std::fprintf(stderr, "plugin_bench: %s: expected 500 plugins loaded (trial %s)\n", dir.c_str(),
                 std::string(expect_trial).c_str());
    for (const auto& cand : report.candidates) {
      if (cand.verdict == tp::Verdict::kFailed)
        std::fprintf(stderr, "  %s: %s\n", cand.name.c_str(), cand.reason.c_str());
    }
    return 1;
  }
  std::printf("%.3f\n", ms);
  return 0;
}

// RunLoad in a child; its milliseconds, or -1 when it failed.
double LoadInChild(const std::string& dir, const std::string& cache, bool trial,
                   const char* expect_trial) {
  auto out = RunSelf({"--load", dir, cache, trial ? "1" : "0", expect_trial});
  return out ? std::strtod(out->c_str(), nullptr) : -1;
}

int RunOnce() {
  std::string root_tmpl = (fs::temp_directory_path() / "talaria-w6-XXXXXX").string();
  if (::mkdtemp(root_tmpl.data()) == nullptr) return 1;
  const std::string root = root_tmpl;
  const std::string a = root + "/a", b = root + "/b", c = root + "/c", e = root + "/e";
  for (const std::string& dir : {a, b, c, e}) BuildCandidates(dir);

  talaria::Registry scratch;
  double prescan_ms = 0, prescan_cached_ms = 0;
  // Pre-scan only: without a cache (W6's measure), cold with a cache to write, then warm.
  double prescan_cold_ms = 0;
  const tp::DiscoveryReport scanned = Discover(a, "", tp::LoadMode::kScanOnly, scratch, prescan_ms);
  (void)Discover(a, root + "/a-cache.json", tp::LoadMode::kScanOnly, scratch, prescan_cold_ms);
  (void)Discover(a, root + "/a-cache.json", tp::LoadMode::kScanOnly, scratch, prescan_cached_ms);

  // Everything, cold: no cache file yet; the trial load on (the default) and off.
  const double total_ms = LoadInChild(b, root + "/b-cache.json", true, "passed");
  const double no_trial_ms = LoadInChild(e, root + "/e-cache.json", false, "off");
  // Everything with the cache an earlier start wrote (scans and trials remembered).
  const double warm_ms = LoadInChild(c, root + "/c-cache.json", true, "passed");
  const double total_cached_ms = LoadInChild(c, root + "/c-cache.json", true, "cached");
  if (total_ms < 0 || no_trial_ms < 0 || warm_ms < 0 || total_cached_ms < 0) return 1;

  // The floor: dlopen (RTLD_NOW | RTLD_LOCAL) of 500 fresh plugin copies and nothing else.
  const std::string d = root + "/d";
  fs::create_directories(d);
  for (int i = 0; i < kCandidates / 2; ++i)
    fs::copy_file(TALARIA_BENCH_PLUGIN, d + "/p" + std::to_string(i) + ".so");
  const auto floor_start = Clock::now();
  for (int i = 0; i < kCandidates / 2; ++i) {
    const std::string path = d + "/p" + std::to_string(i) + ".so";
    if (::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL) == nullptr) return 1;
  }
  const double dlopen_floor_ms = MsSince(floor_start);

  size_t accepted = 0;
  std::string verdicts;
  for (const auto& cand : scanned.candidates) {
    if (cand.scan == tp::ScanOutcome::kAccepted) ++accepted;
    verdicts += cand.name + " " + std::string(tp::VerdictName(cand.verdict)) + " " +
                std::string(tp::ScanOutcomeName(cand.scan)) + "\n";
  }
  if (accepted != kCandidates / 2) {
    std::fprintf(stderr, "plugin_bench: expected 500 plugins; the pre-scan accepted %zu\n",
                 accepted);
    return 1;
  }
  talaria_bench::PrintMetric("W6_prescan_only_ms", prescan_ms, "ms");
  talaria_bench::PrintMetric("W6_prescan_cold_with_cache_write_ms", prescan_cold_ms, "ms");
  talaria_bench::PrintMetric("W6_prescan_cached_ms", prescan_cached_ms, "ms");
  talaria_bench::PrintMetric("W6_discovery_total_ms", total_ms, "ms");
  talaria_bench::PrintMetric("W6_discovery_total_cached_ms", total_cached_ms, "ms");
  talaria_bench::PrintMetric("W6_discovery_total_no_trial_ms", no_trial_ms, "ms");
  talaria_bench::PrintMetric("W6_import_and_register_ms_derived", total_ms - prescan_ms, "ms");
  talaria_bench::PrintMetric("W6_dlopen_floor_500_ms", dlopen_floor_ms, "ms");
  talaria_bench::PrintMetric("W6_registered_tools", static_cast<double>(kCandidates / 2), "tools");
  char hash[24];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(Fnv1a64(verdicts)));
  std::printf("METRIC W6_verdicts_fnv1a64 %s hash\n", hash);
  std::error_code ec;
  fs::remove_all(root, ec);
  return 0;
}

// Runs `--once` in `repeat` fresh processes and prints the median of every metric.
int RunRepeated(int repeat) {
  std::map<std::string, std::vector<double>> values;
  std::map<std::string, std::string> units, hashes;
  std::vector<std::string> order;
  for (int r = 1; r <= repeat; ++r) {
    const std::optional<std::string> run = RunSelf({"--once"});
    if (!run) {
      std::fprintf(stderr, "plugin_bench: repeat %d failed\n", r);
      return 1;
    }
    const std::string& out = *run;
    size_t pos = 0;
    while (pos < out.size()) {
      size_t eol = out.find('\n', pos);
      if (eol == std::string::npos) eol = out.size();
      const std::string line = out.substr(pos, eol - pos);
      pos = eol + 1;
      char name[128], value[64], unit[32];
      if (std::sscanf(line.c_str(), "METRIC %127s %63s %31s", name, value, unit) != 3) continue;
      std::printf("# repeat %d: %s\n", r, line.c_str());
      if (!units.contains(name)) order.push_back(name);
      units[name] = unit;
      if (std::string(unit) == "hash") {
        if (hashes.contains(name) && hashes[name] != value) {
          std::fprintf(stderr, "plugin_bench: %s differs between repeats\n", name);
          return 1;
        }
        hashes[name] = value;
      } else {
        values[name].push_back(std::strtod(value, nullptr));
      }
    }
  }
  for (const auto& name : order) {
    if (units[name] == "hash")
      std::printf("METRIC %s %s hash\n", name.c_str(), hashes[name].c_str());
    else
      talaria_bench::PrintMetric(name, talaria_bench::Median(values[name]), units[name]);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 5;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--once") == 0) return RunOnce();
    if (std::strcmp(argv[i], "--load") == 0 && i + 4 < argc) {
      return RunLoad(argv[i + 1], argv[i + 2], std::strcmp(argv[i + 3], "1") == 0, argv[i + 4]);
    }
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
  }
  return RunRepeated(repeat);
}
