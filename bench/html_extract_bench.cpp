// Main-content extraction (issue 22): quality and speed of talaria::html::ExtractMainContent on
// the pages in tests/data/html_pages (written for this benchmark: news, docs, blogs, forums,
// shops in English, German, Chinese, Japanese and Russian; a held-out part not tuned on), side
// by side with Debian's readability-lxml run in the same sitting (bench/readability_baseline.py).
//
// Quality: a page's expected snippets found in the output are true positives, missing ones
// false negatives; its boilerplate snippets found are false positives. Precision, recall and F
// over all snippets, train and held-out separately. Text is compared after removing markdown
// characters and collapsing whitespace, the same on both sides.
//
//   talaria_html_extract_bench [--repeat N] [--no-baseline] [-v] [--dump page.html]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "talaria/html/main_content.h"

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Markdown without its markup characters and link targets, whitespace collapsed.
std::string Normalize(const std::string& text, bool strip_link_targets) {
  std::string plain;
  for (size_t i = 0; i < text.size(); ++i) {
    if (strip_link_targets && text[i] == ']' && i + 1 < text.size() && text[i + 1] == '(') {
      const size_t close = text.find(')', i + 2);
      if (close != std::string::npos) {
        i = close;
        continue;
      }
    }
    plain += text[i];
  }
  std::string out;
  for (const char c : plain) {
    if (std::strchr("*`#>|[]!_", c) != nullptr) continue;
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// CPU time of this thread: unlike wall time, it does not grow while other processes run.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Counts {
  int tp = 0, fp = 0, fn = 0;
};

void PrintQuality(const char* prefix, const Counts& c, const char* suffix) {
  const double p = c.tp + c.fp ? static_cast<double>(c.tp) / (c.tp + c.fp) : 0;
  const double r = c.tp + c.fn ? static_cast<double>(c.tp) / (c.tp + c.fn) : 0;
  const double f = p + r > 0 ? 2 * p * r / (p + r) : 0;
  std::printf("METRIC %s_precision%s %.3f ratio\n", prefix, suffix, p);
  std::printf("METRIC %s_recall%s %.3f ratio\n", prefix, suffix, r);
  std::printf("METRIC %s_f%s %.3f ratio\n", prefix, suffix, f);
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 20;
  bool baseline = true;
  bool verbose = false;
  std::string dump;  // --dump FILE: print that page's markdown
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) repeat = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--no-baseline") == 0) baseline = false;
    if (std::strcmp(argv[i], "-v") == 0) verbose = true;
    if (std::strcmp(argv[i], "--dump") == 0 && i + 1 < argc) dump = argv[++i];
  }
  const std::string dir = std::string(TALARIA_SOURCE_DIR) + "/tests/data/html_pages";
  const nlohmann::json manifest = nlohmann::json::parse(ReadFile(dir + "/manifest.json"));
  std::map<std::string, Counts> counts;
  std::vector<double> page_ms;
  std::vector<double> page_cpu_ms;
  double total_seconds = 0;
  size_t total_bytes = 0;
  for (const auto& page : manifest) {
    const std::string html = ReadFile(dir + "/" + page["file"].get<std::string>());
    talaria::html::ExtractOptions options;
    options.base_url = page["url"].get<std::string>();
    talaria::html::ExtractedPage result;
    std::vector<double> samples;
    std::vector<double> cpu_samples;
    for (int r = 0; r < repeat; ++r) {
      const double cpu_start = ThreadCpuSeconds();
      const auto start = std::chrono::steady_clock::now();
      result = talaria::html::ExtractMainContent(html, options);
      samples.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      cpu_samples.push_back(ThreadCpuSeconds() - cpu_start);
    }
    std::sort(samples.begin(), samples.end());
    std::sort(cpu_samples.begin(), cpu_samples.end());
    const double median = samples[samples.size() / 2];
    page_ms.push_back(median * 1000);
    page_cpu_ms.push_back(cpu_samples[cpu_samples.size() / 2] * 1000);
    total_seconds += median;
    total_bytes += html.size();
    if (page["file"] == dump) std::cerr << "TITLE: " << result.title << "\n" << result.markdown;
    const std::string got = Normalize(result.markdown, true);
    Counts& c = counts[page["split"].get<std::string>()];
    for (const auto& s : page["expect"]) {
      const bool found = got.find(Normalize(s.get<std::string>(), false)) != std::string::npos;
      (found ? c.tp : c.fn) += 1;
      if (verbose && !found) std::cerr << page["file"] << " MISSING: " << s << "\n";
    }
    for (const auto& s : page["reject"]) {
      const bool found = got.find(Normalize(s.get<std::string>(), false)) != std::string::npos;
      if (found) c.fp += 1;
      if (verbose && found) std::cerr << page["file"] << " BOILERPLATE: " << s << "\n";
    }
  }
  PrintQuality("extract", counts["train"], "");
  PrintQuality("extract", counts["heldout"], "_heldout");
  std::sort(page_ms.begin(), page_ms.end());
  const double median_ms = page_ms[page_ms.size() / 2];
  std::printf("METRIC extract_median_ms %.4f ms\n", median_ms);
  std::sort(page_cpu_ms.begin(), page_cpu_ms.end());
  const double median_cpu_ms = page_cpu_ms[page_cpu_ms.size() / 2];
  std::printf("METRIC extract_cpu_median_ms %.4f ms\n", median_cpu_ms);
  std::printf("METRIC extract_mb_s %.2f MB/s\n",
              static_cast<double>(total_bytes) / total_seconds / 1e6);
  std::fflush(stdout);
  if (!baseline) return 0;
  const std::string command = "/usr/bin/python3 " + std::string(TALARIA_SOURCE_DIR) +
                              "/bench/readability_baseline.py " + dir + " 5";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return 0;
  char line[512];
  double readability_ms = 0;
  double readability_cpu_ms = 0;
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    std::fputs(line, stdout);
    std::sscanf(line, "METRIC readability_lxml_median_ms %lf", &readability_ms);
    std::sscanf(line, "METRIC readability_lxml_cpu_median_ms %lf", &readability_cpu_ms);
  }
  if (pclose(pipe) != 0 || readability_ms <= 0) {
    std::fprintf(stderr,
                 "readability-lxml baseline did not run (apt-get install python3-readability)\n");
    return 0;
  }
  std::printf("METRIC extract_speedup_vs_readability %.1f x\n", readability_ms / median_ms);
  // The same ratio in CPU time: on a shared machine the wall-clock one swings with the load
  // (a 2 ms Python page is preempted far more often than a 0.1 ms C++ one).
  if (readability_cpu_ms > 0) {
    std::printf("METRIC extract_cpu_speedup_vs_readability %.1f x\n",
                readability_cpu_ms / median_cpu_ms);
  }
  return 0;
}
