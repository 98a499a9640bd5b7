#include "talaria/plugins/plugin_loader.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "plugins/plugin_test_util.h"
#include "talaria/core/dispatcher.h"
#include "talaria/core/tool_context.h"

namespace talaria::plugins {
namespace {

namespace fs = std::filesystem;
using testing::CopyPlugin;
using testing::ReadBytes;
using testing::TempDir;
using testing::TestPlugin;
using testing::WriteBytes;
using testing::WriteText;

const CandidateReport* Find(const DiscoveryReport& report, std::string_view name) {
  for (const auto& c : report.candidates) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

ToolResult Call(Registry& registry, std::string_view tool, std::string_view args) {
  auto entry = registry.GetEntry(tool);
  if (!entry) return ToolResult::Error("no such tool");
  auto parsed = ParseJson(args);
  ToolContext ctx;
  return entry->handler()(*parsed, ctx);
}

class PluginLoaderTest : public ::testing::Test {
 protected:
  DiscoveryReport Discover(DiscoveryOptions options = {}) {
    if (options.dirs.empty()) options.dirs = {dir_.path()};
    return loader_.Discover(options);
  }

  TempDir dir_;
  Registry registry_;
  PluginLoader loader_{registry_};
};

TEST_F(PluginLoaderTest, LoadsValidPluginsAndRunsTheirTools) {
  CopyPlugin("example_plugin", dir_ / "example_plugin.so");
  CopyPlugin("bench_mod_plugin", dir_ / "bench_mod_0001.so");
  CopyPlugin("bench_mod_plugin", dir_ / "bench_mod_0002.so");
  const DiscoveryReport report = Discover();
  ASSERT_EQ(report.candidates.size(), 3u);
  EXPECT_EQ(report.Count(Verdict::kLoaded), 3u);
  const CandidateReport* example = Find(report, "example_plugin");
  ASSERT_NE(example, nullptr);
  EXPECT_EQ(example->verdict, Verdict::kLoaded) << example->reason;
  EXPECT_EQ(example->tools, (std::vector<std::string>{"example_echo", "example_add"}));
  EXPECT_EQ(Find(report, "bench_mod_0002")->tools, std::vector<std::string>{"disc_0002"});

  ASSERT_EQ(registry_.ToolsetOf("example_add"), "example");
  EXPECT_EQ(registry_.GetEntry("example_echo")->parallel(), ParallelClass::kSafe);
  EXPECT_EQ(Call(registry_, "example_add", R"({"a":2,"b":40})").text, R"({"sum": 42})");
  EXPECT_EQ(Call(registry_, "example_echo", R"({"text":"hi"})").text, R"({"text":"hi"})");
  // Each copy is its own image with its own data: the handlers answer with their own names.
  EXPECT_EQ(Call(registry_, "disc_0001", "{}").text, R"({"ok": true, "tool": "disc_0001"})");
  EXPECT_EQ(Call(registry_, "disc_0002", "{}").text, R"({"ok": true, "tool": "disc_0002"})");
}

TEST_F(PluginLoaderTest, PluginToolsGoThroughTheWholePipeline) {
  CopyPlugin("example_plugin", dir_ / "example_plugin.so");
  ASSERT_EQ(Discover().Count(Verdict::kLoaded), 1u);
  Dispatcher dispatcher(registry_);
  ToolContext ctx;
  // Stringly-typed arguments are coerced by the schema the plugin declared, then validated.
  const ToolResult ok = dispatcher.Dispatch("example_add", R"({"a": "20", "b": "22"})", ctx);
  EXPECT_EQ(ok.status, CallStatus::kOk);
  EXPECT_EQ(ok.text, R"({"sum": 42})");
  const ToolResult invalid = dispatcher.Dispatch("example_add", R"({"a": 1})", ctx);
  EXPECT_EQ(invalid.status, CallStatus::kError);
}

TEST_F(PluginLoaderTest, GivesEveryCandidateAVerdictInSortedOrder) {
  CopyPlugin("example_plugin", dir_ / "m_example.so");
  CopyPlugin("wrong_version_plugin", dir_ / "b_wrong_version.so");
  CopyPlugin("no_version_plugin", dir_ / "c_no_version.so");
  CopyPlugin("not_a_plugin", dir_ / "d_library.so");
  CopyPlugin("throws_plugin", dir_ / "e_throws.so");
  CopyPlugin("returns_error_plugin", dir_ / "f_error.so");
  WriteText(dir_ / "g_text.so", "#!/bin/sh\necho not a library\n");
  auto truncated = ReadBytes(TestPlugin("example_plugin"));
  truncated.resize(truncated.size() / 3);
  WriteBytes(dir_ / "h_truncated.so", truncated);
  WriteBytes(dir_ / "i_elf32.so", testing::Elf32Header());
  auto foreign = ReadBytes(TestPlugin("example_plugin"));
  testing::Poke<uint16_t>(foreign, 18, 0x0f3 /* RISC-V */);
  WriteBytes(dir_ / "j_riscv.so", foreign);
  fs::create_directory(dir_ / "k_directory.so");
  WriteText(dir_ / "a_readme.txt", "not a candidate");
  CopyPlugin("bench_mod_plugin", dir_ / "z_bench_0007.so");

  const DiscoveryReport report = Discover();
  std::vector<std::string> names;
  for (const auto& c : report.candidates) names.push_back(c.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"b_wrong_version", "c_no_version", "d_library", "e_throws",
                                      "f_error", "g_text", "h_truncated", "i_elf32", "j_riscv",
                                      "k_directory", "m_example", "z_bench_0007"}));
  struct Expect {
    const char* name;
    Verdict verdict;
    ScanOutcome scan;
    const char* reason_has;
  };
  const Expect expected[] = {
      {"b_wrong_version", Verdict::kSkipped, ScanOutcome::kIncompatibleVersion,
       "interface version 999"},
      {"c_no_version", Verdict::kSkipped, ScanOutcome::kNoVersion,
       "talaria_plugin_interface_version"},
      {"d_library", Verdict::kSkipped, ScanOutcome::kNoEntryPoint, "talaria_register_tools"},
      {"e_throws", Verdict::kFailed, ScanOutcome::kAccepted, "plugin setup exploded"},
      {"f_error", Verdict::kFailed, ScanOutcome::kAccepted, "missing configuration file"},
      {"g_text", Verdict::kSkipped, ScanOutcome::kNotElf, "not an ELF file"},
      {"h_truncated", Verdict::kSkipped, ScanOutcome::kMalformed, "outside the file"},
      {"i_elf32", Verdict::kSkipped, ScanOutcome::kWrongClass, "ELF32"},
      {"j_riscv", Verdict::kSkipped, ScanOutcome::kWrongMachine, "RISC-V"},
      {"k_directory", Verdict::kSkipped, ScanOutcome::kIoError, "not a regular file"},
      {"m_example", Verdict::kLoaded, ScanOutcome::kAccepted, ""},
      {"z_bench_0007", Verdict::kLoaded, ScanOutcome::kAccepted, ""},
  };
  for (const Expect& e : expected) {
    const CandidateReport* c = Find(report, e.name);
    ASSERT_NE(c, nullptr) << e.name;
    EXPECT_EQ(c->verdict, e.verdict) << e.name << ": " << c->reason;
    EXPECT_EQ(c->scan, e.scan) << e.name << ": " << c->reason;
    EXPECT_NE(c->reason.find(e.reason_has), std::string::npos) << e.name << ": " << c->reason;
    EXPECT_EQ(c->verdict == Verdict::kLoaded, c->reason.empty()) << e.name;
  }
  EXPECT_TRUE(registry_.GetEntry("example_add"));
  EXPECT_TRUE(registry_.GetEntry("disc_0007"));
  EXPECT_FALSE(registry_.GetEntry("wrong_version_tool"));
  EXPECT_FALSE(registry_.GetEntry("no_version_tool"));

  // The report as `talaria plugins --json` prints it.
  const Json j = report.ToJson();
  ASSERT_EQ(j["candidates"].size(), 12u);
  EXPECT_EQ(j["candidates"][0]["verdict"], "skipped");
  EXPECT_EQ(j["candidates"][0]["scan"], "incompatible_version");
  EXPECT_EQ(j["candidates"][10]["tools"], Json::parse(R"(["example_echo","example_add"])"));
}

TEST_F(PluginLoaderTest, RegistrationThatThrowsIsRolledBack) {
  CopyPlugin("throws_plugin", dir_ / "throws.so");
  const uint64_t generation = registry_.generation();
  const DiscoveryReport report = Discover();
  ASSERT_EQ(report.candidates.size(), 1u);
  EXPECT_EQ(report.candidates[0].verdict, Verdict::kFailed);
  EXPECT_EQ(report.candidates[0].reason, "registration threw: plugin setup exploded");
  EXPECT_FALSE(registry_.GetEntry("throws_tool"));  // staged, never published
  EXPECT_EQ(registry_.generation(), generation);
}

TEST_F(PluginLoaderTest, RegistrationErrorIsRolledBack) {
  CopyPlugin("returns_error_plugin", dir_ / "returns_error.so");
  CopyPlugin("example_plugin", dir_ / "zz_example.so");
  const DiscoveryReport report = Discover();
  ASSERT_EQ(report.candidates.size(), 2u);
  EXPECT_EQ(report.candidates[0].verdict, Verdict::kFailed);
  EXPECT_EQ(report.candidates[0].reason, "registration returned 1: missing configuration file");
  EXPECT_FALSE(registry_.GetEntry("returns_error_tool"));
  EXPECT_EQ(report.candidates[1].verdict, Verdict::kLoaded);  // the others still load
}

ToolSpec BuiltinReadFile() {
  ToolSpec spec;
  spec.name = "read_file";
  spec.toolset = "file";
  spec.schema = R"({"name":"read_file","description":"built-in",)"
                R"("parameters":{"type":"object","properties":{}}})";
  spec.handler = [](const Json&, ToolContext&) { return ToolResult::Text("built-in"); };
  return spec;
}

TEST_F(PluginLoaderTest, PluginCannotShadowABuiltIn) {
  ASSERT_TRUE(registry_.Register(BuiltinReadFile()).ok());
  CopyPlugin("shadow_plugin", dir_ / "shadow.so");
  const DiscoveryReport report = Discover();
  ASSERT_EQ(report.candidates.size(), 1u);
  const CandidateReport& c = report.candidates[0];
  EXPECT_EQ(c.verdict, Verdict::kLoaded) << c.reason;  // it ignored the refusal
  EXPECT_EQ(c.tools, std::vector<std::string>{"shadow_extra"});
  ASSERT_EQ(c.refused.size(), 1u);
  EXPECT_NE(c.refused[0].find("read_file: would replace the existing tool"), std::string::npos)
      << c.refused[0];
  EXPECT_EQ(Call(registry_, "read_file", "{}").text, "built-in");
}

TEST_F(PluginLoaderTest, AllowShadowingLetsTheListedPluginReplaceABuiltIn) {
  ASSERT_TRUE(registry_.Register(BuiltinReadFile()).ok());
  CopyPlugin("shadow_plugin", dir_ / "shadow.so");
  DiscoveryOptions options;
  options.allow_shadowing = {"shadow.so"};
  const DiscoveryReport report = Discover(options);
  ASSERT_EQ(report.candidates.size(), 1u);
  EXPECT_EQ(report.candidates[0].verdict, Verdict::kLoaded);
  EXPECT_TRUE(report.candidates[0].refused.empty());
  EXPECT_EQ(Call(registry_, "read_file", "{}").text, R"({"from": "plugin"})");
}

TEST_F(PluginLoaderTest, TwoPluginsCannotClaimTheSameTool) {
  CopyPlugin("example_plugin", dir_ / "a_example.so");
  CopyPlugin("example_plugin", dir_ / "b_example.so");
  const DiscoveryReport report = Discover();
  ASSERT_EQ(report.candidates.size(), 2u);
  EXPECT_EQ(report.candidates[0].verdict, Verdict::kLoaded);
  // The second copy's first register_tool fails and it gives up: nothing of it is published.
  EXPECT_EQ(report.candidates[1].verdict, Verdict::kFailed);
  EXPECT_NE(report.candidates[1].reason.find("registration returned 3"), std::string::npos)
      << report.candidates[1].reason;
}

TEST_F(PluginLoaderTest, DisabledAndDuplicateNamesAreSkipped) {
  TempDir second;
  CopyPlugin("example_plugin", dir_ / "example.so");
  CopyPlugin("bench_mod_plugin", dir_ / "bench_mod_0003.so");
  CopyPlugin("bench_mod_plugin", second / "bench_mod_0003.so");
  DiscoveryOptions options;
  options.dirs = {dir_.path(), second.path()};
  options.disabled = {"example"};
  const DiscoveryReport report = Discover(options);
  ASSERT_EQ(report.candidates.size(), 3u);
  EXPECT_EQ(report.candidates[1].reason, "disabled in config (plugins.disabled)");
  EXPECT_EQ(report.candidates[0].verdict, Verdict::kLoaded);
  EXPECT_EQ(report.candidates[2].verdict, Verdict::kSkipped);
  EXPECT_NE(report.candidates[2].reason.find("same name comes first"), std::string::npos);
  // The name decided, not the scan: the shadowed candidate reports none.
  EXPECT_EQ(report.candidates[2].scan, ScanOutcome::kIoError);
  EXPECT_EQ(report.candidates[2].interface_version, 0u);
}

// Enough candidates for the pre-scan to run on several threads.
void FillForThreadedScan(const fs::path& dir) {
  for (int i = 0; i < 160; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "bench_mod_%04d.so", i);
    if (i % 2 == 0)
      CopyPlugin("bench_mod_plugin", (dir / name).string());
    else
      WriteText((dir / name).string(), "plain text, not a library\n");
  }
}

bool ScanVerdictsAreRight(const DiscoveryReport& report) {
  if (report.candidates.size() != 160) return false;
  for (size_t i = 0; i < report.candidates.size(); ++i) {
    const CandidateReport& c = report.candidates[i];
    const bool plugin = i % 2 == 0;
    if (c.scan != (plugin ? ScanOutcome::kAccepted : ScanOutcome::kNotElf)) return false;
    if (c.reason !=
        (plugin ? "not loaded (scan only)" : "pre-scan: not an ELF file (no ELF magic)"))
      return false;
  }
  return true;
}

TEST_F(PluginLoaderTest, PreScanDoesNotUpdateAccessTimes) {
  FillForThreadedScan(dir_.path());
  // An access time older than the modification: a relatime mount would update it on a read.
  const struct timespec times[2] = {{1'000'000, 0}, {0, UTIME_OMIT}};
  for (const auto& entry : fs::directory_iterator(dir_.path()))
    ASSERT_EQ(::utimensat(AT_FDCWD, entry.path().c_str(), times, 0), 0);
  DiscoveryOptions options;
  options.mode = LoadMode::kScanOnly;
  ASSERT_TRUE(ScanVerdictsAreRight(Discover(options)));
  for (const auto& entry : fs::directory_iterator(dir_.path())) {
    struct stat st {};
    ASSERT_EQ(::stat(entry.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_atim.tv_sec, 1'000'000) << entry.path();
  }
}

// O_NOATIME is refused (EPERM) on files somebody else owns; the scan then opens them plainly.
TEST_F(PluginLoaderTest, PreScanReadsFilesOwnedBySomebodyElse) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create files another user can read";
  FillForThreadedScan(dir_.path());
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    Registry registry;
    PluginLoader loader(registry);
    DiscoveryOptions options;
    options.dirs = {dir_.path()};
    options.mode = LoadMode::kScanOnly;
    ::_exit(ScanVerdictsAreRight(loader.Discover(options)) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(PluginLoaderTest, RescanDoesNotRunLoadedPluginsAgain) {
  CopyPlugin("example_plugin", dir_ / "example.so");
  ASSERT_EQ(Discover().Count(Verdict::kLoaded), 1u);
  const uint64_t generation = registry_.generation();
  const DiscoveryReport again = Discover();
  ASSERT_EQ(again.candidates.size(), 1u);
  EXPECT_EQ(again.candidates[0].verdict, Verdict::kLoaded);
  EXPECT_EQ(again.candidates[0].tools.size(), 2u);
  EXPECT_EQ(registry_.generation(), generation);
}

TEST_F(PluginLoaderTest, VerdictCacheSkipsUnchangedFilesAndNoticesChanges) {
  TempDir state;
  CopyPlugin("example_plugin", dir_ / "example.so");
  CopyPlugin("wrong_version_plugin", dir_ / "old.so");
  WriteText(dir_ / "junk.so", "junk");
  DiscoveryOptions options;
  options.cache_path = state / "sub/scan-cache.json";
  options.mode = LoadMode::kScanOnly;

  const DiscoveryReport cold = Discover(options);
  ASSERT_EQ(cold.candidates.size(), 3u);
  for (const auto& c : cold.candidates) EXPECT_FALSE(c.scan_cached) << c.name;
  ASSERT_TRUE(fs::exists(options.cache_path));
  const auto cache_bytes = ReadBytes(options.cache_path);
  auto cache = ParseJson(std::string(cache_bytes.begin(), cache_bytes.end()));
  ASSERT_TRUE(cache.has_value());
  ASSERT_EQ((*cache)["entries"].size(), 3u);
  const Json& row = (*cache)["entries"][1];  // rows sorted by path: example, junk, old
  EXPECT_EQ(row[0], dir_ / "junk.so");
  EXPECT_EQ(row[4], "not_elf");
  EXPECT_EQ((*cache)["entries"][2][4], "incompatible_version");
  EXPECT_EQ((*cache)["entries"][2][5], 999);
  // Written atomically: no temp file is left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(state / "sub"), fs::directory_iterator()), 1);

  const DiscoveryReport warm = Discover(options);
  for (size_t i = 0; i < warm.candidates.size(); ++i) {
    EXPECT_TRUE(warm.candidates[i].scan_cached) << warm.candidates[i].name;
    EXPECT_EQ(warm.candidates[i].scan, cold.candidates[i].scan);
    EXPECT_EQ(warm.candidates[i].reason, cold.candidates[i].reason);
  }

  // A changed file (size) and a replaced one (inode) are scanned again; a deleted one is dropped.
  WriteText(dir_ / "junk.so", "junk, longer now");
  fs::remove(dir_ / "old.so");
  CopyPlugin("example_plugin", dir_ / "old.so");
  options.mode = LoadMode::kLoad;
  const DiscoveryReport after = Discover(options);
  EXPECT_TRUE(Find(after, "example")->scan_cached);
  EXPECT_FALSE(Find(after, "junk")->scan_cached);
  EXPECT_FALSE(Find(after, "old")->scan_cached);
  EXPECT_EQ(Find(after, "old")->scan, ScanOutcome::kAccepted);

  // A cache with a removed file no longer lists it.
  fs::remove(dir_ / "junk.so");
  (void)Discover(options);
  auto bytes = ReadBytes(options.cache_path);
  auto pruned = ParseJson(std::string(bytes.begin(), bytes.end()));
  ASSERT_TRUE(pruned.has_value());
  ASSERT_EQ((*pruned)["entries"].size(), 2u);
  for (const Json& r : (*pruned)["entries"]) EXPECT_NE(r[0], dir_ / "junk.so");
}

TEST_F(PluginLoaderTest, VerdictCacheKeepsFileNamesThatNeedEscaping) {
  TempDir state;
  const std::string odd = "quote\"back\\slash\ttab\nline";
  WriteText(dir_ / (odd + ".so"), "junk");
  DiscoveryOptions options;
  options.cache_path = state / "cache.json";
  options.mode = LoadMode::kScanOnly;
  const DiscoveryReport cold = Discover(options);
  ASSERT_EQ(cold.candidates.size(), 1u);
  EXPECT_FALSE(cold.candidates[0].scan_cached);
  const DiscoveryReport warm = Discover(options);
  ASSERT_EQ(warm.candidates.size(), 1u);
  EXPECT_TRUE(warm.candidates[0].scan_cached);
  EXPECT_EQ(warm.candidates[0].name, odd);
  EXPECT_EQ(warm.candidates[0].reason, cold.candidates[0].reason);
}

TEST_F(PluginLoaderTest, CorruptCacheIsIgnoredAndRewritten) {
  TempDir state;
  CopyPlugin("example_plugin", dir_ / "example.so");
  DiscoveryOptions options;
  options.cache_path = state / "cache.json";
  options.mode = LoadMode::kScanOnly;
  WriteText(options.cache_path, "{\"format\": 1, \"entries\": {tru");
  const DiscoveryReport report = Discover(options);
  ASSERT_EQ(report.candidates.size(), 1u);
  EXPECT_FALSE(report.candidates[0].scan_cached);
  EXPECT_TRUE(report.warnings.empty());
  auto bytes = ReadBytes(options.cache_path);
  EXPECT_TRUE(ParseJson(std::string(bytes.begin(), bytes.end())).has_value());
  EXPECT_TRUE(Discover(options).candidates[0].scan_cached);
}

TEST_F(PluginLoaderTest, MissingDirectoryIsNotAnError) {
  DiscoveryOptions options;
  options.dirs = {dir_ / "nope"};
  const DiscoveryReport report = Discover(options);
  EXPECT_TRUE(report.candidates.empty());
  EXPECT_TRUE(report.warnings.empty());
}

TEST(PluginConfig, ReadsThePluginsSection) {
  auto config = ParseConfig(
      "plugins:\n  dirs: [/opt/p]\n  allow_shadowing: [mine]\n  disabled: [bad]\n  cache: false\n"
      "  trial: false\n  trial_timeout_s: 2.5\n");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  auto pc = ReadPluginConfig(*config);
  ASSERT_TRUE(pc.has_value()) << pc.error().message();
  EXPECT_EQ(pc->dirs, std::vector<std::string>{"/opt/p"});
  EXPECT_EQ(pc->allow_shadowing, std::vector<std::string>{"mine"});
  EXPECT_EQ(pc->disabled, std::vector<std::string>{"bad"});
  EXPECT_FALSE(pc->cache);
  EXPECT_FALSE(pc->trial);
  EXPECT_EQ(pc->trial_timeout, std::chrono::milliseconds(2500));
  const DiscoveryOptions options = OptionsFromConfig(*pc, {"/extra"});
  EXPECT_FALSE(options.trial);
  EXPECT_EQ(options.trial_timeout, std::chrono::milliseconds(2500));
  EXPECT_EQ(options.dirs, (std::vector<std::string>{DefaultPluginDir(), "/opt/p", "/extra"}));
  EXPECT_TRUE(options.cache_path.empty());

  auto empty = ParseConfig("");
  ASSERT_TRUE(empty.has_value());
  auto defaults = ReadPluginConfig(*empty);
  ASSERT_TRUE(defaults.has_value());
  EXPECT_TRUE(defaults->cache);

  auto bad = ParseConfig("plugins:\n  allow_shadowing: yes-please\n");
  ASSERT_TRUE(bad.has_value());
  auto error = ReadPluginConfig(*bad);
  ASSERT_FALSE(error.has_value());
  EXPECT_NE(error.error().message().find("plugins.allow_shadowing"), std::string::npos);
  auto bad_timeout = ParseConfig("plugins:\n  trial_timeout_s: -1\n");
  ASSERT_TRUE(bad_timeout.has_value());
  auto timeout_error = ReadPluginConfig(*bad_timeout);
  ASSERT_FALSE(timeout_error.has_value());
  EXPECT_NE(timeout_error.error().message().find("plugins.trial_timeout_s"), std::string::npos);
}

bool Contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// Crashes, exits and hangs while loading or registering happen in the trial process: talaria
// (this test process) lives on, reports each culprit with how it died, and loads the plugins
// around them.
TEST_F(PluginLoaderTest, TrialContainsCrashesExitsAndHangs) {
  CopyPlugin("bench_mod_plugin", dir_ / "a_0001.so");
  CopyPlugin("crash_plugin", dir_ / "b_abort.so");
  CopyPlugin("segv_plugin", dir_ / "c_segv.so");
  CopyPlugin("bench_mod_plugin", dir_ / "d_0002.so");
  CopyPlugin("exits_plugin", dir_ / "e_exits.so");
  CopyPlugin("hangs_plugin", dir_ / "f_hangs.so");
  CopyPlugin("returns_error_plugin", dir_ / "g_error.so");
  CopyPlugin("bench_mod_plugin", dir_ / "h_0003.so");
  DiscoveryOptions options;
  options.trial_timeout = std::chrono::milliseconds(500);
  const DiscoveryReport report = Discover(options);
  ASSERT_EQ(report.candidates.size(), 8u);
  EXPECT_TRUE(report.warnings.empty()) << report.warnings[0];

  for (const char* name : {"a_0001", "d_0002", "h_0003"}) {
    const CandidateReport* c = Find(report, name);
    EXPECT_EQ(c->verdict, Verdict::kLoaded) << name << ": " << c->reason;
    EXPECT_EQ(c->trial, "passed") << name;
  }
  EXPECT_EQ(registry_.ToolsOfToolset("discovery").size(), 3u);
  EXPECT_EQ(Call(registry_, "disc_0003", "{}").text, R"({"ok": true, "tool": "disc_0003"})");

  const CandidateReport* aborts = Find(report, "b_abort");
  EXPECT_EQ(aborts->verdict, Verdict::kFailed);
  EXPECT_EQ(aborts->trial, "failed");
  EXPECT_TRUE(
      Contains(aborts->reason, "trial load: the trial process was killed by signal 6 (SIGABRT)"))
      << aborts->reason;
  const CandidateReport* segv = Find(report, "c_segv");
  EXPECT_EQ(segv->trial, "failed");
  // Under AddressSanitizer the trial program reports the fault itself and exits with status 1.
  EXPECT_TRUE(Contains(segv->reason, "SIGSEGV") || Contains(segv->reason, "exited with status 1"))
      << segv->reason;
  const CandidateReport* exits = Find(report, "e_exits");
  EXPECT_EQ(exits->trial, "failed");
  EXPECT_TRUE(Contains(exits->reason, "exited with status 3")) << exits->reason;
  const CandidateReport* hangs = Find(report, "f_hangs");
  EXPECT_EQ(hangs->trial, "failed");
  EXPECT_TRUE(Contains(hangs->reason, "did not finish loading and registering within 0.5 s"))
      << hangs->reason;
  // Failing on its own terms is not the trial's business: the real load reports it.
  const CandidateReport* error = Find(report, "g_error");
  EXPECT_EQ(error->trial, "passed");
  EXPECT_EQ(error->verdict, Verdict::kFailed);
  EXPECT_TRUE(Contains(error->reason, "registration returned")) << error->reason;
}

// The process id of a child of `parent` running the trial program; -1 when there is none yet.
pid_t TrialChildOf(pid_t parent) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream status(entry.path() / "status");
    std::string line;
    bool trial = false;
    pid_t ppid = -1;
    while (std::getline(status, line)) {
      if (line.starts_with("Name:")) trial = line.find("talaria-plugin") != std::string::npos;
      if (line.starts_with("PPid:")) ppid = static_cast<pid_t>(std::stol(line.substr(5)));
    }
    if (trial && ppid == parent) return static_cast<pid_t>(std::stol(name));
  }
  return -1;
}

// talaria killed while a plugin hangs in its trial: the trial process goes too, long before
// its own timeout (it would otherwise hang on as an orphan).
TEST_F(PluginLoaderTest, TrialProcessDiesWithItsHost) {
  CopyPlugin("hangs_plugin", dir_ / "a_hangs.so");
  // Orphans are reparented to this process, so the trial's end can be watched.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  const pid_t host = ::fork();
  ASSERT_GE(host, 0);
  if (host == 0) {
    Registry registry;
    PluginLoader loader(registry);
    DiscoveryOptions options;
    options.dirs = {dir_.path()};
    options.trial_timeout = std::chrono::seconds(60);
    (void)loader.Discover(options);
    ::_exit(0);
  }
  pid_t trial = -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (trial < 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    trial = TrialChildOf(host);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // well into the hanging plugin
  ::kill(host, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(host, &status, 0), host);
  ASSERT_GT(trial, 0) << "the trial process never started";

  bool ended = false;
  const auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!ended && std::chrono::steady_clock::now() < grace) {
    ended = ::waitpid(trial, &status, WNOHANG) == trial;
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!ended) {
    ::kill(trial, SIGKILL);
    ::waitpid(trial, &status, 0);
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  ASSERT_TRUE(ended) << "the trial process outlived its host";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
}

TEST_F(PluginLoaderTest, PluginOutputCannotForgeATrialVerdict) {
  CopyPlugin("forges_plugin", dir_ / "a_forges.so");
  CopyPlugin("crash_plugin", dir_ / "b_abort.so");
  CopyPlugin("bench_mod_plugin", dir_ / "c_0004.so");
  const DiscoveryReport report = Discover();
  ASSERT_EQ(report.candidates.size(), 3u);
  EXPECT_EQ(report.candidates[0].trial, "failed") << report.candidates[0].reason;
  EXPECT_TRUE(Contains(report.candidates[0].reason, "SIGABRT")) << report.candidates[0].reason;
  EXPECT_EQ(report.candidates[1].trial, "failed");
  EXPECT_EQ(report.candidates[2].verdict, Verdict::kLoaded) << report.candidates[2].reason;
}

TEST_F(PluginLoaderTest, PassedTrialsAreRememberedFailedOnesAreNot) {
  TempDir state;
  CopyPlugin("bench_mod_plugin", dir_ / "a_0005.so");
  CopyPlugin("crash_plugin", dir_ / "b_abort.so");
  DiscoveryOptions options;
  options.cache_path = state / "cache.json";
  const DiscoveryReport first = Discover(options);
  EXPECT_EQ(first.candidates[0].trial, "passed");
  EXPECT_EQ(first.candidates[1].trial, "failed");

  Registry fresh;
  PluginLoader restart(fresh);
  options.dirs = {dir_.path()};
  const DiscoveryReport second = restart.Discover(options);
  EXPECT_EQ(second.candidates[0].trial, "cached");
  EXPECT_EQ(second.candidates[0].verdict, Verdict::kLoaded);
  EXPECT_EQ(second.candidates[1].trial, "failed");  // tried again: its cause may be elsewhere

  // A changed file is tried again.
  fs::remove(dir_ / "a_0005.so");
  CopyPlugin("bench_mod_plugin", dir_ / "a_0005.so");
  Registry third_registry;
  PluginLoader third(third_registry);
  EXPECT_EQ(third.Discover(options).candidates[0].trial, "passed");
}

TEST_F(PluginLoaderTest, TrialCanBeTurnedOffAndAMissingProgramIsAWarning) {
  CopyPlugin("bench_mod_plugin", dir_ / "a_0006.so");
  DiscoveryOptions off;
  off.trial = false;
  const DiscoveryReport plain = Discover(off);
  EXPECT_EQ(plain.candidates[0].trial, "off");
  EXPECT_EQ(plain.candidates[0].verdict, Verdict::kLoaded);

  CopyPlugin("bench_mod_plugin", dir_ / "b_0007.so");
  DiscoveryOptions missing;
  missing.trial_executable = dir_ / "no-such-trial-program";
  const DiscoveryReport report = Discover(missing);
  const CandidateReport* c = Find(report, "b_0007");
  EXPECT_EQ(c->trial, "unavailable");
  EXPECT_EQ(c->verdict, Verdict::kLoaded) << c->reason;
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_TRUE(Contains(report.warnings[0], "without crash containment")) << report.warnings[0];
}

}  // namespace
}  // namespace talaria::plugins
