// Project-local config trust with real files: trusting records the exact content, an edit
// revokes it, other sections are ignored, broken files are reported.
#include "talaria/core/project_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/temp_dir.h"

namespace talaria {
namespace {

using test_support::TempDir;

void Write(const std::string& path, std::string_view text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// g++ 12 reports false -Warray-bounds for `std::string(...) + "..."`; build with +=.
std::string With(std::string_view a, std::string_view b) {
  std::string out(a);
  out += b;
  return out;
}

constexpr std::string_view kServers =
    "toolsets:\n  mine: {tools: [read_file]}\n"
    "mcp_servers:\n  fs: {command: npx, args: [server]}\n  web: {url: 'http://127.0.0.1:1/mcp'}\n";

TEST(ProjectConfig, MissingFileIsNone) {
  TempDir dir;
  auto loaded = LoadProjectConfig(ProjectConfigPath(dir.path()), dir / "trusted.json");
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  EXPECT_FALSE(loaded->has_value());
  EXPECT_EQ(ProjectConfigPath("/w"), "/w/.talaria/config.yaml");
  EXPECT_EQ(ProjectConfigPath("/w/"), "/w/.talaria/config.yaml");
}

TEST(ProjectConfig, TrustHoldsUntilTheFileChanges) {
  TempDir dir;
  const std::string path = ProjectConfigPath(dir.path());
  const std::string store = dir / "home/trusted.json";
  Write(path, kServers);
  auto first = LoadProjectConfig(path, store);
  ASSERT_TRUE(first && first->has_value());
  const ProjectConfig& config = **first;
  EXPECT_EQ(config.path, path);
  EXPECT_FALSE(config.trusted);
  EXPECT_TRUE(config.RunsCode());
  EXPECT_EQ(config.DescribeCode(), "mcp_servers (fs, web)");
  EXPECT_EQ(config.ignored, std::vector<std::string>{"toolsets"});
  ASSERT_TRUE(TrustProjectConfig(config, store).ok());
  EXPECT_EQ(std::filesystem::status(store).permissions() & std::filesystem::perms::others_read,
            std::filesystem::perms::none);
  EXPECT_TRUE((*LoadProjectConfig(path, store))->trusted);

  // One byte more: a different file as far as trust goes.
  Write(path, With(kServers, "  evil: {command: sh}\n"));
  auto edited = LoadProjectConfig(path, store);
  ASSERT_TRUE(edited && edited->has_value());
  EXPECT_FALSE((*edited)->trusted);
  EXPECT_EQ((*edited)->DescribeCode(), "mcp_servers (fs, web, evil)");
  // Putting the trusted bytes back restores it; trusting again replaces the old hash.
  Write(path, kServers);
  EXPECT_TRUE((*LoadProjectConfig(path, store))->trusted);
  Write(path, With(kServers, "hooks:\n  PreToolUse: []\n"));
  auto with_hooks = *LoadProjectConfig(path, store);
  ASSERT_TRUE(TrustProjectConfig(*with_hooks, store).ok());
  EXPECT_TRUE((*LoadProjectConfig(path, store))->trusted);
  Write(path, kServers);
  EXPECT_FALSE((*LoadProjectConfig(path, store))->trusted);
  const auto doc = nlohmann::json::parse(std::ifstream(store));
  EXPECT_EQ(doc["files"].size(), 1u);

  EXPECT_TRUE(RevokeProjectConfig(path, store).ok());
  EXPECT_EQ(RevokeProjectConfig(path, store).code(), StatusCode::kNotFound);
}

TEST(ProjectConfig, TrustFollowsTheRealPath) {
  TempDir dir;
  Write(ProjectConfigPath(dir / "real"), kServers);
  std::filesystem::create_directory_symlink(dir / "real", dir / "link");
  const std::string store = dir / "trusted.json";
  auto via_link = *LoadProjectConfig(ProjectConfigPath(dir / "link"), store);
  EXPECT_EQ(via_link->path, ProjectConfigPath(dir / "real"));
  ASSERT_TRUE(TrustProjectConfig(*via_link, store).ok());
  EXPECT_TRUE((*LoadProjectConfig(ProjectConfigPath(dir / "real"), store))->trusted);
}

TEST(ProjectConfig, NothingToTrustAndBrokenFiles) {
  TempDir dir;
  const std::string path = ProjectConfigPath(dir.path());
  const std::string store = dir / "trusted.json";
  Write(path, "toolsets: {}\n");
  EXPECT_FALSE((*LoadProjectConfig(path, store))->RunsCode());
  Write(path, "mcp_servers: [a, b]\n");
  EXPECT_EQ(LoadProjectConfig(path, store).error().code(), StatusCode::kInvalidArgument);
  Write(path, "mcp_servers: {a: [\n");
  EXPECT_EQ(LoadProjectConfig(path, store).error().code(), StatusCode::kInvalidArgument);
  Write(path, "- a\n");
  EXPECT_EQ(LoadProjectConfig(path, store).error().code(), StatusCode::kInvalidArgument);
  Write(path, kServers);
  Write(store, "not json");
  EXPECT_EQ(LoadProjectConfig(path, store).error().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace talaria
