// talaria_planner_bench: the batch planner's cost for a 100-call batch with path scopes (issue 5).
//
// The batch mixes read_file, search_files, write_file and patch (V4A, with moves) stand-ins
// registered in a local registry, over real files in a temp dir (one directory reached through a
// symlink), so every planning pass canonicalises paths on disk like a real turn does. Each sample
// is one PlanBatch of the whole batch (with a fresh canonicalisation cache each time).
//
//   talaria_planner_bench [--quick]
//   METRIC planner_100_calls_us <median> us
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "talaria/core/batch_planner.h"
#include "talaria/core/registry.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using talaria::Json;
using talaria::ParallelClass;
using talaria::PathAccess;

bool Register(talaria::Registry& registry, const std::string& name, ParallelClass cls,
              PathAccess access, const std::string& params) {
  const std::string schema =
      R"({"name":")" + name + R"(","description":"bench tool","parameters":)" + params + "}";
  talaria::ToolSpec spec;
  spec.name = name;
  spec.toolset = "bench";
  spec.schema = std::string_view(schema);
  spec.handler = [](const Json&, talaria::ToolContext&) { return talaria::ToolResult::Text("ok"); };
  spec.parallel = cls;
  spec.path_args = {"path"};
  spec.path_access = access;
  const talaria::Status s = registry.Register(std::move(spec));
  if (!s.ok()) std::fprintf(stderr, "register %s: %s\n", name.c_str(), s.ToString().c_str());
  return s.ok();
}

// 100 calls: 40 reads (relative, absolute, through the symlink, with `..`), 20 searches (one in
// five without a path: the schema default "."), 25 writes of new files, 15 V4A patches (an update
// and a move each).
void BuildBatch(const std::string& root, std::vector<std::string>& names,
                std::vector<std::string>& args) {
  for (int i = 0; i < 100; ++i) {
    const std::string d = std::to_string(i % 5);
    const std::string f = std::to_string((i * 7) % 10);  // f8 and f9 do not exist
    const std::string rel = "pkg" + d + "/src/f" + f + ".cc";
    const int kind = i % 20;
    if (kind < 8) {
      names.push_back("read_file");
      const std::string p = kind % 4 == 0   ? root + "/" + rel
                            : kind % 4 == 1 ? "linked/src/f" + f + ".cc"
                            : kind % 4 == 2 ? "pkg" + d + "/src/../src/f1.cc"
                                            : rel;
      args.push_back(Json{{"path", p}}.dump());
    } else if (kind < 12) {
      names.push_back("search_files");
      args.push_back(kind == 8 ? Json{{"pattern", "x"}}.dump()
                               : Json{{"pattern", "x"}, {"path", "pkg" + d}}.dump());
    } else if (kind < 17) {
      names.push_back("write_file");
      const std::string out = "out/" + std::to_string(i) + "/" + rel;
      args.push_back(Json{{"path", out}, {"content", "y"}}.dump());
    } else {
      names.push_back("patch");
      const std::string n = std::to_string(i);
      const std::string v4a = "*** Begin Patch\n*** Update File: " + rel +
                              "\n@@ ctx @@\n-x\n+y\n*** Move File: gen/a" + n + ".cc -> gen/b" + n +
                              ".cc\n*** End Patch\n";
      args.push_back(Json{{"mode", "patch"}, {"patch", v4a}}.dump());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int samples = quick ? 50 : 500;

  std::string tmpl = (fs::temp_directory_path() / "talaria-planner-bench-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    return 2;
  }
  const std::string root = fs::canonical(tmpl).string();
  for (int d = 0; d < 5; ++d) {
    const std::string dir = root + "/pkg" + std::to_string(d) + "/src";
    fs::create_directories(dir);
    for (int f = 0; f < 8; ++f) std::ofstream(dir + "/f" + std::to_string(f) + ".cc") << "x\n";
  }
  fs::create_directory_symlink(root + "/pkg0", root + "/linked");

  talaria::Registry registry;
  const std::string path_params = R"({"type":"object","properties":{"path":{"type":"string"}}})";
  const bool ok =
      Register(registry, "read_file", ParallelClass::kPathScoped, PathAccess::kRead, path_params) &&
      Register(registry, "search_files", ParallelClass::kPathScoped, PathAccess::kRead,
               R"({"type":"object","properties":{"pattern":{"type":"string"},)"
               R"("path":{"type":"string","default":"."}}})") &&
      Register(registry, "write_file", ParallelClass::kPathScoped, PathAccess::kWrite,
               path_params) &&
      Register(registry, "patch", ParallelClass::kPathScoped, PathAccess::kWrite,
               R"({"type":"object","properties":{"mode":{"type":"string"},)"
               R"("path":{"type":"string"},"patch":{"type":"string"}}})");
  if (!ok) return 2;

  std::vector<std::string> names;
  std::vector<std::string> args;
  BuildBatch(root, names, args);
  std::vector<talaria::PlannedCall> calls;
  for (size_t i = 0; i < names.size(); ++i) calls.push_back({names[i], args[i], root});

  size_t segments = 0;
  std::vector<double> us;
  for (int i = -samples / 10; i < samples; ++i) {
    const auto start = Clock::now();
    const std::vector<talaria::PlannedSegment> plan = talaria::PlanBatch(calls, registry);
    const auto end = Clock::now();
    segments = plan.size();
    if (i >= 0) us.push_back(std::chrono::duration<double, std::micro>(end - start).count());
  }
  std::fprintf(stderr, "planner: %zu calls -> %zu segments\n", calls.size(), segments);
  talaria_bench::PrintMetric("planner_100_calls_us", talaria_bench::Median(us), "us");

  std::error_code ec;
  fs::remove_all(root, ec);
  return 0;
}
