// talaria_lint_bench: the post-write lint of issue 3.
//   talaria_lint_bench [--quick]
// Prints one `METRIC <name> <value> <unit>` line per metric:
//   lint_python_init_ms           first Python lint of the process (starts the interpreter)
//   lint_{json,yaml,toml,python}_300_us   LintContent of a 300-line file of that type
//   lint_python_inprocess_us      the 300-line Python file, in-process (same as above, own run)
//   lint_python_subprocess_us     `/usr/bin/python3 -m py_compile <file>` through RunProcess
//   lint_python_speedup_x         subprocess / in-process (target >= 5)
// Timing: one warm-up block of n/10, then 5 timed blocks of n; the value is the median block's
// mean per iteration. --quick shrinks n for a smoke run.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/subprocess.h"
#include "talaria/lint/lint.h"

namespace {

using Clock = std::chrono::steady_clock;

template <typename T>
void DoNotOptimize(const T& value) {
  asm volatile("" : : "g"(&value) : "memory");
}

template <typename Body>
double MedianBlockUs(int n, Body&& body) {
  for (int i = 0; i < std::max(1, n / 10); ++i) body();
  std::vector<double> blocks;
  for (int run = 0; run < 5; ++run) {
    const auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) body();
    const auto t1 = Clock::now();
    blocks.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
  }
  std::sort(blocks.begin(), blocks.end());
  return blocks[blocks.size() / 2];
}

void Metric(std::string_view name, double value, std::string_view unit) {
  std::printf("METRIC %.*s %.4g %.*s\n", static_cast<int>(name.size()), name.data(), value,
              static_cast<int>(unit.size()), unit.data());
}

// --- 300-line inputs, shaped like real files of each type ---------------------------------

std::string Json300() {
  std::string s = "{\n  \"name\": \"bench\",\n  \"items\": [\n";
  int lines = 3;
  for (int i = 0; lines < 296; ++i, lines += 6) {
    s += "    {\n      \"id\": " + std::to_string(i) + ",\n      \"label\": \"item " +
         std::to_string(i) + "\",\n      \"tags\": [\"a\", \"b\"],\n      \"ratio\": 0." +
         std::to_string(i) + "\n    },\n";
  }
  s += "    {}\n  ],\n  \"ok\": true\n}\n";
  return s;
}

std::string Yaml300() {
  std::string s = "version: 1\nservices:\n";
  for (int i = 0; i < 49; ++i) {
    s += "  svc" + std::to_string(i) + ":\n    image: \"repo/img:" + std::to_string(i) +
         "\"\n    ports: [80, 443]\n    env:\n      MODE: prod\n      LEVEL: " + std::to_string(i) +
         "\n";
  }
  for (int i = 0; i < 4; ++i) s += "extra" + std::to_string(i) + ": x\n";
  return s;
}

std::string Toml300() {
  std::string s = "[package]\nname = \"bench\"\nversion = \"0.1.0\"\n\n";
  for (int i = 0; i < 59; ++i) {
    s += "[deps.d" + std::to_string(i) + "]\nversion = \"1." + std::to_string(i) +
         "\"\nfeatures = [\"a\", \"b\"]\noptional = false\n\n";
  }
  s += "[end]\n";
  return s;
}

std::string Python300() {
  std::string s = "import os\nimport sys\n\n\n";
  for (int i = 0; i < 37; ++i) {
    s += "def func_" + std::to_string(i) +
         "(a, b, c=None):\n    \"\"\"Doc.\"\"\"\n    x = [a * 2 for a in range(10)]\n    if a "
         "and b:\n        return {'k': x, 'v': c}\n    return os.path.join(str(a), "
         "str(b))\n\n\n";
  }
  return s;
}

int CountLines(std::string_view s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string_view(argv[1]) == "--quick";
  const int n = quick ? 20 : 400;
  const int n_subprocess = quick ? 3 : 20;

  const std::string json = Json300();
  const std::string yaml = Yaml300();
  const std::string toml = Toml300();
  const std::string python = Python300();
  for (const auto& [path, text] : {std::pair{"b.json", &json}, std::pair{"b.yaml", &yaml},
                                   std::pair{"b.toml", &toml}, std::pair{"b.py", &python}}) {
    const int lines = CountLines(*text);
    if (lines < 295 || lines > 305) {
      std::fprintf(stderr, "lint_bench: %s input has %d lines\n", path, lines);
      return 1;
    }
  }

  const auto t0 = Clock::now();
  const talaria::LintReport first = talaria::LintContent("b.py", python);
  const auto t1 = Clock::now();
  if (first.status != talaria::LintReport::Status::kOk) {
    std::fprintf(stderr, "lint_bench: python input does not lint clean: %s %s\n",
                 first.output.c_str(), first.message.c_str());
    return 1;
  }
  Metric("lint_python_init_ms", std::chrono::duration<double, std::milli>(t1 - t0).count(), "ms");

  for (const auto& [path, text] :
       {std::pair{"b.json", &json}, std::pair{"b.yaml", &yaml}, std::pair{"b.toml", &toml}}) {
    if (!talaria::LintContent(path, *text).ok()) {
      std::fprintf(stderr, "lint_bench: %s input does not lint clean\n", path);
      return 1;
    }
  }
  auto lint_us = [&](const char* path, const std::string& text) {
    return MedianBlockUs(n, [&] {
      talaria::LintReport r = talaria::LintContent(path, text);
      DoNotOptimize(r);
    });
  };
  Metric("lint_json_300_us", lint_us("b.json", json), "us");
  Metric("lint_yaml_300_us", lint_us("b.yaml", yaml), "us");
  Metric("lint_toml_300_us", lint_us("b.toml", toml), "us");
  Metric("lint_python_300_us", lint_us("b.py", python), "us");

  // In-process against the reference's shell linter, on the same file.
  const double inprocess = lint_us("b.py", python);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("talaria_lint_bench." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "b.py";
  {
    std::ofstream out(file, std::ios::binary);
    out << python;
  }
  talaria::SpawnOptions opts;
  // Debian's interpreter (the one embedded), not whatever `python3` PATH finds first: a pyenv
  // shim in front of it costs ~1.6 s per start and would flatter the in-process number.
  const std::string interpreter =
      std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  opts.argv = {interpreter, "-m", "py_compile", file.string()};
  opts.timeout = std::chrono::seconds(30);
  bool spawn_failed = false;
  const double subprocess = MedianBlockUs(n_subprocess, [&] {
    auto r = talaria::RunProcess(opts);
    if (!r || r->exit_code != 0) spawn_failed = true;
  });
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (spawn_failed) {
    std::fprintf(stderr, "lint_bench: python3 -m py_compile failed\n");
    return 1;
  }
  Metric("lint_python_inprocess_us", inprocess, "us");
  Metric("lint_python_subprocess_us", subprocess, "us");
  Metric("lint_python_speedup_x", subprocess / inprocess, "x");
  return 0;
}
