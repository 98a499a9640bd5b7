#include "sandboxes/remote_jobs.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <utility>

#include "sandboxes/api_http.h"
#include "talaria/base/base64.h"
#include "talaria/base/file_io.h"
#include "talaria/base/shell_words.h"
#include "talaria/base/subprocess.h"
#include "talaria/base/unique_fd.h"
#include "talaria/base/utf8.h"
#include "talaria/env/remote_shell.h"

namespace talaria::sandboxes {
namespace {

using std::chrono::milliseconds;

// Output bytes fetched per poll (before base64).
constexpr size_t kChunk = size_t{256} * 1024;
// The pause between polls while a job prints nothing grows to this.
constexpr milliseconds kMaxIdle{500};
// Polls that fail in a row before the relay gives the job up (exit 255).
constexpr int kMaxPollFailures = 5;
// Input bytes forwarded per call: its base64 stays well inside one argument's 128 KiB limit.
constexpr size_t kInputChunk = size_t{48} * 1024;

// Runs in the sandbox with $1 the job's script, $2 the state dir, $3 the job id, $4 "1" when
// the job reads input. Records its pid (alive: the job has not reported yet) and the group to
// end (its own, made by setsid; else only the job's pid, "p<pid>"), runs the job with its output
// to bg-<id>.out, then writes the status to bg-<id>.exit (renamed into place: a reader sees it
// whole). It ignores SIGTERM once the job runs (a TERM to the group ends the job, and this shell
// still writes the status); the job itself does not inherit that.
// Input: the job reads the FIFO bg-<id>.in, which a keeper (a sleep, pid in bg-<id>.keep) holds
// open for reading and writing, so that a writer's open never blocks and the job sees end of
// file only when the keeper goes (its input closed) or the job ends. The keeper is recorded
// before the group is (what the launch waits for), so the first write finds it.
constexpr std::string_view kWrapper = R"sh(s=$1 d=$2 i=$3 w=$4
echo $$ > "$d/bg-$i.run"
k=
if [ "$w" = 1 ] && mkfifo -m 600 "$d/bg-$i.in" 2>/dev/null; then
  sleep 2147483647 7<>"$d/bg-$i.in" > /dev/null 2>&1 &
  k=$!
  echo "$k" > "$d/bg-$i.keep"
fi
g=
if read -r _ _ _ _ g _ 2>/dev/null < /proc/$$/stat && [ "$g" = "$$" ]; then echo "$g" > "$d/bg-$i.pgid"; fi
if [ -n "$k" ]; then
  bash --noprofile --norc -c "$s" > "$d/bg-$i.out" 2>&1 < "$d/bg-$i.in" &
else
  bash --noprofile --norc -c "$s" > "$d/bg-$i.out" 2>&1 < /dev/null &
fi
j=$!
trap '' TERM
[ -s "$d/bg-$i.pgid" ] || echo "p$j" > "$d/bg-$i.pgid"
wait "$j"
echo $? > "$d/bg-$i.exit.tmp" && mv -f -- "$d/bg-$i.exit.tmp" "$d/bg-$i.exit"
[ -z "$k" ] || kill "$k" 2>/dev/null
)sh";

// The launch: the wrapper detached (its own session where setsid exists) with no descriptor of
// the exec call's, then waits (5 s at most) until it has recorded what to end.
std::string LaunchScript(const std::string& dir, const std::string& id, const std::string& cwd,
                         std::string_view command, bool input) {
  const std::string job = env::RemoteShellBackgroundCommandLine(dir, cwd, command);
  const std::string d = ShellQuote(dir);
  const std::string i = ShellQuote(id);
  return "d=" + d + " i=" + i +
         "\n"
         "if command -v setsid >/dev/null 2>&1; then s=setsid; else s=; fi\n"
         "( $s bash --noprofile --norc -c " +
         ShellQuote(kWrapper) + " talaria " + ShellQuote(job) + " " + d + " " + i +
         (input ? " 1" : " 0") +
         " > /dev/null 2>&1 < /dev/null & )\n"
         "n=0\n"
         "while [ ! -s \"$d/bg-$i.pgid\" ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n+1)); done\n"
         "[ -s \"$d/bg-$i.pgid\" ] && echo talaria-job-started\n";
}

// The local stand-in: copies the relayed output (fd 3) to its own, then exits with the status
// the relay left in the file $1 (removing it).
constexpr std::string_view kStandIn =
    "cat <&3; exec 3<&-; c=$(cat -- \"$1\" 2>/dev/null); rm -f -- \"$1\"; exit \"${c:-1}\"";

// One poll: the first line "exit=<status>", "running" or "lost" (the wrapper died without a
// status: killed), then the output from byte `offset` on, base64 on one line. The state is read
// before the output, so after "exit=" the output read is complete.
std::string PollScript(const std::string& dir, const std::string& id, uint64_t offset) {
  return "d=" + ShellQuote(dir) + " i=" + ShellQuote(id) +
         "\n"
         "if [ -e \"$d/bg-$i.exit\" ]; then read -r c < \"$d/bg-$i.exit\"; echo \"exit=$c\"\n"
         "elif read -r p 2>/dev/null < \"$d/bg-$i.run\" && kill -0 \"$p\" 2>/dev/null; then "
         "echo running\n"
         "elif [ -e \"$d/bg-$i.exit\" ]; then read -r c < \"$d/bg-$i.exit\"; echo \"exit=$c\"\n"
         "else echo lost; fi\n"
         "tail -c +" +
         std::to_string(offset + 1) + " -- \"$d/bg-$i.out\" 2>/dev/null | head -c " +
         std::to_string(kChunk) + " | base64 | tr -d '\\n'\n";
}

// TERM to the job's process group (or pid), KILL after 2 s if anything of it is left.
std::string KillScript(const std::string& dir, const std::string& id) {
  return "d=" + ShellQuote(dir) + " i=" + ShellQuote(id) +
         "\n"
         "read -r g 2>/dev/null < \"$d/bg-$i.pgid\" || exit 0\n"
         "case $g in p[0-9]*) t=${g#p} ;; [0-9]*) t=-$g ;; *) exit 0 ;; esac\n"
         "[ -e \"$d/bg-$i.exit\" ] && exit 0\n"
         "kill -TERM -- \"$t\" 2>/dev/null\n"
         "n=0\n"
         "while kill -0 -- \"$t\" 2>/dev/null && [ ! -e \"$d/bg-$i.exit\" ] && [ $n -lt 20 ]; do\n"
         "  sleep 0.1; n=$((n+1))\n"
         "done\n"
         "[ -e \"$d/bg-$i.exit\" ] || kill -KILL -- \"$t\" 2>/dev/null\n"
         "exit 0\n";
}

// Appends `data` to the job's input FIFO. Exit 3: the job has ended or its input is closed;
// 124: it did not take the bytes within 20 s (where `timeout` exists; otherwise the call's own
// deadline ends the wait).
std::string WriteInputScript(const std::string& dir, const std::string& id, std::string_view data) {
  return "d=" + ShellQuote(dir) + " i=" + ShellQuote(id) +
         "\n"
         "[ -e \"$d/bg-$i.exit\" ] && exit 3\n"
         "read -r k 2>/dev/null < \"$d/bg-$i.keep\" && kill -0 \"$k\" 2>/dev/null || exit 3\n"
         "if command -v timeout >/dev/null 2>&1; then t='timeout 20'; else t=; fi\n"
         "printf %s " +
         ShellQuote(Base64Encode(data)) +
         " | base64 -d | $t sh -c 'exec cat > \"$1\"' talaria \"$d/bg-$i.in\"\n";
}

// Closes the job's input: the keeper goes, and the job reads end of file.
std::string CloseInputScript(const std::string& dir, const std::string& id) {
  return "d=" + ShellQuote(dir) + " i=" + ShellQuote(id) +
         "\n"
         "read -r k 2>/dev/null < \"$d/bg-$i.keep\" && kill \"$k\" 2>/dev/null\n"
         "exit 0\n";
}

// The services take JSON text: a script that is not UTF-8 travels as base64 (as Run's do).
std::string Transportable(std::string script) {
  if (IsValidUtf8(script)) return script;
  return "exec bash -c \"$(printf %s " + ShellQuote(Base64Encode(script)) + " | base64 -d)\"";
}

struct PollAnswer {
  std::optional<int> exit_code;  // set once the job has ended (or was lost)
  std::string output;
};

std::optional<PollAnswer> ParsePoll(const std::string& text) {
  const size_t nl = text.find('\n');
  const std::string state = text.substr(0, nl);
  std::string b64 = nl == std::string::npos ? std::string() : text.substr(nl + 1);
  while (!b64.empty() && (b64.back() == '\n' || b64.back() == '\r')) b64.pop_back();
  PollAnswer answer;
  if (state.rfind("exit=", 0) == 0) {
    const std::string digits = state.substr(5);
    if (digits.empty() || digits.size() > 3 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
    answer.exit_code = std::stoi(digits);
  } else if (state == "lost") {
    answer.exit_code = 128 + 9;  // as a shell reports a SIGKILLed child
  } else if (state != "running") {
    return std::nullopt;
  }
  if (!b64.empty()) {
    auto bytes = Base64Decode(b64);
    if (!bytes) return std::nullopt;
    answer.output = std::move(*bytes);
  }
  return answer;
}

struct RelayWake {
  bool stand_in_gone = false;  // the stand-in's end of the socket closed
  bool input_ready = false;    // the input pipe has bytes or its end of file
};

// Waits up to `wait` for the stand-in's end of the socket to go (it never writes: readable
// means closed) or, when `input` is open, for input to forward.
RelayWake WaitForRelay(int sink, int input, milliseconds wait) {
  pollfd p[2] = {{sink, POLLIN | POLLRDHUP, 0}, {input, POLLIN, 0}};
  const int n = ::poll(p, input >= 0 ? 2 : 1, static_cast<int>(wait.count()));
  RelayWake wake;
  if (n <= 0) return wake;
  wake.stand_in_gone = (p[0].revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) != 0;
  wake.input_ready = input >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
  return wake;
}

bool StandInGone(int fd, milliseconds wait) { return WaitForRelay(fd, -1, wait).stand_in_gone; }

}  // namespace

RemoteJobs::RemoteJobs(SandboxApi& api, std::string state_dir)
    : api_(api), state_dir_(std::move(state_dir)) {}

RemoteJobs::~RemoteJobs() {
  std::vector<std::jthread> relays;
  {
    std::lock_guard lock(mu_);
    relays.swap(relays_);
  }
  for (std::jthread& t : relays) t.request_stop();
  relays.clear();  // joins; each relay ends its job in the sandbox first
}

Result<StartedProcess> RemoteJobs::Start(std::string_view command, const std::string& cwd,
                                         const StartOptions& start) {
  const std::string id = "r" + std::to_string(++next_id_) + "-" + NewUuid().substr(0, 8);
  ExecCall launch;
  launch.exec_id = NewUuid();
  launch.script = Transportable(LaunchScript(state_dir_, id, cwd, command, start.stdin_pipe));
  launch.timeout = milliseconds(30'000);
  const ExecAnswer launched = TALARIA_TRY(api_.Exec(launch, {}));
  if (launched.output.find("talaria-job-started") == std::string::npos) {
    return Err(UnavailableError(
        std::string(api_.kind()) +
        ": the sandbox did not start the background command: " + launched.output.substr(0, 200)));
  }

  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    KillRemote(id);
    return Err(InternalError(std::string("socketpair: ") + std::strerror(errno)));
  }
  UniqueFd ours(fds[0]);
  UniqueFd theirs(fds[1]);
  // Where the relay leaves the exit status for the stand-in (which removes it).
  const char* tmp = std::getenv("TMPDIR");
  std::string code_path =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/talaria-job-XXXXXX";
  const int code_fd = ::mkstemp(code_path.data());
  if (code_fd < 0) {
    KillRemote(id);
    return Err(InternalError("mkstemp " + code_path + ": " + std::strerror(errno)));
  }
  ::close(code_fd);
  // Input: the caller writes a pipe whose other end the relay forwards to the job (the
  // stand-in gets none: it never reads).
  UniqueFd input_read;
  UniqueFd input_write;
  if (start.stdin_pipe) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
      ::unlink(code_path.c_str());
      KillRemote(id);
      return Err(InternalError(std::string("pipe: ") + std::strerror(errno)));
    }
    input_read.reset(p[0]);
    input_write.reset(p[1]);
    ::fcntl(p[1], F_SETFL, ::fcntl(p[1], F_GETFL) & ~O_NONBLOCK);
  }

  SpawnOptions spawn;
  spawn.argv = {"/bin/sh", "-c", std::string(kStandIn), "talaria-remote-job", code_path};
  spawn.inherit_fd = theirs.get();
  StartOptions stand_in = start;
  stand_in.stdin_pipe = false;
  auto process = StartProcess(spawn, stand_in);
  if (!process) {
    ::unlink(code_path.c_str());
    KillRemote(id);
    return Err(process.error());
  }
  theirs.reset();  // the stand-in holds it now: its exit closes the socket
  if (input_write) process->input = std::move(input_write);
  std::lock_guard lock(mu_);
  relays_.emplace_back([this, id, code_path, sink = std::move(ours),
                        input = std::move(input_read)](const std::stop_token& stop) mutable {
    Relay(stop, id, sink.get(), std::move(input), code_path);
  });
  return std::move(*process);
}

void RemoteJobs::Relay(const std::stop_token& stop, const std::string& id, int sink, UniqueFd input,
                       const std::string& code_path) {
  uint64_t offset = 0;
  milliseconds idle{25};
  int failures = 0;
  std::optional<int> exit_code;
  while (!stop.stop_requested()) {
    const RelayWake wake = WaitForRelay(sink, input ? input.get() : -1, idle);
    if (wake.stand_in_gone) break;  // killed locally: end the job below
    if (wake.input_ready && !ForwardInput(stop, id, input)) {
      // The job's input is closed: the caller's next write finds the pipe closed.
      input.reset();
    }
    if (wake.input_ready) idle = milliseconds(25);  // an answer to the input is likely
    ExecCall poll;
    poll.exec_id = NewUuid();
    poll.script = PollScript(state_dir_, id, offset);
    poll.timeout = milliseconds(30'000);
    auto answer = api_.Exec(poll, stop);
    std::optional<PollAnswer> parsed;
    if (answer) parsed = ParsePoll(answer->output);
    if (!parsed) {
      if (stop.stop_requested()) break;
      if (++failures >= kMaxPollFailures) {
        exit_code = 255;  // the sandbox stopped answering: the job is given up
        break;
      }
      idle = kMaxIdle;
      continue;
    }
    failures = 0;
    if (!parsed->output.empty()) {
      WriteWait wait;
      wait.stop = stop;
      wait.socket = true;
      if (!WriteAllUntil(sink, parsed->output, wait).ok()) break;  // the stand-in is gone
      offset += parsed->output.size();
    }
    if (parsed->exit_code && parsed->output.size() < kChunk) {
      exit_code = parsed->exit_code;
      break;
    }
    // More output waiting: at once; nothing new: a growing pause.
    idle = parsed->output.empty() ? std::min(idle * 2, kMaxIdle) : milliseconds(0);
  }
  if (!exit_code) {
    // Stopped (the environment closes) or the stand-in was killed: the job goes too.
    KillRemote(id);
    exit_code = 128 + 15;
  }
  // The status first, then the end of the output: the stand-in reads it after `cat` ends (a
  // killed stand-in reads nothing: the file is removed here).
  if (StandInGone(sink, milliseconds(0))) {
    ::unlink(code_path.c_str());
  } else {
    (void)WriteFileAtomic(code_path, std::to_string(*exit_code) + "\n");
  }
  ::shutdown(sink, SHUT_RDWR);
}

bool RemoteJobs::ForwardInput(const std::stop_token& stop, const std::string& id,
                              const UniqueFd& input) {
  std::string chunk(kInputChunk, '\0');
  const ssize_t n = ::read(input.get(), chunk.data(), chunk.size());
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
  ExecCall call;
  call.exec_id = NewUuid();
  call.timeout = milliseconds(30'000);
  if (n <= 0) {  // end of file: the caller closed the job's input
    call.script = CloseInputScript(state_dir_, id);
    (void)api_.Exec(call, stop);
    return false;
  }
  chunk.resize(static_cast<size_t>(n));
  call.script = WriteInputScript(state_dir_, id, chunk);
  auto answer = api_.Exec(call, stop);
  // Not retried: the job may have taken part of it. A job that ended or does not read gets no
  // more input, and the caller learns so from its next write.
  return answer && answer->exit_code == 0;
}

void RemoteJobs::KillRemote(const std::string& id) {
  ExecCall kill;
  kill.exec_id = NewUuid();
  kill.script = KillScript(state_dir_, id);
  kill.timeout = milliseconds(30'000);
  (void)api_.Exec(kill, {});
}

}  // namespace talaria::sandboxes
