// Main-content extraction on real pages (issue 22): quality and speed of
// talaria::html::ExtractMainContent on tests/data/real_pages (mozilla/readability's test
// pages with their human-checked extraction: news, blogs, docs, wikis, forums and product
// pages in nine languages, four in legacy charsets; a held-out set never tuned on), side by
// side with Debian's readability-lxml run in the same sitting (bench/readability_real.py).
//
// Both extractors' outputs are scored here, by the same code (support/real_pages.h): main
// snippets found are true positives, missing ones false negatives, boilerplate snippets found
// false positives; precision, recall and F over all snippets of a set (micro), per set.
// Speed: per page the median of --repeat runs (decoded page in, markdown out); the median
// page, MB/s over the pages' summed medians, and the CPU-time ratio to readability-lxml.
//
//   talaria_real_extract_bench [--repeat N] [--no-baseline] [-v] [--pages] [--dump NAME]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/real_pages.h"
#include "talaria/html/main_content.h"

namespace {

using talaria::test_support::RealPage;
using talaria::test_support::SnippetCounts;

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

// One extractor's results on the pages.
struct Side {
  std::map<std::string, SnippetCounts> by_split;  // "tuning", "heldout"
  std::vector<double> wall_ms;
  std::vector<double> cpu_ms;
  double total_seconds = 0;
  size_t total_bytes = 0;
};

void PrintQuality(const char* prefix, const Side& side) {
  for (const char* split : {"tuning", "heldout"}) {
    const auto it = side.by_split.find(split);
    const SnippetCounts c = it == side.by_split.end() ? SnippetCounts{} : it->second;
    std::printf("METRIC %s_precision_%s %.3f ratio\n", prefix, split, c.Precision());
    std::printf("METRIC %s_recall_%s %.3f ratio\n", prefix, split, c.Recall());
    std::printf("METRIC %s_f_%s %.3f ratio\n", prefix, split, c.F());
  }
  SnippetCounts all;
  for (const auto& [split, c] : side.by_split) all.Add(c);
  std::printf("METRIC %s_f_all %.3f ratio\n", prefix, all.F());
}

void Score(const RealPage& page, const std::string& output, bool verbose, const char* who,
           Side& side, SnippetCounts& page_counts) {
  std::vector<std::string> missing;
  std::vector<std::string> leaked;
  page_counts = talaria::test_support::ScoreExtraction(
      page, talaria::test_support::NormalizeForScoring(output), &missing, &leaked);
  side.by_split[page.split].Add(page_counts);
  if (!verbose) return;
  for (const auto& s : missing) std::cerr << who << " " << page.name << " MISSING: " << s << "\n";
  for (const auto& s : leaked) std::cerr << who << " " << page.name << " LEAKED: " << s << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 10;
  bool baseline = true;
  bool verbose = false;
  bool per_page = false;
  std::string dump;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--no-baseline") == 0) {
      baseline = false;
    } else if (std::strcmp(argv[i], "-v") == 0) {
      verbose = true;
    } else if (std::strcmp(argv[i], "--pages") == 0) {
      per_page = true;
    } else if (std::strcmp(argv[i], "--dump") == 0 && i + 1 < argc) {
      dump = argv[++i];
    } else {
      only.emplace_back(argv[i]);
    }
  }
  const std::string dir = talaria::test_support::RealPagesDir();
  std::vector<RealPage> pages = talaria::test_support::LoadRealPages(dir);
  if (pages.empty()) {
    std::fprintf(stderr, "no pages in %s\n", dir.c_str());
    return 1;
  }
  if (!only.empty()) {
    std::erase_if(pages, [&](const RealPage& p) {
      return std::find(only.begin(), only.end(), p.name) == only.end();
    });
  }
  std::printf("METRIC extract_real_pages %zu pages\n", pages.size());
  std::printf("# load average at start: %s\n", LoadAverage().c_str());
  std::fflush(stdout);

  Side talaria_side;
  std::map<std::string, SnippetCounts> talaria_pages;
  for (const RealPage& page : pages) {
    const std::string html = talaria::test_support::RealPageUtf8(page);
    talaria::html::ExtractOptions options;
    options.base_url = page.url;
    talaria::html::ExtractedPage result;
    std::vector<double> walls;
    std::vector<double> cpus;
    for (int r = 0; r < repeat; ++r) {
      const double cpu_start = ThreadCpuSeconds();
      const auto start = std::chrono::steady_clock::now();
      result = talaria::html::ExtractMainContent(html, options);
      walls.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() * 1000);
      cpus.push_back((ThreadCpuSeconds() - cpu_start) * 1000);
    }
    talaria_side.wall_ms.push_back(Median(walls));
    talaria_side.cpu_ms.push_back(Median(cpus));
    talaria_side.total_seconds += Median(walls) / 1000;
    talaria_side.total_bytes += html.size();
    if (page.name == dump) std::cerr << "TITLE: " << result.title << "\n" << result.markdown;
    Score(page, result.markdown, verbose, "talaria", talaria_side, talaria_pages[page.name]);
  }
  PrintQuality("extract_real", talaria_side);
  const double median_ms = Median(talaria_side.wall_ms);
  const double median_cpu_ms = Median(talaria_side.cpu_ms);
  std::printf("METRIC extract_real_median_ms %.3f ms\n", median_ms);
  std::printf("METRIC extract_real_cpu_median_ms %.3f ms\n", median_cpu_ms);
  std::printf("METRIC extract_real_mb_s %.1f MB/s\n",
              static_cast<double>(talaria_side.total_bytes) / talaria_side.total_seconds / 1e6);
  std::fflush(stdout);

  Side lxml_side;
  std::map<std::string, SnippetCounts> lxml_pages;
  if (baseline) {
    std::string command = "/usr/bin/python3 " + std::string(TALARIA_SOURCE_DIR) +
                          "/bench/readability_real.py " + dir + " " +
                          std::to_string(std::max(1, repeat / 2));
    for (const auto& name : only) command += " '" + name + "'";
    FILE* pipe = popen(command.c_str(), "r");
    std::string line;
    char buf[65536];
    std::map<std::string, const RealPage*> by_name;
    for (const auto& p : pages) by_name[p.name] = &p;
    while (pipe != nullptr && std::fgets(buf, sizeof buf, pipe) != nullptr) {
      line += buf;
      if (line.empty() || line.back() != '\n') continue;
      const auto j = nlohmann::json::parse(line, nullptr, false);
      line.clear();
      if (!j.is_object() || !by_name.contains(j.value("name", ""))) continue;
      const RealPage& page = *by_name[j["name"].get<std::string>()];
      lxml_side.wall_ms.push_back(j.value("wall_ms", 0.0));
      lxml_side.cpu_ms.push_back(j.value("cpu_ms", 0.0));
      lxml_side.total_seconds += j.value("wall_ms", 0.0) / 1000;
      lxml_side.total_bytes += talaria::test_support::RealPageUtf8(page).size();
      Score(page, j.value("text", ""), verbose, "readability-lxml", lxml_side,
            lxml_pages[page.name]);
    }
    const int status = pipe != nullptr ? pclose(pipe) : -1;
    if (status != 0 || lxml_side.wall_ms.size() != pages.size()) {
      std::fprintf(stderr,
                   "readability-lxml did not run on every page (apt-get install "
                   "python3-readability)\n");
      baseline = false;
    }
  }
  if (baseline) {
    PrintQuality("readability_lxml_real", lxml_side);
    const double lxml_ms = Median(lxml_side.wall_ms);
    const double lxml_cpu_ms = Median(lxml_side.cpu_ms);
    std::printf("METRIC readability_lxml_real_median_ms %.3f ms\n", lxml_ms);
    std::printf("METRIC readability_lxml_real_cpu_median_ms %.3f ms\n", lxml_cpu_ms);
    std::printf("METRIC readability_lxml_real_mb_s %.2f MB/s\n",
                static_cast<double>(lxml_side.total_bytes) / lxml_side.total_seconds / 1e6);
    std::printf("METRIC extract_real_speedup_vs_readability %.1f x\n", lxml_ms / median_ms);
    // In CPU time: on a shared machine the wall-clock ratio swings with the load.
    std::printf("METRIC extract_real_cpu_speedup_vs_readability %.1f x\n",
                lxml_cpu_ms / median_cpu_ms);
  }
  if (per_page) {
    std::printf("# page split kind lang | talaria P R F | readability-lxml P R F\n");
    for (const RealPage& page : pages) {
      const SnippetCounts& t = talaria_pages[page.name];
      const SnippetCounts& l = lxml_pages[page.name];
      std::printf("# %-22s %-7s %-7s %-5s | %.2f %.2f %.2f | %.2f %.2f %.2f\n", page.name.c_str(),
                  page.split.c_str(), page.kind.c_str(), page.lang.c_str(), t.Precision(),
                  t.Recall(), t.F(), l.Precision(), l.Recall(), l.F());
    }
  }
  std::printf("# load average at end: %s\n", LoadAverage().c_str());
  return 0;
}
