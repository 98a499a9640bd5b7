// talaria_search_bench: search_files' in-process engine against ripgrep on the same trees and
// patterns (issue 3's benchmark). Both sides count matching lines only (rg -c, engine count
// mode) so neither pays for printing, use the same thread count (the machine's cores), and see
// the same tree: no hidden files, no ignore files, no binaries, so both visit the same files.
//
//   talaria_search_bench [--large-mb N] [--repeat K] [--keep]
//
// Generates a deterministic tree of >= N MB (default 200; splitmix64-driven text in 40 x 10
// directories) and a tree of < 1 MB under $TMPDIR, times a literal and a regex on the large
// tree (median of K runs after a warm-up, default 5) and a literal on the small one (median of
// 50 runs), prints METRIC lines, checks that every match count equals rg's (exit 2 if not), and
// deletes both trees. Needs `rg` on PATH (Debian package ripgrep).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "talaria/base/subprocess.h"
#include "talaria/base/unique_fd.h"
#include "talaria/search/search_engine.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

using talaria_bench::Median;
using talaria_bench::PrintMetric;
using talaria_bench::SplitMix64;

constexpr std::string_view kLiteral = "ZebraQuartz";
constexpr std::string_view kRegex = R"(\w+_handler\(\d+\))";

fs::path g_base;  // the generated trees, deleted on every exit path

void Die(const std::string& message) {
  std::fprintf(stderr, "search_bench: %s\n", message.c_str());
  if (!g_base.empty()) {
    std::error_code ec;
    fs::remove_all(g_base, ec);
  }
  std::exit(1);
}

// One line of code-like text: identifiers, punctuation, now and then a needle or a handler call.
void AppendLine(SplitMix64& rng, std::string& out) {
  static const std::vector<std::string> kWords = [] {
    std::vector<std::string> w = {
        "self",   "return",   "if",     "else",    "for",     "while",    "def",    "class",
        "import", "from",     "None",   "True",    "False",   "value",    "result", "index",
        "count",  "buffer",   "config", "handler", "request", "response", "=",      "==",
        "+",      "-",        "(",      ")",       "{",       "}",        ":",      ",",
        "# note", "\"text\"", "0",      "1",       "42",      "[i]",      "->",     "&&"};
    SplitMix64 g(7);
    for (int i = 0; i < 160; ++i) {
      std::string id;
      const int len = 3 + static_cast<int>(g.Below(8));
      for (int k = 0; k < len; ++k) id.push_back(static_cast<char>('a' + g.Below(26)));
      if (g.Below(3) == 0) id += "_" + std::to_string(g.Below(100));
      w.push_back(std::move(id));
    }
    return w;
  }();
  const int indent = static_cast<int>(rng.Below(4)) * 4;
  out.append(static_cast<size_t>(indent), ' ');
  const int tokens = 4 + static_cast<int>(rng.Below(12));
  for (int t = 0; t < tokens; ++t) {
    if (t > 0) out.push_back(' ');
    out += kWords[rng.Below(kWords.size())];
  }
  const uint64_t roll = rng.Below(4096);
  if (roll == 0) {
    out += " ";
    out += kLiteral;
  } else if (roll < 5) {
    out += " on_" + kWords[rng.Below(kWords.size())] + "_handler(" +
           std::to_string(rng.Below(1000)) + ")";
  } else if (roll < 9) {
    out += " _handler(x)";  // a decoy: the literal without the regex
  }
  out.push_back('\n');
}

void WriteFile(const fs::path& path, const std::string& content) {
  talaria::UniqueFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd) Die("cannot create " + path.string());
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t w = write(fd.get(), content.data() + done, content.size() - done);
    if (w <= 0) Die("write failed: " + path.string());
    done += static_cast<size_t>(w);
  }
}

// dirs x subdirs x files files of about file_bytes each; returns the bytes written.
uint64_t GenerateTree(const fs::path& root, uint64_t seed, int dirs, int subdirs, int files,
                      size_t file_bytes) {
  SplitMix64 rng(seed);
  uint64_t total = 0;
  std::string content;
  for (int d = 0; d < dirs; ++d) {
    for (int s = 0; s < subdirs; ++s) {
      const fs::path dir = root / ("pkg" + std::to_string(d)) / ("mod" + std::to_string(s));
      fs::create_directories(dir);
      for (int f = 0; f < files; ++f) {
        content.clear();
        const size_t target = file_bytes / 2 + rng.Below(file_bytes);
        while (content.size() < target) AppendLine(rng, content);
        WriteFile(dir / ("file" + std::to_string(f) + ".py"), content);
        total += content.size();
      }
    }
  }
  return total;
}

struct Timed {
  double ms = 0;
  int64_t count = 0;
};

Timed RunEngine(const fs::path& root, std::string_view pattern) {
  const auto t0 = Clock::now();
  talaria::UniqueFd fd(open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) Die("cannot open " + root.string());
  talaria::search::SearchRequest req;
  req.pattern = std::string(pattern);
  req.output_mode = talaria::search::SearchOutputMode::kCount;
  req.limit = 1'000'000;  // every file: the whole tree is searched, like rg -c
  auto out = talaria::search::SearchDirectory(fd.get(), req);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (!out) Die("engine: " + out.error().ToString());
  if (out->truncated) Die("engine result truncated; raise the limit");
  return {ms, out->total_count};
}

Timed RunRg(const fs::path& root, std::string_view pattern) {
  talaria::SpawnOptions opts;
  opts.argv = {"rg", "-c", std::string(pattern), root.string()};
  opts.max_output_bytes = size_t{64} << 20;
  opts.timeout = std::chrono::minutes(5);
  const auto t0 = Clock::now();
  auto res = talaria::RunProcess(opts);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (!res) Die("rg: " + res.error().ToString());
  if (res->exit_code > 1)
    Die("rg failed (" + std::to_string(res->exit_code) + "): " + res->stderr_text);
  int64_t total = 0;
  std::string_view text = res->stdout_text;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    const size_t colon = line.rfind(':');
    if (colon != std::string_view::npos)
      total += std::atoll(std::string(line.substr(colon + 1)).c_str());
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  return {ms, total};
}

bool g_counts_ok = true;

void Compare(std::string_view name, const fs::path& root, std::string_view pattern, int repeat) {
  RunEngine(root, pattern);  // warm-up: page cache, allocator, JIT
  RunRg(root, pattern);
  std::vector<double> engine_ms;
  std::vector<double> rg_ms;
  int64_t engine_count = 0;
  int64_t rg_count = 0;
  for (int i = 0; i < repeat; ++i) {
    const Timed e = RunEngine(root, pattern);
    const Timed r = RunRg(root, pattern);
    engine_ms.push_back(e.ms);
    rg_ms.push_back(r.ms);
    engine_count = e.count;
    rg_count = r.count;
  }
  const std::string n(name);
  PrintMetric(n + "_ms", Median(engine_ms), "ms");
  PrintMetric(n + "_rg_ms", Median(rg_ms), "ms");
  PrintMetric(n + "_matches", static_cast<double>(engine_count), "lines");
  PrintMetric(n + "_rg_matches", static_cast<double>(rg_count), "lines");
  std::printf("# %s: engine/rg = %.2f\n", n.c_str(), Median(engine_ms) / Median(rg_ms));
  if (engine_count != rg_count) {
    std::fprintf(stderr, "search_bench: %s: engine counted %lld lines, rg %lld\n", n.c_str(),
                 static_cast<long long>(engine_count), static_cast<long long>(rg_count));
    g_counts_ok = false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int large_mb = 200;
  int repeat = 5;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--large-mb" && i + 1 < argc) {
      large_mb = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--keep") {
      keep = true;
    } else {
      std::fprintf(stderr, "usage: %s [--large-mb N] [--repeat K] [--keep]\n", argv[0]);
      return 64;
    }
  }

  std::string tmpl = (fs::temp_directory_path() / "talaria-search-bench-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) Die("mkdtemp failed");
  const fs::path base = tmpl;
  g_base = base;
  const fs::path large = base / "large";
  const fs::path small = base / "small";

  // Large: 40 x 10 directories x 20 files averaging the size that reaches large_mb.
  const size_t file_bytes = static_cast<size_t>(large_mb) * (size_t{1} << 20) / 8000 + 1024;
  const auto g0 = Clock::now();
  const uint64_t large_bytes = GenerateTree(large, 0x5EA4C4, 40, 10, 20, file_bytes);
  const uint64_t small_bytes = GenerateTree(small, 0x5A11, 4, 2, 8, 12 * 1024);
  std::printf("# generated %.1f MB (8000 files) and %.1f KB (64 files) in %.1f s\n",
              static_cast<double>(large_bytes) / (1 << 20), static_cast<double>(small_bytes) / 1024,
              std::chrono::duration<double>(Clock::now() - g0).count());
  PrintMetric("search_large_tree_mb", static_cast<double>(large_bytes) / (1 << 20), "MB");
  PrintMetric("search_small_tree_kb", static_cast<double>(small_bytes) / 1024, "KB");
  std::printf("# threads: %u (engine default = rg default = cores)\n",
              std::thread::hardware_concurrency());

  Compare("search_large_literal", large, kLiteral, repeat);
  Compare("search_large_regex", large, kRegex, repeat);

  // Small tree: the engine in process vs spawning rg (each median of 50).
  RunEngine(small, kLiteral);
  RunRg(small, kLiteral);
  std::vector<double> engine_ms;
  std::vector<double> rg_ms;
  Timed e;
  Timed r;
  for (int i = 0; i < 50; ++i) {
    e = RunEngine(small, kLiteral);
    r = RunRg(small, kLiteral);
    engine_ms.push_back(e.ms);
    rg_ms.push_back(r.ms);
  }
  PrintMetric("search_small_literal_ms", Median(engine_ms), "ms");
  PrintMetric("search_small_rg_spawn_ms", Median(rg_ms), "ms");
  PrintMetric("search_small_literal_matches", static_cast<double>(e.count), "lines");
  PrintMetric("search_small_literal_rg_matches", static_cast<double>(r.count), "lines");
  if (e.count != r.count) g_counts_ok = false;

  // A catastrophic regex, (a+)+$ over a line of 50,000 a's: the backtracking limit ends it, with
  // no match or an error (the unit tests check that it ends; this says how fast). Median of 5.
  {
    const fs::path evil = base / "catastrophic";
    fs::create_directories(evil);
    std::ofstream(evil / "long.txt") << std::string(50'000, 'a') << "b\n";
    std::vector<double> evil_ms;
    for (int i = 0; i < 5; ++i) {
      const auto t0 = Clock::now();
      talaria::UniqueFd fd(open(evil.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (!fd) Die("cannot open " + evil.string());
      talaria::search::SearchRequest req;
      req.pattern = "(a+)+$";
      (void)talaria::search::SearchDirectory(fd.get(), req);
      evil_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    PrintMetric("search_catastrophic_regex_ms", Median(evil_ms), "ms");
  }

  if (!keep) {
    std::error_code ec;
    fs::remove_all(base, ec);
    if (ec)
      std::fprintf(stderr, "search_bench: could not delete %s: %s\n", base.c_str(),
                   ec.message().c_str());
  } else {
    std::printf("# kept %s\n", base.c_str());
  }
  g_base.clear();
  if (!g_counts_ok) {
    std::fprintf(stderr, "search_bench: match counts differ from rg\n");
    return 2;
  }
  return 0;
}
