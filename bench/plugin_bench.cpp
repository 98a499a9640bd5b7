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
//   W6_discovery_total_ms         list, stat, pre-scan, write the cache, dlopen + register 500
//   W6_discovery_total_cached_ms  the same with a warm verdict cache
//   W6_import_and_register_ms_derived  total - prescan (medians)
//   W6_dlopen_floor_500_ms        bare dlopen of 500 fresh copies: what loading costs at least
//   W6_registered_tools, W6_verdicts_fnv1a64 (over "name verdict scan\n" of every candidate)
//
// Each repetition runs in a fresh process (dlopen'ed images never go away):
//   talaria_plugin_bench [--repeat N]   (default 5; prints per-repeat lines prefixed with '#')
//   talaria_plugin_bench --once
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
                             talaria::Registry& registry, double& ms) {
  tp::PluginLoader loader(registry);
  tp::DiscoveryOptions options;
  options.dirs = {dir};
  options.cache_path = cache;
  options.mode = mode;
  const auto start = Clock::now();
  tp::DiscoveryReport report = loader.Discover(options);
  ms = MsSince(start);
  return report;
}

int RunOnce() {
  std::string root_tmpl = (fs::temp_directory_path() / "talaria-w6-XXXXXX").string();
  if (::mkdtemp(root_tmpl.data()) == nullptr) return 1;
  const std::string root = root_tmpl;
  const std::string a = root + "/a", b = root + "/b", c = root + "/c";
  BuildCandidates(a);
  BuildCandidates(b);
  BuildCandidates(c);

  talaria::Registry scratch;
  double prescan_ms = 0, prescan_cached_ms = 0, total_ms = 0, total_cached_ms = 0, ignored = 0;
  // Pre-scan only: without a cache (W6's measure), cold with a cache to write, then warm.
  double prescan_cold_ms = 0;
  const tp::DiscoveryReport scanned = Discover(a, "", tp::LoadMode::kScanOnly, scratch, prescan_ms);
  (void)Discover(a, root + "/a-cache.json", tp::LoadMode::kScanOnly, scratch, prescan_cold_ms);
  (void)Discover(a, root + "/a-cache.json", tp::LoadMode::kScanOnly, scratch, prescan_cached_ms);

  // Everything, cold: a fresh registry, no cache file yet.
  talaria::Registry registry_b;
  const tp::DiscoveryReport loaded =
      Discover(b, root + "/b-cache.json", tp::LoadMode::kLoad, registry_b, total_ms);
  // Everything with a warm cache (written by an earlier scan-only pass over c).
  (void)Discover(c, root + "/c-cache.json", tp::LoadMode::kScanOnly, scratch, ignored);
  talaria::Registry registry_c;
  const tp::DiscoveryReport loaded_c =
      Discover(c, root + "/c-cache.json", tp::LoadMode::kLoad, registry_c, total_cached_ms);

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
  const size_t registered = registry_b.ToolsOfToolset("discovery").size();
  if (accepted != kCandidates / 2 || registered != kCandidates / 2 ||
      loaded.Count(tp::Verdict::kLoaded) != kCandidates / 2 ||
      loaded_c.Count(tp::Verdict::kLoaded) != kCandidates / 2) {
    std::fprintf(stderr, "plugin_bench: expected 500 plugins; accepted %zu, registered %zu\n",
                 accepted, registered);
    for (const auto& cand : loaded.candidates) {
      if (cand.verdict == tp::Verdict::kFailed)
        std::fprintf(stderr, "  %s: %s\n", cand.name.c_str(), cand.reason.c_str());
    }
    return 1;
  }
  talaria_bench::PrintMetric("W6_prescan_only_ms", prescan_ms, "ms");
  talaria_bench::PrintMetric("W6_prescan_cold_with_cache_write_ms", prescan_cold_ms, "ms");
  talaria_bench::PrintMetric("W6_prescan_cached_ms", prescan_cached_ms, "ms");
  talaria_bench::PrintMetric("W6_discovery_total_ms", total_ms, "ms");
  talaria_bench::PrintMetric("W6_discovery_total_cached_ms", total_cached_ms, "ms");
  talaria_bench::PrintMetric("W6_import_and_register_ms_derived", total_ms - prescan_ms, "ms");
  talaria_bench::PrintMetric("W6_dlopen_floor_500_ms", dlopen_floor_ms, "ms");
  talaria_bench::PrintMetric("W6_registered_tools", static_cast<double>(registered), "tools");
  char hash[24];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(Fnv1a64(verdicts)));
  std::printf("METRIC W6_verdicts_fnv1a64 %s hash\n", hash);
  std::error_code ec;
  fs::remove_all(root, ec);
  return 0;
}

// Runs `--once` in `repeat` fresh processes and prints the median of every metric.
int RunRepeated(const char* self, int repeat) {
  std::map<std::string, std::vector<double>> values;
  std::map<std::string, std::string> units, hashes;
  std::vector<std::string> order;
  for (int r = 1; r <= repeat; ++r) {
    int fds[2];
    if (::pipe(fds) != 0) return 1;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    char once[] = "--once";
    char* argv[] = {const_cast<char*>(self), once, nullptr};
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    ::close(fds[0]);
    int status = 0;
    if (rc != 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "plugin_bench: repeat %d failed\n", r);
      return 1;
    }
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
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
  }
  return RunRepeated(argv[0], repeat);
}
