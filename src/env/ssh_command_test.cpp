// The connection-free parts of the SSH environment: quoting (checked against a real /bin/sh),
// the control socket name, the ssh argv and the cwd report.
#include "env/ssh_command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "talaria/base/subprocess.h"

namespace talaria::env {
namespace {

TEST(ShellQuote, WrapsInSingleQuotesAndEscapesSingleQuotes) {
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("abc"), "'abc'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("'"), "''\\'''");
  EXPECT_EQ(ShellQuote("$HOME `id` \\n \"x\""), "'$HOME `id` \\n \"x\"'");
  EXPECT_EQ(ShellJoin({"a b", "", "c'd"}), "'a b' '' 'c'\\''d'");
  EXPECT_EQ(ShellJoin({}), "");
}

// What the remote login shell does with the joined string: split it back into the words.
std::vector<std::string> SplitWithShell(const std::string& shell, const std::string& line) {
  SpawnOptions spawn;
  spawn.argv = {shell, "-c", "for w in " + line + "; do printf '%s\\0' \"$w\"; done"};
  auto r = RunProcess(spawn);
  EXPECT_TRUE(r) << r.error().ToString();
  if (!r) return {};
  EXPECT_EQ(r->exit_code, 0) << r->stderr_text;
  std::vector<std::string> words;
  size_t start = 0;
  for (size_t nul = r->stdout_text.find('\0'); nul != std::string::npos;
       nul = r->stdout_text.find('\0', start)) {
    words.push_back(r->stdout_text.substr(start, nul - start));
    start = nul + 1;
  }
  return words;
}

TEST(ShellQuote, EveryByteSurvivesARealShell) {
  std::string all_bytes;
  for (int c = 1; c < 256; ++c) all_bytes += static_cast<char>(c);
  const std::vector<std::string> words = {"plain",
                                          "",
                                          " ",
                                          "it's",
                                          "''",
                                          "'\\''",
                                          "$HOME",
                                          "${PATH}",
                                          "`id`",
                                          "$(id)",
                                          "a\nb\n",
                                          "\\",
                                          "\"",
                                          "*",
                                          "~",
                                          "!",
                                          "#not a comment",
                                          "-n",
                                          "--",
                                          ";|&<>()",
                                          "tab\there",
                                          "ünïcödé ✓ 日本",
                                          "\r\n\x7f",
                                          all_bytes};
  for (const char* shell : {"/bin/sh", "/bin/bash"}) {
    EXPECT_EQ(SplitWithShell(shell, ShellJoin(words)), words) << shell;
  }
}

TEST(ControlSocketName, IsTheFirst16HexOfSha256OfUserHostPort) {
  // printf '%s' 'alice@example.com:22' | sha256sum
  const std::string name = ControlSocketName("alice", "example.com", 22);
  ASSERT_EQ(name.size(), 16u + 5u);
  EXPECT_EQ(name.substr(16), ".sock");
  EXPECT_TRUE(
      std::all_of(name.begin(), name.begin() + 16, [](char c) { return std::isxdigit(c) != 0; }));
  SpawnOptions spawn;
  spawn.argv = {"/bin/sh", "-c", "printf '%s' 'alice@example.com:22' | sha256sum"};
  auto r = RunProcess(spawn);
  ASSERT_TRUE(r);
  EXPECT_EQ(name.substr(0, 16), r->stdout_text.substr(0, 16));
  EXPECT_NE(ControlSocketName("alice", "example.com", 2222), name);
}

TEST(SshOptionArgv, HasTheOriginalsOptionsAndQuotesPaths) {
  SshOptions o;
  o.host = "h";
  o.port = 2222;
  o.identity_file = "/keys/id%1";
  o.known_hosts_file = "/k h/known";
  o.extra_options = {"Compression=no"};
  o.connect_timeout = std::chrono::seconds(3);
  const std::vector<std::string> argv = SshOptionArgv(o, "/c/x.sock");
  const auto has = [&](const std::vector<std::string>& seq) {
    return std::search(argv.begin(), argv.end(), seq.begin(), seq.end()) != argv.end();
  };
  EXPECT_TRUE(has({"-o", "ControlMaster=auto"}));
  EXPECT_TRUE(has({"-o", "ControlPath=\"/c/x.sock\""}));
  EXPECT_TRUE(has({"-o", "ControlPersist=300"}));
  EXPECT_TRUE(has({"-o", "BatchMode=yes"}));
  EXPECT_TRUE(has({"-o", "StrictHostKeyChecking=accept-new"}));
  EXPECT_TRUE(has({"-o", "ConnectTimeout=3"}));
  EXPECT_TRUE(has({"-o", "UserKnownHostsFile=\"/k h/known\""}));
  EXPECT_TRUE(has({"-i", "/keys/id%%1"}));
  EXPECT_TRUE(has({"-p", "2222"}));
  EXPECT_TRUE(has({"-o", "Compression=no"}));
  EXPECT_EQ(SshDestination(o), "h");
  o.user = "bob";
  EXPECT_EQ(SshDestination(o), "bob@h");
}

TEST(ValidateSshOptions, RejectsWhatSshWouldMisread) {
  SshOptions o;
  o.host = "example.com";
  EXPECT_TRUE(ValidateSshOptions(o, "/tmp/x.sock").ok());
  for (const char* host : {"", "-oProxyCommand=sh", "a b", "a\nb"}) {
    o.host = host;
    EXPECT_EQ(ValidateSshOptions(o, "/tmp/x.sock").code(), StatusCode::kInvalidArgument) << host;
  }
  o.host = "example.com";
  o.user = "-l";
  EXPECT_EQ(ValidateSshOptions(o, "/tmp/x.sock").code(), StatusCode::kInvalidArgument);
  o.user = "";
  o.port = 0;
  EXPECT_EQ(ValidateSshOptions(o, "/tmp/x.sock").code(), StatusCode::kInvalidArgument);
  o.port = 22;
  EXPECT_EQ(ValidateSshOptions(o, "/" + std::string(100, 'd') + "/x.sock").code(),
            StatusCode::kInvalidArgument);
  o.extra_options = {"-oProxyCommand=sh"};
  EXPECT_EQ(ValidateSshOptions(o, "/tmp/x.sock").code(), StatusCode::kInvalidArgument);
}

TEST(ExtractCwdReport, TakesTheLastMarkerLineAndKeepsTheRest) {
  const std::string m = "__M__";
  CwdReport r = ExtractCwdReport("Warning: added\n__M__/home/a b\n", m);
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.cwd, "/home/a b");
  EXPECT_EQ(r.rest, "Warning: added\n");
  r = ExtractCwdReport("__M__\n", m);
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.cwd, "");
  r = ExtractCwdReport("x__M__/not-a-line\nssh: lost\n", m);
  EXPECT_FALSE(r.found);
  EXPECT_EQ(r.rest, "x__M__/not-a-line\nssh: lost\n");
  r = ExtractCwdReport("__M__/a\n__M__/b", m);
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.cwd, "/b");
  EXPECT_EQ(r.rest, "__M__/a\n");
}

}  // namespace
}  // namespace talaria::env
