// talaria_mcp_bench: `talaria mcp` against the reference filesystem server
// (@modelcontextprotocol/server-filesystem, tests/mcp_peers) on the same machine in one run,
// both spawned as real child processes and spoken to over stdio with newline-delimited JSON-RPC
// by this program itself (no SDK on either side of the measurement). Issue 6.
//
//   METRIC mcp_spawn_to_initialize_{talaria,reference}_ms  posix_spawn -> initialize answer read
//   METRIC mcp_spawn_to_initialize_ratio         reference / talaria (target >= 20)
//   METRIC mcp_read_file_rtt_p{50,99}_{talaria,reference}_us  one call at a time
//   METRIC mcp_read_file_rtt_p50_ratio            reference / talaria
//   METRIC mcp_calls_per_s_16_in_flight_{talaria,reference}  16 requests always outstanding
//   METRIC mcp_calls_per_s_16_in_flight_ratio     talaria / reference (target >= 3)
//   METRIC mcp_calls_rejected_16_in_flight_{talaria,reference}  error answers meanwhile (want 0)
//   METRIC mcp_cpu_us_per_call_16_in_flight_{server,client}_{talaria,reference}  CPU time per
//          answer meanwhile: the server process's (all threads) and this bench's own (diagnosis:
//          steadier than calls/s on a busy machine)
//
// The files read are 256 distinct generated Markdown-like text files of 2 to 16 KB (about 30 to
// 240 lines, 9 KB on average) in 8 directories two levels below the root; call i reads file
// i mod 256, whole (just a path: talaria's read_file shows up to 500 lines, the reference's
// read_text_file the whole file). talaria's tool is read_file, the reference's read_text_file (its
// read_file is a deprecated alias). Every answer is checked to be that file's content: its own
// first and last lines, at least the file's size, and no isError. A stub ("unchanged since last
// read"), an error or another file's text fails the run. (talaria's re-read guards are off over
// MCP by default: `mcp: read_guards` in config.yaml.) Each phase gets a fresh
// server process; the two servers never run at the same time. Spawns alternate between the two
// servers (warm-up spawns first, then the median of 20 each). Round trips: a warm-up of 200, then
// 5 blocks of 2,000; p50/p99 are the medians over the blocks. Throughput: a warm-up of 0.5 s,
// then 5 blocks of 1 s with the pipeline kept full across blocks; the median block. Without
// node or the installed reference server only talaria's metrics are printed (exit 0).
//
//   talaria_mcp_bench [--quick] [--talaria PATH] [--source DIR] [--in-flight N] [--talaria-only]
//
// --in-flight N (diagnosis) keeps N calls outstanding instead of 16 and names the metrics after
// N; --talaria-only skips the reference (for profiling talaria alone).
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench_util.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
using talaria_bench::Median;
using talaria_bench::PrintMetric;

constexpr std::chrono::seconds kReplyDeadline{15};
constexpr int kFileCount = 256;
// Calls kept outstanding by the throughput phase (the issue says 16; --in-flight N for diagnosis).
int g_in_flight = 16;

double MsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}
double UsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

// Where the servers' stderr goes (kept when the bench dies, for the post-mortem).
std::string g_log_dir;
// Children not yet reaped: Die kills them (exit does not run the destructors that would).
std::vector<pid_t> g_live_children;

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "talaria_mcp_bench: %s\n", message.c_str());
  if (!g_log_dir.empty())
    std::fprintf(stderr, "talaria_mcp_bench: server logs in %s\n", g_log_dir.c_str());
  for (const pid_t pid : g_live_children) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  std::exit(2);
}

// File `index`'s first and last lines: unique per file (zero-padded, so none is a prefix of
// another), so an answer carrying another file's text never passes.
std::string FirstLine(int index) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "# Release notes %04d", index);
  return buf;
}
std::string LastLine(int index) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "END-OF-BENCH-FILE-%04d", index);
  return buf;
}

// File `index`'s path relative to the root: docs/section-K/note-NNNN.md.
std::string RelativePath(int index) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "docs/section-%d/note-%04d.md", index % 8, index);
  return buf;
}

// 2 to 16 KB of ordinary text (lines of ~70 bytes), deterministic per index; starts with
// FirstLine(index), ends with LastLine(index).
std::string MakeFileText(int index) {
  talaria_bench::SplitMix64 rng(0x5EED0006 + static_cast<uint64_t>(index));
  const size_t target = 2048 + rng.Below(14 * 1024);
  std::string text = FirstLine(index) + "\n\n";
  static constexpr std::string_view kWords[] = {
      "server", "client", "request", "answer", "timeout", "buffer",   "session", "stream",
      "schema", "tool",   "result",  "error",  "cancel",  "progress", "file"};
  for (int line = 1; text.size() < target; ++line) {
    std::string row = "- item ";
    row += std::to_string(line);
    row += ':';
    for (int w = 0; w < 8; ++w) {
      row += ' ';
      row += kWords[rng.Below(std::size(kWords))];
    }
    row += ".\n";
    text += row;
  }
  text += LastLine(index);
  text += '\n';
  return text;
}

// --- a JSON-RPC peer over a child's stdin/stdout ------------------------------------------

// What the bench needs from one incoming line, found by a single scan that tracks strings and
// nesting (no DOM: parsing 8 KB answers into a tree would be a client cost in every figure).
// String bodies, nearly all of an answer's bytes, are skipped with memchr from quote to quote:
// the bench shares the machine's cores with the server it measures, so its own cost per byte of
// answer must stay small, or the side with the longer answers is measured partly as the bench.
struct LineInfo {
  std::optional<long long> id;  // top-level numeric "id"
  bool has_method = false;      // a request or notification from the server
  bool has_error = false;       // a top-level "error" member
};

// The offset of the quote that ends the JSON string whose body starts at `from`, or npos.
size_t StringEnd(std::string_view line, size_t from) {
  for (size_t at = from;;) {
    const void* hit = std::memchr(line.data() + at, '"', line.size() - at);
    if (hit == nullptr) return std::string_view::npos;
    const size_t quote = static_cast<size_t>(static_cast<const char*>(hit) - line.data());
    // Escaped only after an odd run of backslashes (each pair is one escaped backslash).
    size_t backslashes = 0;
    while (quote - backslashes > from && line[quote - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return quote;
    at = quote + 1;
  }
}

LineInfo ScanLine(std::string_view line) {
  LineInfo info;
  int depth = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    }
    if (c != '"') continue;
    const size_t string_start = i + 1;
    i = StringEnd(line, string_start);
    if (i == std::string_view::npos) break;
    if (depth != 1) continue;
    // A top-level key is a string followed by ':'.
    size_t j = i + 1;
    while (j < line.size() && line[j] == ' ') ++j;
    if (j >= line.size() || line[j] != ':') continue;
    const std::string_view key = line.substr(string_start, i - string_start);
    if (key == "method") info.has_method = true;
    if (key == "error") info.has_error = true;
    if (key == "id") {
      ++j;
      while (j < line.size() && line[j] == ' ') ++j;
      char* end = nullptr;
      const long long v = std::strtoll(line.data() + j, &end, 10);
      if (end != line.data() + j) info.id = v;
    }
  }
  return info;
}

// A server process with pipes to its stdin and stdout; stderr goes to `log_path`. Started with
// posix_spawn in its own process group; the destructor kills that group (by the child's pid) and
// reaps the child. Not thread-safe; one thread drives it.
class ServerProcess {
 public:
  static std::optional<ServerProcess> Start(const std::vector<std::string>& argv,
                                            const std::vector<std::string>& env,
                                            const std::string& cwd, const std::string& log_path,
                                            std::string* error) {
    int in[2];
    int out[2];
    if (::pipe2(in, O_CLOEXEC) != 0) return Fail(error, "pipe2");
    if (::pipe2(out, O_CLOEXEC) != 0) {
      ::close(in[0]);
      ::close(in[1]);
      return Fail(error, "pipe2");
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log_path.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none;
    sigemptyset(&none);
    sigset_t all;
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(
        &attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    std::vector<char*> cargv;
    for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    std::vector<char*> cenv;
    for (const std::string& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
    cenv.push_back(nullptr);
    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, cargv[0], &actions, &attr, cargv.data(), cenv.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(in[0]);
    ::close(out[1]);
    if (rc != 0) {
      ::close(in[1]);
      ::close(out[0]);
      std::string message = "cannot spawn ";
      message += argv[0];
      message += ": ";
      message += std::strerror(rc);
      *error = message;
      return std::nullopt;
    }
    g_live_children.push_back(pid);
    return ServerProcess(pid, in[1], out[0]);
  }

  ServerProcess(ServerProcess&& other) noexcept
      : pid_(std::exchange(other.pid_, -1)),
        in_(std::exchange(other.in_, -1)),
        out_(std::exchange(other.out_, -1)),
        buffer_(std::move(other.buffer_)),
        start_(other.start_),
        chunk_(std::move(other.chunk_)) {}
  ServerProcess& operator=(ServerProcess&&) = delete;
  ~ServerProcess() { Kill(); }

  pid_t pid() const { return pid_; }

  // SIGKILL to the child's group, then reaps it (bounded: SIGKILL cannot be ignored).
  void Kill() {
    if (in_ >= 0) ::close(std::exchange(in_, -1));
    if (out_ >= 0) ::close(std::exchange(out_, -1));
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      ::kill(pid_, SIGKILL);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      std::erase(g_live_children, pid_);
      pid_ = -1;
    }
  }

  // Writes `line` and a newline, whole.
  void Send(std::string line) {
    line += '\n';
    size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = ::write(in_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) Die(std::string("write to server: ") + std::strerror(errno));
      done += static_cast<size_t>(n);
    }
  }

  // The next line from the server's stdout (without the newline); dies on EOF or after
  // kReplyDeadline without one. The view is valid until the next call.
  std::string_view ReadLine() {
    if (start_ == buffer_.size()) {
      buffer_.clear();
      start_ = 0;
    } else if (start_ >= kChunk) {
      buffer_.erase(0, start_);
      start_ = 0;
    }
    size_t scanned = start_;
    const auto deadline = Clock::now() + kReplyDeadline;
    for (;;) {
      const size_t nl = buffer_.find('\n', scanned);
      if (nl != std::string::npos) {
        const std::string_view line = std::string_view(buffer_).substr(start_, nl - start_);
        start_ = nl + 1;
        return line;
      }
      scanned = buffer_.size();
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) Die("no answer from the server within 15 s");
      pollfd p{out_, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(left.count()) + 1);
      if (ready <= 0) continue;  // EINTR or the deadline, checked above
      const ssize_t n = ::read(out_, chunk_.data(), chunk_.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) Die("the server closed its stdout");
      buffer_.append(chunk_.data(), static_cast<size_t>(n));
    }
  }

  // Reads until the answer to request `id`; answers server requests with -32601 and skips
  // notifications. Dies when the answer is a JSON-RPC error.
  std::string_view AwaitAnswer(long long id) {
    for (;;) {
      const std::string_view line = ReadLine();
      const LineInfo info = ScanLine(line);
      if (info.has_method) {
        if (info.id) AnswerServerRequest(*info.id);
        continue;
      }
      if (!info.id) continue;
      if (*info.id != id) {
        Die("answer to request " + std::to_string(*info.id) + " while waiting for " +
            std::to_string(id));
      }
      if (info.has_error)
        Die("request " + std::to_string(id) + " failed: " + std::string(line.substr(0, 300)));
      return line;
    }
  }

  void AnswerServerRequest(long long id) {
    std::string reply = R"({"jsonrpc":"2.0","id":)";
    reply += std::to_string(id);
    reply += R"(,"error":{"code":-32601,"message":"not supported by the bench client"}})";
    Send(std::move(reply));
  }

 private:
  ServerProcess(pid_t pid, int in, int out) : pid_(pid), in_(in), out_(out) {}
  static std::optional<ServerProcess> Fail(std::string* error, const char* what) {
    *error = std::string(what) + ": " + std::strerror(errno);
    return std::nullopt;
  }

  pid_t pid_;
  int in_;
  int out_;
  static constexpr size_t kChunk = 65536;
  std::string buffer_;
  size_t start_ = 0;                                     // bytes of buffer_ already returned
  std::vector<char> chunk_ = std::vector<char>(kChunk);  // one read(2)
};

// --- the two servers -------------------------------------------------------------------------

struct Server {
  std::string label;  // "talaria" / "reference"
  std::vector<std::string> argv;
  std::string read_tool;
};

struct Setup {
  std::vector<std::string> env;
  std::string root;
  std::string log_dir;
  std::vector<std::string> file_paths;  // absolute, kFileCount of them
  std::vector<size_t> file_sizes;
};

// The file request `id` reads.
size_t FileIndexOf(long long id) { return static_cast<size_t>(id % kFileCount); }

std::string InitializeRequest(long long id) {
  std::string r = R"({"jsonrpc":"2.0","id":)";
  r += std::to_string(id);
  r += R"(,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},)";
  r += R"("clientInfo":{"name":"talaria_mcp_bench","version":"1.0.0"}}})";
  return r;
}

std::string ReadRequest(const Server& server, const Setup& setup, long long id) {
  std::string r = R"({"jsonrpc":"2.0","id":)";
  r += std::to_string(id);
  r += R"(,"method":"tools/call","params":{"name":")";
  r += server.read_tool;
  r += R"(","arguments":{"path":")";
  r += setup.file_paths[FileIndexOf(id)];
  r += "\"}}}";
  return r;
}

ServerProcess Spawn(const Server& server, const Setup& setup) {
  std::string error;
  auto process = ServerProcess::Start(server.argv, setup.env, setup.root,
                                      setup.log_dir + "/" + server.label + ".log", &error);
  if (!process) Die(server.label + ": " + error);
  return std::move(*process);
}

// posix_spawn -> the initialize answer read in full; the child is then killed and reaped.
double SpawnToInitializeMs(const Server& server, const Setup& setup) {
  const auto t0 = Clock::now();
  ServerProcess process = Spawn(server, setup);
  process.Send(InitializeRequest(1));
  process.AwaitAnswer(1);
  const auto t1 = Clock::now();
  process.Kill();
  return MsBetween(t0, t1);
}

void CheckReadAnswer(const Server& server, const Setup& setup, long long id,
                     std::string_view answer);

// A fresh server past the handshake, its tool list checked for the read tool, and one read
// checked for the file's content.
ServerProcess OpenSession(const Server& server, const Setup& setup, long long& next_id) {
  ServerProcess process = Spawn(server, setup);
  process.Send(InitializeRequest(next_id));
  process.AwaitAnswer(next_id++);
  process.Send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  std::string list = R"({"jsonrpc":"2.0","id":)";
  list += std::to_string(next_id);
  list += R"(,"method":"tools/list"})";
  process.Send(std::move(list));
  std::string quoted = "\"";
  quoted += server.read_tool;
  quoted += '"';
  if (process.AwaitAnswer(next_id++).find(quoted) == std::string_view::npos) {
    Die(server.label + " does not list the tool " + server.read_tool);
  }
  process.Send(ReadRequest(server, setup, next_id));
  CheckReadAnswer(server, setup, next_id, process.AwaitAnswer(next_id));
  ++next_id;
  return process;
}

// glibc's memmem (two-way, vectorised): std::string_view::find stops at every byte equal to the
// needle's first, which in an escaped answer is every quote.
bool Contains(std::string_view haystack, std::string_view needle) {
  return ::memmem(haystack.data(), haystack.size(), needle.data(), needle.size()) != nullptr;
}

// Dies unless `answer` (to request `id`) carries the whole of the file that request read.
void CheckReadAnswer(const Server& server, const Setup& setup, long long id,
                     std::string_view answer) {
  const size_t index = FileIndexOf(id);
  const int i = static_cast<int>(index);
  const bool ok = Contains(answer, FirstLine(i)) && Contains(answer, LastLine(i)) &&
                  answer.size() >= setup.file_sizes[index] && !Contains(answer, "\"isError\":true");
  if (!ok) {
    Die(server.label + ": " + server.read_tool + " did not return " + setup.file_paths[index] +
        ": " + std::string(answer.substr(0, 400)));
  }
}

double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const size_t rank =
      static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

struct RoundTrips {
  double p50_us = 0;
  double p99_us = 0;
};

// One call at a time: warm-up, then `blocks` blocks of `n`; medians of the blocks' p50 and p99.
RoundTrips MeasureRoundTrips(const Server& server, const Setup& setup, int warmup, int n,
                             int blocks) {
  long long id = 1;
  ServerProcess process = OpenSession(server, setup, id);
  auto one = [&] {
    const auto t0 = Clock::now();
    process.Send(ReadRequest(server, setup, id));
    const std::string_view answer = process.AwaitAnswer(id);
    const auto t1 = Clock::now();
    CheckReadAnswer(server, setup, id++, answer);
    return UsBetween(t0, t1);
  };
  for (int i = 0; i < warmup; ++i) one();
  std::vector<double> p50s;
  std::vector<double> p99s;
  std::vector<double> us(static_cast<size_t>(n));
  for (int b = 0; b < blocks; ++b) {
    for (double& u : us) u = one();
    p50s.push_back(Percentile(us, 50));
    p99s.push_back(Percentile(us, 99));
  }
  return {Median(std::move(p50s)), Median(std::move(p99s))};
}

struct Throughput {
  double calls_per_s = 0;  // successful answers only
  long long rejected = 0;  // JSON-RPC error answers during the timed blocks
  std::string first_error;
  // CPU time (user + system) per answer during the timed blocks: the server process's, all its
  // threads, and this bench's own. Less at the mercy of other load on the machine than calls/s.
  double server_cpu_us_per_call = 0;
  double client_cpu_us_per_call = 0;
};

// CPU time (user + system) of process `pid` so far, all threads, from /proc; 0 if unreadable.
double ProcessCpuUs(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return 0;
  char buf[1024];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  // Fields 14 and 15 (utime, stime) count from after the ")" that ends the command name.
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr) return 0;
  unsigned long long utime = 0;
  unsigned long long stime = 0;
  if (std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) !=
      2)
    return 0;
  return static_cast<double>(utime + stime) * 1e6 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double SelfCpuUs() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto us = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec);
  };
  return us(u.ru_utime) + us(u.ru_stime);
}

// g_in_flight calls always outstanding (a new one is sent as each answer arrives, ids in order of
// sending; answers may come in any order). Warm-up, then `blocks` blocks of `block` each; the
// value of a block is the successful answers it received / its length; returns the median block.
// An error answer (a server refusing the call) is counted, not fatal: the figure then says how
// the server copes with this load.
Throughput MeasureCallsPerSecond(const Server& server, const Setup& setup,
                                 std::chrono::milliseconds warmup, std::chrono::milliseconds block,
                                 int blocks) {
  long long id = 1;
  ServerProcess process = OpenSession(server, setup, id);
  const long long first = id;
  std::vector<bool> answered;
  Throughput result;
  auto send = [&] { process.Send(ReadRequest(server, setup, id++)); };
  // True for a successful answer.
  auto receive = [&] {
    for (;;) {
      const std::string_view line = process.ReadLine();
      const LineInfo info = ScanLine(line);
      if (info.has_method) {
        if (info.id) process.AnswerServerRequest(*info.id);
        continue;
      }
      if (!info.id) continue;
      if (*info.id < first || *info.id >= id) Die(server.label + ": an answer to an unknown id");
      const auto slot = static_cast<size_t>(*info.id - first);
      if (answered.size() <= slot) answered.resize(slot + 1024, false);
      if (answered[slot]) Die(server.label + ": two answers to one id");
      answered[slot] = true;
      if (info.has_error) {
        if (result.first_error.empty()) result.first_error = line.substr(0, 300);
        return false;
      }
      CheckReadAnswer(server, setup, *info.id, line);
      return true;
    }
  };
  for (int i = 0; i < g_in_flight; ++i) send();
  auto run_for = [&](std::chrono::milliseconds length, bool timed) {
    const auto t0 = Clock::now();
    const auto until = t0 + length;
    long long done = 0;
    auto now = t0;
    while (now < until) {
      if (receive()) {
        ++done;
      } else if (timed) {
        ++result.rejected;
      }
      send();
      now = Clock::now();
    }
    return static_cast<double>(done) / std::chrono::duration<double>(now - t0).count();
  };
  run_for(warmup, false);
  std::vector<double> rates;
  const long long answered_before = id;
  const double server_cpu_before = ProcessCpuUs(process.pid());
  const double client_cpu_before = SelfCpuUs();
  for (int b = 0; b < blocks; ++b) rates.push_back(run_for(block, true));
  const auto calls = static_cast<double>(id - answered_before);  // one sent per answer received
  result.server_cpu_us_per_call = (ProcessCpuUs(process.pid()) - server_cpu_before) / calls;
  result.client_cpu_us_per_call = (SelfCpuUs() - client_cpu_before) / calls;
  for (int i = 0; i < g_in_flight; ++i) static_cast<void>(receive());  // every call answered once
  result.calls_per_s = Median(std::move(rates));
  return result;
}

std::string MakeTempDir(const char* what) {
  const char* t = std::getenv("TMPDIR");
  std::string tmpl = t != nullptr && *t != '\0' ? t : "/tmp";
  tmpl += "/talaria-mcp-bench-";
  tmpl += what;
  tmpl += "-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) Die("mkdtemp: " + std::string(std::strerror(errno)));
  return std::filesystem::canonical(tmpl).string();
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  bool talaria_only = false;
  std::string talaria_path = TALARIA_CLI_PATH;
  std::string source_dir = TALARIA_SOURCE_DIR;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--quick") {
      quick = true;
    } else if (a == "--talaria" && i + 1 < argc) {
      talaria_path = argv[++i];
    } else if (a == "--source" && i + 1 < argc) {
      source_dir = argv[++i];
    } else if (a == "--in-flight" && i + 1 < argc) {
      g_in_flight = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--talaria-only") {
      talaria_only = true;
    } else {
      std::fprintf(stderr,
                   "usage: talaria_mcp_bench [--quick] [--talaria PATH] [--source DIR] "
                   "[--in-flight N] [--talaria-only]\n");
      return 64;
    }
  }
  // A dead peer must surface as EPIPE on write, not kill the bench.
  ::signal(SIGPIPE, SIG_IGN);

  const int spawns = quick ? 5 : 20;
  const int spawn_warmup = quick ? 1 : 3;
  const int rtt_n = quick ? 200 : 2000;
  const int rtt_warmup = rtt_n / 10;
  const int blocks = 5;
  const auto tput_block = std::chrono::milliseconds(quick ? 200 : 1000);
  const auto tput_warmup = std::chrono::milliseconds(quick ? 100 : 500);

  Setup setup;
  setup.root = MakeTempDir("root");
  const std::string home = MakeTempDir("home");
  setup.log_dir = home;
  g_log_dir = home;
  // No user configuration, no inherited noise: PATH (for node) and a throwaway home.
  const char* path_env = std::getenv("PATH");
  setup.env = {std::string("PATH=") + (path_env != nullptr ? path_env : "/usr/bin:/bin"),
               "HOME=" + home, "TALARIA_HOME=" + home};
  size_t total_bytes = 0;
  for (int i = 0; i < kFileCount; ++i) {
    const std::filesystem::path path = std::filesystem::path(setup.root) / RelativePath(i);
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    const std::string text = MakeFileText(i);
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) Die("cannot write " + path.string());
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    setup.file_paths.push_back(path.string());
    setup.file_sizes.push_back(text.size());
    total_bytes += text.size();
  }
  std::fprintf(stderr,
               "# files read: %d distinct files under %s/docs (%zu bytes, %zu on average)\n",
               kFileCount, setup.root.c_str(), total_bytes, total_bytes / kFileCount);

  std::vector<Server> servers;
  servers.push_back({"talaria", {talaria_path, "mcp", "--root", setup.root}, "read_file"});
  const std::string reference_js =
      source_dir +
      "/tests/mcp_peers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js";
  bool have_reference = !talaria_only && ::access(reference_js.c_str(), R_OK) == 0;
  if (talaria_only) {
    std::fprintf(stderr, "# --talaria-only: the reference is not measured\n");
  } else if (!have_reference) {
    std::fprintf(
        stderr,
        "# the reference server is not installed (%s missing; run make deps or npm ci --prefix "
        "tests/mcp_peers): printing talaria's metrics only\n",
        reference_js.c_str());
  } else {
    servers.push_back({"reference", {"node", reference_js, setup.root}, "read_text_file"});
    // node itself may be missing: one probe spawn decides.
    std::string error;
    if (!ServerProcess::Start(servers.back().argv, setup.env, setup.root,
                              setup.log_dir + "/probe.log", &error)) {
      std::fprintf(stderr, "# %s: printing talaria's metrics only\n", error.c_str());
      servers.pop_back();
      have_reference = false;
    }
  }

  // Spawn to initialize, alternating between the servers.
  std::vector<std::vector<double>> spawn_ms(servers.size());
  for (int i = -spawn_warmup; i < spawns; ++i) {
    for (size_t s = 0; s < servers.size(); ++s) {
      const double ms = SpawnToInitializeMs(servers[s], setup);
      if (i >= 0) spawn_ms[s].push_back(ms);
    }
  }
  std::vector<double> spawn_median;
  for (size_t s = 0; s < servers.size(); ++s) {
    spawn_median.push_back(Median(spawn_ms[s]));
    PrintMetric("mcp_spawn_to_initialize_" + servers[s].label + "_ms", spawn_median[s], "ms");
  }
  if (have_reference)
    PrintMetric("mcp_spawn_to_initialize_ratio", spawn_median[1] / spawn_median[0], "x");

  std::vector<RoundTrips> rtt;
  for (const Server& server : servers) {
    rtt.push_back(MeasureRoundTrips(server, setup, rtt_warmup, rtt_n, blocks));
    PrintMetric("mcp_read_file_rtt_p50_" + server.label + "_us", rtt.back().p50_us, "us");
    PrintMetric("mcp_read_file_rtt_p99_" + server.label + "_us", rtt.back().p99_us, "us");
  }
  if (have_reference)
    PrintMetric("mcp_read_file_rtt_p50_ratio", rtt[1].p50_us / rtt[0].p50_us, "x");

  std::string tput_name = "mcp_calls_per_s_";
  tput_name += std::to_string(g_in_flight);
  tput_name += "_in_flight_";
  std::string rejected_name = "mcp_calls_rejected_";
  rejected_name += std::to_string(g_in_flight);
  rejected_name += "_in_flight_";
  std::string cpu_name = "mcp_cpu_us_per_call_";
  cpu_name += std::to_string(g_in_flight);
  cpu_name += "_in_flight_";
  std::vector<double> rate;
  for (const Server& server : servers) {
    const Throughput t = MeasureCallsPerSecond(server, setup, tput_warmup, tput_block, blocks);
    rate.push_back(t.calls_per_s);
    PrintMetric(tput_name + server.label, t.calls_per_s, "calls/s");
    PrintMetric(rejected_name + server.label, static_cast<double>(t.rejected), "calls");
    PrintMetric(cpu_name + "server_" + server.label, t.server_cpu_us_per_call, "us");
    PrintMetric(cpu_name + "client_" + server.label, t.client_cpu_us_per_call, "us");
    if (t.rejected > 0) {
      std::fprintf(stderr, "# %s refused %lld calls with only %d in flight, e.g. %s\n",
                   server.label.c_str(), t.rejected, g_in_flight, t.first_error.c_str());
    }
  }
  if (have_reference) {
    PrintMetric(tput_name + "ratio", rate[0] / rate[1], "x");
    const double spawn_ratio = spawn_median[1] / spawn_median[0];
    const double rate_ratio = rate[0] / rate[1];
    std::fprintf(stderr,
                 "# targets: spawn ratio %.1fx (>= 20: %s), calls/s ratio %.2fx (>= 3: %s)\n",
                 spawn_ratio, spawn_ratio >= 20 ? "met" : "MISSED", rate_ratio,
                 rate_ratio >= 3 ? "met" : "MISSED");
  }

  std::error_code ec;
  std::filesystem::remove_all(setup.root, ec);
  std::filesystem::remove_all(home, ec);
  return 0;
}
