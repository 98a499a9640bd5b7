// Singularity / Apptainer: one instance per session, commands through
// `exec instance://<name>` (the session's bash wrapper of exec_shell_environment.h: like docker
// exec, the client cannot signal what it runs inside the instance's PID namespace), the instance
// stopped with the session. docker:// images become a SIF once, under a lock.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "env/exec_shell_environment.h"
#include "talaria/base/paths.h"
#include "talaria/base/random.h"
#include "talaria/base/strings.h"
#include "talaria/base/subprocess.h"
#include "talaria/base/unique_fd.h"
#include "talaria/env/environment.h"

namespace talaria::env {
namespace {

using namespace std::chrono_literals;

constexpr auto kBuildLimit = 600s;
constexpr auto kStartLimit = 120s;

Result<ProcessResult> RunTool(std::vector<std::string> argv, std::chrono::milliseconds timeout) {
  SpawnOptions spawn;
  spawn.argv = std::move(argv);
  spawn.timeout = timeout;
  return RunProcess(spawn);
}

// `options.program`, else apptainer, else singularity: the first that answers `version`.
Result<std::string> FindProgram(const ApptainerOptions& options) {
  std::vector<std::string> candidates = {options.program};
  if (options.program.empty()) candidates = {"apptainer", "singularity"};
  for (const std::string& program : candidates) {
    auto version = RunTool({program, "version"}, 10s);
    if (version && version->exit_code == 0) return program;
  }
  return Err(NotFoundError(options.program.empty()
                               ? "apptainer: neither 'apptainer' nor 'singularity' is installed"
                               : "apptainer: '" + options.program + "' does not run"));
}

std::string CacheDir(const ApptainerOptions& options) {
  if (!options.cache_dir.empty()) return options.cache_dir;
  const char* env = std::getenv("APPTAINER_CACHEDIR");
  if (env != nullptr && *env != '\0') return env;
  return TalariaHome() + "/apptainer";
}

// "docker://python:3.11-slim" -> "docker_python_3.11-slim.sif": one file per image name.
std::string SifName(std::string_view image) {
  std::string name;
  for (char c : image) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '-';
    name += keep ? c : '_';
  }
  while (name.find("__") != std::string::npos) name.erase(name.find("__"), 1);
  return name + ".sif";
}

// The SIF built from the docker:// `image`, building it once: concurrent sessions (of this or
// another process) wait on the lock file for the one build. Errors: the build's failure.
Result<std::string> BuildSif(const std::string& program, const std::string& image,
                             const std::string& cache_dir) {
  std::error_code ec;
  std::filesystem::create_directories(cache_dir, ec);
  if (ec) return Err(InternalError("apptainer: cannot create " + cache_dir + ": " + ec.message()));
  const std::string sif = cache_dir + "/" + SifName(image);
  UniqueFd lock(::open((sif + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!lock) return Err(InternalError("apptainer: cannot open the lock " + sif + ".lock"));
  const auto until = std::chrono::steady_clock::now() + kBuildLimit;
  while (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    if (std::chrono::steady_clock::now() >= until) {
      return Err(DeadlineExceededError("apptainer: another build of " + image + " holds " + sif +
                                       ".lock"));
    }
    std::this_thread::sleep_for(100ms);
  }
  struct stat st {};
  if (::stat(sif.c_str(), &st) == 0 && st.st_size > 0) return sif;
  // Built beside and renamed: a build cut short never passes for an image.
  const std::string partial = sif + ".partial-" + RandomHex(4);
  auto built = RunTool({program, "build", partial, image},
                       std::chrono::duration_cast<std::chrono::milliseconds>(kBuildLimit));
  if (!built || built->exit_code != 0 || built->timed_out) {
    std::filesystem::remove(partial, ec);
    return Err(UnavailableError(
        "apptainer: building " + image +
        " failed: " + (built ? std::string(Trim(built->stderr_text)) : built.error().ToString())));
  }
  std::filesystem::rename(partial, sif, ec);
  if (ec) return Err(InternalError("apptainer: cannot place " + sif + ": " + ec.message()));
  return sif;
}

std::vector<std::string> StartArgv(const std::string& program, const ApptainerOptions& o,
                                   const std::string& image, const std::string& name) {
  std::vector<std::string> argv = {program, "instance", "start", "--containall", "--no-home"};
  if (o.overlay.empty()) {
    argv.emplace_back("--writable-tmpfs");
  } else {
    argv.insert(argv.end(), {"--overlay", o.overlay});
  }
  for (const std::string& bind : o.binds) argv.insert(argv.end(), {"--bind", bind});
  for (const std::string& path : o.readonly_binds) {
    argv.insert(argv.end(), {"--bind", path + ":" + path + ":ro"});
  }
  if (o.memory_mb > 0) argv.insert(argv.end(), {"--memory", std::to_string(o.memory_mb) + "M"});
  if (o.cpus > 0) argv.insert(argv.end(), {"--cpus", std::to_string(o.cpus)});
  argv.insert(argv.end(), {image, name});
  return argv;
}

}  // namespace

Result<std::shared_ptr<Environment>> OpenApptainer(ApptainerOptions options) {
  const std::string program = TALARIA_TRY(FindProgram(options));
  std::string image = options.image;
  if (image.starts_with("docker://")) {
    // As the original: a failed build still leaves the URL, which the instance pulls itself.
    if (auto sif = BuildSif(program, image, CacheDir(options))) image = *sif;
  }
  if (!options.overlay.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.overlay, ec);
  }
  const std::string name = "talaria_" + RandomHex(6);
  auto started = RunTool(StartArgv(program, options, image, name),
                         std::chrono::duration_cast<std::chrono::milliseconds>(kStartLimit));
  if (!started) return Err(started.error());
  if (started->exit_code != 0 || started->timed_out) {
    (void)RunTool({program, "instance", "stop", name}, 30s);
    return Err(UnavailableError("apptainer: the instance of " + image + " does not start: " +
                                std::string(Trim(started->stderr_text + started->stdout_text))));
  }
  ExecClient client;
  client.kind = "apptainer";
  client.what = "apptainer: the instance " + name + " (" + image + ")";
  client.argv_prefix = [program, name](ExecTty) {
    // apptainer hands the caller's terminal through as it is: no flag for one.
    return std::vector<std::string>{program, "exec", "instance://" + name};
  };
  client.teardown = [program, name] { (void)RunTool({program, "instance", "stop", name}, 30s); };
  return OpenExecShell(std::move(client), options.initial_cwd);
}

}  // namespace talaria::env
