#include "talaria/confinement/path_rules.h"

#include <gtest/gtest.h>

#include <string>

namespace talaria::safety::internal {
namespace {

TEST(PathRules, NormalizesLexically) {
  EXPECT_EQ(NormalizeAbsolute("/"), "/");
  EXPECT_EQ(NormalizeAbsolute("//a///b/./c/"), "/a/b/c");
  EXPECT_EQ(NormalizeAbsolute("/a/b/../c"), "/a/c");
  EXPECT_EQ(NormalizeAbsolute("/../../etc/passwd"), "/etc/passwd");
  EXPECT_EQ(NormalizeAbsolute("/a/b/../../../.."), "/");
  EXPECT_EQ(NormalizeAbsolute("/a/..b/c"), "/a/..b/c");
}

TEST(PathRules, ContainmentIsComponentWise) {
  const auto ws = NormalizedComponents("/tmp/ws");
  EXPECT_EQ(RelativeBeneath(ws, NormalizedComponents("/tmp/ws")), std::optional<std::string>(""));
  EXPECT_EQ(RelativeBeneath(ws, NormalizedComponents("/tmp/ws/a/b")),
            std::optional<std::string>("a/b"));
  EXPECT_FALSE(RelativeBeneath(ws, NormalizedComponents("/tmp/ws_evil")));
  EXPECT_FALSE(RelativeBeneath(ws, NormalizedComponents("/tmp/ws_evil/x")));
  EXPECT_FALSE(RelativeBeneath(ws, NormalizedComponents("/tmp/w")));
  EXPECT_FALSE(RelativeBeneath(ws, NormalizedComponents("/tmp")));
  EXPECT_EQ(RelativeBeneath(NormalizedComponents("/"), NormalizedComponents("/etc/x")),
            std::optional<std::string>("etc/x"));
}

TEST(PathRules, ValidatesPathStrings) {
  EXPECT_EQ(ValidatePathString("").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidatePathString(std::string("a\0b", 3)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidatePathString(std::string(5000, 'a')).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidatePathString("x/" + std::string(256, 'a')).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(ValidatePathString("x/" + std::string(255, 'a')).ok());
  EXPECT_TRUE(ValidatePathString("/a/b/c.txt").ok());
}

struct DenyCase {
  const char* path;
  bool write_denied;
  bool read_denied;
};

TEST(PathRules, SensitiveTable) {
  SensitivePaths rules({"/home/u"}, {"/home/u/.talaria"});
  const DenyCase cases[] = {
      {"/home/u/.ssh/authorized_keys", true, true},
      {"/home/u/.ssh", true, true},
      {"/home/u/.aws/credentials", true, true},
      {"/home/u/.gnupg/x", true, true},
      {"/home/u/.kube/config", true, true},
      {"/home/u/.docker/config.json", true, true},
      {"/home/u/.azure/x", true, true},
      {"/home/u/.config/gh/hosts.yml", true, true},
      {"/home/u/.config/gcloud/creds", true, true},
      {"/home/u/.config/ghx/ok", false, false},
      {"/home/u/.netrc", true, true},
      {"/home/u/.pgpass", true, true},
      {"/home/u/.npmrc", true, true},
      {"/home/u/.pypirc", true, true},
      {"/home/u/.git-credentials", true, true},
      {"/home/u/.bashrc", true, false},
      {"/home/u/.zshrc", true, false},
      {"/home/u/.profile", true, false},
      {"/home/u/.config/fish/config.fish", true, false},
      {"/home/u/proj/.bashrc", false, false},
      {"/home/u/.sshx/ok", false, false},
      {"/etc/sudoers", true, false},
      {"/etc/sudoers.d/90-x", true, false},
      {"/etc/passwd", true, false},
      {"/etc/shadow", true, false},
      {"/etc/systemd/system/x.service", true, false},
      {"/etc/hosts", false, false},
      {"/srv/repo/.git/hooks/pre-commit", true, false},
      {"/srv/repo/.git/config", true, false},
      {"/srv/repo/.git/HEAD", true, false},
      {"/srv/repo/.git/commondir", true, false},
      {"/srv/repo/.git/modules/m/config", true, false},
      {"/srv/repo/sub/.git", true, false},
      {"/srv/repo/.gitignore", false, false},
      {"/srv/repo/.github/workflows/ci.yml", false, false},
      {"/home/u/.talaria", true, true},
      {"/home/u/.talaria/config.yaml", true, true},
      {"/home/u/.talaria/approvals.json", true, true},
      {"/home/u/.talaria/trusted.json", true, true},
      {"/home/u/.talaria/audit.jsonl", true, true},
      {"/home/u/.talaria/sessions.db", true, true},
      {"/home/u/.talaria/spill/a", true, false},
      {"/home/u/.talaria/plugins/p.so", true, true},
      {"/home/u/.talaria/memories/MEMORY.md", true, true},
      {"/home/u/.talariax/ok", false, false},
      {"/home/u/.talaria/auth.json", true, true},
      {"/home/u/.talaria/.env", true, true},
      {"/home/u/.talaria/mcp-tokens/srv.json", true, true},
      {"/srv/app/.env", false, true},
      {"/srv/app/.env.local", false, true},
      {"/srv/app/.env.production", false, true},
      {"/srv/app/.envrc", false, true},
      {"/srv/app/.env.example", false, false},
      {"/srv/app/env", false, false},
  };
  for (const DenyCase& c : cases) {
    EXPECT_EQ(rules.WriteDenial(c.path, c.path).has_value(), c.write_denied) << c.path;
    EXPECT_EQ(rules.ReadDenial(c.path, c.path).has_value(), c.read_denied) << c.path;
  }
}

TEST(PathRules, DenialMessagesNameOnlyTheShownPath) {
  SensitivePaths rules({"/home/u"}, {});
  auto why = rules.WriteDenial("/home/u/.ssh/id_rsa", "~/.ssh/id_rsa");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("'~/.ssh/id_rsa'"), std::string::npos);
  EXPECT_EQ(why->find("/home/u"), std::string::npos);
}

}  // namespace
}  // namespace talaria::safety::internal
