// The real-Chromium fixture (local_chromium.h).
#include "support/local_chromium.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "talaria/base/spawn.h"

namespace talaria_test {

std::string LocalChromium::ProgramPath() {
  for (const char* p :
       {"/usr/bin/chromium", "/usr/bin/chromium-headless-shell", "/usr/lib/chromium/chromium"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
}

std::unique_ptr<LocalChromium> LocalChromium::Start(std::string& why) {
  const std::string program = ProgramPath();
  if (program.empty()) {
    why = "no Chromium installed (apt-get install chromium)";
    return nullptr;
  }
  std::unique_ptr<LocalChromium> c(new LocalChromium());
  talaria::SpawnOptions options;
  options.argv = {program,
                  "--headless=new",
                  "--remote-debugging-port=0",
                  "--remote-debugging-address=127.0.0.1",
                  "--user-data-dir=" + c->profile_.path(),
                  "--no-first-run",
                  "--no-default-browser-check",
                  "--disable-gpu",
                  "--disable-dev-shm-usage",
                  "--disable-crash-reporter",
                  "--disable-breakpad",
                  "--disable-background-networking",
                  "--disable-component-update",
                  "--disable-extensions",
                  "about:blank"};
  if (::geteuid() == 0) options.argv.insert(options.argv.begin() + 1, "--no-sandbox");
  auto started = talaria::StartProcess(options, {});
  if (!started) {
    why = "cannot start " + program + ": " + started.error().message();
    return nullptr;
  }
  c->pid_ = started->pid;
  c->pidfd_ = std::move(started->pidfd);
  c->output_ = std::move(started->output);
  const int out_fd = c->output_.get();
  c->drain_ = std::jthread([out_fd](std::stop_token stop) {
    char buf[4096];
    while (!stop.stop_requested()) {
      pollfd p{out_fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      if (::read(out_fd, buf, sizeof(buf)) == 0) return;
    }
  });

  const std::string port_file = c->profile_.path() + "/DevToolsActivePort";
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < give_up) {
    std::ifstream in(port_file);
    int port = 0;
    std::string path;
    if (in >> port >> path && port > 0 && !path.empty()) {
      c->port_ = port;
      c->ws_url_ = "ws://127.0.0.1:" + std::to_string(port) + path;
      return c;
    }
    if (::waitpid(c->pid_, nullptr, WNOHANG) == c->pid_) {
      c->pid_ = -1;
      why = "Chromium exited before it opened its DevTools port";
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  why = "Chromium wrote no DevToolsActivePort within 30 s";
  return nullptr;  // the destructor ends it
}

void LocalChromium::Stop() {
  if (pid_ > 0) {
    talaria::TerminateProcessGroup(pid_, pidfd_.get(), std::chrono::milliseconds(3000));
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  drain_.request_stop();
  if (drain_.joinable()) drain_.join();
}

LocalChromium::~LocalChromium() { Stop(); }

int ProcessesMentioning(const std::string& needle) {
  int count = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find(needle) != std::string::npos) ++count;
  }
  return count;
}

}  // namespace talaria_test
