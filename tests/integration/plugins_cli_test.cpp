// Plugins as a user meets them: a real shared object dropped into $TALARIA_HOME/plugins is
// listed by `talaria plugins`, loaded at startup by every command (its tools show in `talaria
// tools` and run through `talaria call`), and a junk .so next to it is skipped with a reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_harness.h"

namespace talaria {
namespace {

using ::testing::HasSubstr;
using testing_cli::CliRun;
using testing_cli::Describe;
using testing_cli::TempHome;

TEST(PluginsCli, APluginInTheHomeDirectoryIsListedLoadedAndCallable) {
  TempHome home;
  const std::string dir = home.talaria_home() + "/plugins";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(TALARIA_TEST_PLUGIN_DIR "/example_plugin.so",
                             dir + "/example_plugin.so");
  std::ofstream(dir + "/junk.so") << "not an ELF file\n";
  const testing_cli::CliInvocation how{.home = home.path(),
                                       .cwd = {},
                                       .stdin_data = {},
                                       .timeout = std::chrono::seconds(30),
                                       .extra_env = {}};

  CliRun listed = testing_cli::RunTalaria(how, {"plugins", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << Describe({"plugins", "--json"}, listed);
  const auto report = nlohmann::json::parse(listed.out);
  ASSERT_EQ(report["candidates"].size(), 2u) << listed.out;
  for (const auto& c : report["candidates"]) {
    if (c["name"] == "example_plugin") {
      EXPECT_EQ(c["verdict"], "loaded") << c.dump();
      EXPECT_EQ(c["trial"], "passed") << c.dump();  // the trial program is found beside libtalaria
      EXPECT_THAT(c["tools"].dump(), HasSubstr("example_add"));
    } else {
      EXPECT_EQ(c["verdict"], "skipped") << c.dump();
      EXPECT_FALSE(c["reason"].get<std::string>().empty());
    }
  }

  CliRun tools = testing_cli::RunTalaria(how, {"tools", "--toolsets", "example"});
  ASSERT_EQ(tools.exit_code, 0) << Describe({"tools"}, tools);
  EXPECT_THAT(tools.out, HasSubstr("example_add"));

  CliRun call = testing_cli::RunTalaria(how, {"call", "example_add", "a=20", "b=22"});
  ASSERT_EQ(call.exit_code, 0) << Describe({"call", "example_add"}, call);
  EXPECT_THAT(call.out, HasSubstr("42"));
}

// A plugin that aborts while registering must not take `talaria` down: the trial process dies
// instead, the plugin is reported failed, and the command still works with the others.
TEST(PluginsCli, APluginThatCrashesAtRegistrationIsReportedNotFatal) {
  TempHome home;
  const std::string dir = home.talaria_home() + "/plugins";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(TALARIA_TEST_PLUGIN_DIR "/crash_plugin.so", dir + "/a_crash.so");
  std::filesystem::copy_file(TALARIA_TEST_PLUGIN_DIR "/example_plugin.so", dir + "/b_example.so");
  const testing_cli::CliInvocation how{.home = home.path(),
                                       .cwd = {},
                                       .stdin_data = {},
                                       .timeout = std::chrono::seconds(30),
                                       .extra_env = {}};

  CliRun listed = testing_cli::RunTalaria(how, {"plugins"});
  EXPECT_EQ(listed.exit_code, 1) << Describe({"plugins"}, listed);  // a failed candidate
  EXPECT_THAT(listed.out, HasSubstr("the trial process was killed by signal 6 (SIGABRT)"));
  EXPECT_THAT(listed.out, HasSubstr("1 loaded, 0 skipped, 1 failed"));

  CliRun call = testing_cli::RunTalaria(how, {"call", "example_add", "a=20", "b=22"});
  ASSERT_EQ(call.exit_code, 0) << Describe({"call", "example_add"}, call);
  EXPECT_THAT(call.out, HasSubstr("42"));
  EXPECT_THAT(call.err,
              HasSubstr("a_crash.so failed: trial load: the trial process was killed by signal 6"));
}

}  // namespace
}  // namespace talaria
