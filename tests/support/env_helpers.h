// Helpers the environment tests and benchmarks share: looking for processes on this machine
// (every backend's commands, sandboxed or reached over ssh to loopback, are processes here),
// draining a started process's output, and a scratch directory a sandbox can bind writable.
// Thread-safety: free functions; thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace talaria::test_support {

// Whether a process whose command line matches the extended regex `pattern` runs on this
// machine (`pgrep -f`). Write patterns that do not match their own text, e.g. "sleep 41[.]25"
// for `sleep 41.25`.
bool ProcessRunning(std::string_view pattern);

// Polls ProcessRunning until no process matches or `deadline` passes; true if none is left. A
// group just sent SIGKILL can take a moment to disappear from /proc.
bool NoProcessWithin(std::string_view pattern, std::chrono::milliseconds deadline);

// Reads the non-blocking descriptor `fd` until end of file (or EIO, a terminal whose other side
// closed), for up to ~5 s.
std::string ReadUntilEof(int fd);

// A writable directory that is neither under /tmp nor /var/tmp (inside a bubblewrap sandbox
// those are private tmpfs mounts, which would hide an escape instead of refusing it):
// `first_choice`, else $HOME, /var/cache or /opt. Empty if none is writable.
std::string HostDirOutsideTmp(std::string_view first_choice);

// A fresh directory `<HostDirOutsideTmp(first_choice)>/<prefix>-XXXXXX`, by its real path;
// empty when none can be made. The caller removes it.
std::string MakeScratchOutsideTmp(std::string_view first_choice, std::string_view prefix);

}  // namespace talaria::test_support
