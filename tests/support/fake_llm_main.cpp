// talaria-fake-llm: the scripted OpenAI-compatible server (support/fake_llm_server.h) as a
// process, for tests that run `talaria run`/`talaria chat` with --base-url pointing at it.
//
//   talaria-fake-llm --script FILE [--port N] [--port-file F] [--log F] [--strict]
//
// Prints nothing on stdout. Writes the port to --port-file (atomically: a reader sees the whole
// number or no file), one JSON line per request to --log (default stderr), and exits 0 on
// SIGTERM or SIGINT (2 on a usage or script error, 1 when the port cannot be bound).
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "support/fake_llm_server.h"

namespace {

int Usage(const std::string& why) {
  std::cerr << "talaria-fake-llm: " << why
            << "\nusage: talaria-fake-llm --script FILE [--port N] [--port-file F] [--log F] "
               "[--strict]\n";
  return 2;
}

bool WritePortFile(const std::string& path, int port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!(out << port << "\n")) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string script_path;
  std::string port_file;
  std::string log_path;
  int port = 0;
  bool strict = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string text;
    if (arg == "--script") {
      if (!value(&script_path)) return Usage("--script needs a file");
    } else if (arg == "--port-file") {
      if (!value(&port_file)) return Usage("--port-file needs a file");
    } else if (arg == "--log") {
      if (!value(&log_path)) return Usage("--log needs a file");
    } else if (arg == "--port") {
      if (!value(&text)) return Usage("--port needs a number");
      char* end = nullptr;
      const long n = std::strtol(text.c_str(), &end, 10);
      if (end == text.c_str() || *end != '\0' || n < 0 || n > 65535)
        return Usage("bad --port " + text);
      port = static_cast<int>(n);
    } else if (arg == "--strict") {
      strict = true;
    } else {
      return Usage("unknown argument " + arg);
    }
  }
  if (script_path.empty()) return Usage("--script is required");

  std::string error;
  auto script = talaria::test_support::LoadFakeLlmScriptFile(script_path, &error);
  if (!script) {
    std::cerr << "talaria-fake-llm: " << error << "\n";
    return 2;
  }
  if (strict) script->strict = true;

  // Block the stop signals before any thread starts, so only sigwait below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client that hangs up mid-stream is a write error, not a death

  std::unique_ptr<std::ofstream> log_file;
  if (!log_path.empty()) {
    log_file = std::make_unique<std::ofstream>(log_path, std::ios::app);
    if (!*log_file) {
      std::cerr << "talaria-fake-llm: cannot open log " << log_path << "\n";
      return 2;
    }
  }
  talaria::test_support::FakeLlmServer server(std::move(*script));
  server.SetLogSink([&log_file](const std::string& line) {
    if (log_file) {
      *log_file << line << "\n" << std::flush;
    } else {
      std::cerr << line << "\n" << std::flush;
    }
  });
  if (!server.Start(&error, port)) {
    std::cerr << "talaria-fake-llm: " << error << "\n";
    return 1;
  }
  if (!port_file.empty() && !WritePortFile(port_file, server.port())) {
    std::cerr << "talaria-fake-llm: cannot write " << port_file << "\n";
    server.Stop();
    return 2;
  }
  int received = 0;
  sigwait(&stop_signals, &received);
  server.Stop();
  return 0;
}
