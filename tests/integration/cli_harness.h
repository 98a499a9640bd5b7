// Running the `talaria` binary as a user does, for the integration tests: a real process with
// TALARIA_HOME and HOME pointing at a directory of the test's, so no state of the machine leaks in.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/subprocess.h"

extern char** environ;

namespace talaria::testing_cli {

// A fresh home directory with TALARIA_HOME at its .talaria, as on a user's machine (the file
// tools and the sandbox keep out of TALARIA_HOME, so work happens beside it), removed at the
// end of the test.
class TempHome {
 public:
  TempHome() {
    char tmpl[] = "/tmp/talaria-cli-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    path_ = tmpl;
  }
  ~TempHome() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempHome(const TempHome&) = delete;
  TempHome& operator=(const TempHome&) = delete;
  const std::string& path() const { return path_; }
  std::string talaria_home() const { return path_ + "/.talaria"; }
  std::string config_path() const { return talaria_home() + "/config.yaml"; }
  void WriteConfig(std::string_view yaml) const {
    std::filesystem::create_directories(talaria_home());
    std::ofstream(config_path()) << yaml;
  }

 private:
  std::string path_;
};

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

struct CliInvocation {
  std::string home;        // HOME, with TALARIA_HOME at home/.talaria (need not exist)
  std::string cwd;         // empty: ours
  std::string stdin_data;  // empty: /dev/null
  std::chrono::seconds timeout{10};
  std::vector<std::string> extra_env;  // NAME=value added to talaria's start-up environment
};

// Our environment with HOME and TALARIA_HOME pointing into `how.home`, plus how.extra_env.
inline std::vector<std::string> TalariaEnvironment(const CliInvocation& how) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view kv(*e);
    if (kv.starts_with("TALARIA_HOME=") || kv.starts_with("HOME=")) continue;
    env.emplace_back(kv);
  }
  env.push_back("TALARIA_HOME=" + how.home + "/.talaria");
  env.push_back("HOME=" + how.home);
  env.insert(env.end(), how.extra_env.begin(), how.extra_env.end());
  return env;
}

inline CliRun RunTalaria(const CliInvocation& how, const std::vector<std::string>& args) {
  SpawnOptions options;
  options.cwd = how.cwd;
  options.argv = {TALARIA_CLI_PATH};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.env = TalariaEnvironment(how);
  options.stdin_data = how.stdin_data;
  options.timeout = how.timeout;
  CliRun run;
  auto result = RunProcess(options);
  if (!result) {
    ADD_FAILURE() << "could not run " << TALARIA_CLI_PATH << ": " << result.error().message();
    return run;
  }
  EXPECT_FALSE(result->timed_out) << "talaria hung";
  run.exit_code = result->exit_code;
  run.out = std::move(result->stdout_text);
  run.err = std::move(result->stderr_text);
  return run;
}

inline std::string Describe(const std::vector<std::string>& args, const CliRun& run) {
  std::string cmd = "talaria";
  for (const auto& a : args) cmd += " " + a;
  return cmd + "\n  exit " + std::to_string(run.exit_code) +
         "\n  stdout: " + run.out.substr(0, 600) + "\n  stderr: " + run.err.substr(0, 600);
}

inline std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace talaria::testing_cli
