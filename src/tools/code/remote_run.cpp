// RunRemoteScript (script_run.h): the host's end of a remote execute_code.
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include <nlohmann/json.hpp>

#include "talaria/base/child_exit.h"
#include "talaria/base/file_io.h"
#include "talaria/base/head_tail_buffer.h"
#include "talaria/base/poll_timeout.h"
#include "talaria/base/scoped_sigpipe_block.h"
#include "talaria/base/spawn.h"
#include "talaria/base/subprocess.h"
#include "tools/code/remote_channel.h"
#include "tools/code/rpc_frame.h"
#include "tools/code/script_run.h"

namespace talaria::tools::code {
namespace {

using Clock = std::chrono::steady_clock;

// Cancellation is looked at this often while nothing arrives.
constexpr std::chrono::milliseconds kSlice{50};
// After the kill on timeout or cancel: how long the channel gets to end.
constexpr std::chrono::milliseconds kRemoteKillGrace{500};
// What is kept of text on the channel that is no message (ssh's or the shell's own words).
constexpr size_t kMaxDiagnosticBytes = 4096;
// A line longer than this is no relay of ours talking: the channel is abandoned.
constexpr size_t kMaxLineBytes = 2 * kMaxFrameBytes;

}  // namespace

Result<ScriptRun> RunRemoteScript(env::Environment& environment, const RemoteScript& script) {
  // The channel may die under a write (the connection drops): EPIPE, never SIGPIPE.
  ScopedSigpipeBlock no_sigpipe;
  // Writes to the channel and the script's RPC socket wait for room until the deadline, and give
  // up on cancel too: a peer that stops reading must not hold a cancelled run until its deadline.
  WriteWait write_wait;
  write_wait.deadline = script.deadline;
  write_wait.stop = script.cancel;
  write_wait.slice = kSlice;
  const auto write_within = [&](int fd, std::string_view data) {
    return WriteAllUntil(fd, data, write_wait).ok();
  };
  StartOptions start;
  start.stdin_pipe = true;
  StartedProcess channel =
      TALARIA_TRY(environment.Start(RemoteRelayCommand(script.python), {}, start));
  // Our ends never block the loop: reads drain what is there, writes wait in poll.
  for (int fd : {channel.input.get(), script.rpc_fd}) {
    if (fd >= 0) (void)::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }

  HeadTailBuffer out(script.max_stdout_bytes);
  HeadTailBuffer err(script.max_stderr_bytes);
  std::string spill;
  std::string diagnostics;
  std::optional<int> exit_code;
  bool timed_out = false;
  bool cancelled = false;
  bool broken = false;  // the channel misbehaved (a write failed, an endless line)
  ChannelLineReader lines;
  FrameReader frames;

  const auto keep_diagnostic = [&](std::string_view text) {
    if (diagnostics.size() < kMaxDiagnosticBytes) {
      diagnostics.append(text.substr(0, kMaxDiagnosticBytes - diagnostics.size()));
      diagnostics.push_back('\n');
    }
  };
  const auto handle = [&](const Json& message) {
    if (auto it = message.find("stdout"); it != message.end() && it->is_string()) {
      const std::string& text = it->get_ref<const std::string&>();
      out.Append(text);
      if (spill.size() < script.max_spill_bytes)
        spill.append(text.substr(0, script.max_spill_bytes - spill.size()));
    } else if (auto e = message.find("stderr"); e != message.end() && e->is_string()) {
      err.Append(e->get_ref<const std::string&>());
    } else if (auto r = message.find("rpc"); r != message.end() && r->is_string()) {
      const std::string& frame = r->get_ref<const std::string&>();
      if (frame.size() > kMaxFrameBytes || !write_within(script.rpc_fd, EncodeFrame(frame))) {
        broken = true;
      }
    } else if (auto x = message.find("exit"); x != message.end() && x->is_number_integer()) {
      exit_code = x->get<int>();
    }
  };

  Json files = Json::object();
  for (const auto& [name, text] : script.files) files[name] = text;
  Json bundle = Json::object();
  bundle["files"] = std::move(files);
  bundle["program"] = script.program;
  broken = !write_within(channel.input.get(), EncodeChannelLine(bundle));

  bool output_open = true;
  bool exited = false;
  std::string incoming;
  while (!broken && !(exited && !output_open)) {
    const auto now = Clock::now();
    if (now >= script.deadline) {
      timed_out = true;
      break;
    }
    if (script.cancel.stop_requested()) {
      cancelled = true;
      break;
    }
    pollfd fds[3] = {{output_open ? channel.output.get() : -1, POLLIN, 0},
                     {script.rpc_fd, POLLIN, 0},
                     {exited ? -1 : channel.pidfd.get(), POLLIN, 0}};
    const int timeout =
        std::min(PollTimeoutMs(now, script.deadline), static_cast<int>(kSlice.count()));
    if (::poll(fds, 3, timeout) < 0 && errno != EINTR) {
      keep_diagnostic(std::string("execute_code: poll: ") + std::strerror(errno));
      break;  // the cleanup below still ends and reaps the channel
    }
    if (fds[0].revents != 0) {
      incoming.clear();
      output_open = ReadAvailable(channel.output.get(), incoming);
      lines.Feed(incoming);
      while (auto item = lines.Next()) {
        if (item->message) {
          handle(*item->message);
        } else {
          keep_diagnostic(item->noise);
        }
      }
      if (lines.pending() > kMaxLineBytes) broken = true;
    }
    if (fds[1].revents != 0) {  // the RpcServer's answers, to the remote interpreter
      incoming.clear();
      if (!ReadAvailable(script.rpc_fd, incoming)) broken = true;
      frames.Feed(incoming);
      for (;;) {
        auto frame = frames.Next();
        if (!frame) {
          broken = true;
          break;
        }
        if (!*frame) break;
        Json message = Json::object();
        message["rpc"] = std::move(**frame);
        if (!write_within(channel.input.get(), EncodeChannelLine(message))) broken = true;
      }
    }
    // Without a pidfd (old kernels) the channel's end shows as the end of its output.
    if (fds[2].revents != 0 || (!channel.pidfd.valid() && !output_open)) exited = true;
    if (exited && output_open && exit_code) break;  // a straggler holds the output: done anyway
  }
  if (std::string rest = lines.Rest(); !rest.empty()) keep_diagnostic(rest);
  // A write given up on (the peer stopped reading) says why: the caller's cancel or the deadline.
  if (broken && !exit_code && !timed_out && !cancelled) {
    cancelled = script.cancel.stop_requested();
    timed_out = !cancelled && Clock::now() >= script.deadline;
  }

  // Ends the channel whatever happened; on the remote side the relay then kills the
  // interpreter's process group (end of its stdin).
  channel.input.reset();
  TerminateProcessGroup(channel.pid, channel.pidfd.get(),
                        exited ? std::chrono::milliseconds(0) : kRemoteKillGrace);
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(channel.pid), &info, WEXITED) != 0 && errno == EINTR) {
  }

  ScriptRun run;
  run.stdout_total_bytes = out.total();
  run.stdout_text = std::move(out).Finish();
  run.stdout_spill = std::move(spill);
  run.timed_out = timed_out;
  run.cancelled = cancelled;
  if (timed_out) {
    run.exit_code = kExitCodeTimedOut;
  } else if (cancelled) {
    run.exit_code = kExitCodeCancelled;
  } else if (exit_code) {
    run.exit_code = *exit_code;
  } else {
    // The relay never reported an exit: the connection broke, or it could not start.
    run.exit_code = ShellExitCode(info) != 0 ? ShellExitCode(info) : 255;
    err.Append("[execute_code: the remote run ended without reporting an exit (channel status " +
               std::to_string(ShellExitCode(info)) + ")]\n");
  }
  if (!diagnostics.empty()) err.Append(diagnostics);
  run.stderr_text = std::move(err).Finish();
  return run;
}

}  // namespace talaria::tools::code
