// bubblewrap command lines: the mount layouts talaria's sandboxes use, built in one place (the
// terminal's bwrap environment and execute_code's interpreter both run behind these).
//
//   env::BwrapLayout layout;
//   layout.host = env::BwrapLayout::HostView::kSystemOnly;
//   layout.writable = {"/tmp/talaria-exec-x1"};
//   layout.chdir = "/tmp/talaria-exec-x1";
//   std::vector<std::string> argv = env::BwrapArgv(layout);   // ends with "--"
//   argv.push_back("/usr/bin/python3"); ...
//
// Thread-safety: free functions; ProbeBwrap spawns a process and caches nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "talaria/base/status.h"

namespace talaria::env {

struct BwrapLayout {
  enum class HostView : unsigned char {
    // The whole host file system read-only (a terminal needs the user's tools).
    kWholeHost,
    // Only /usr (with the merged-/usr links /bin, /lib, /lib64, /sbin) and the few /etc files the
    // dynamic loader and time zones need: no home directories, no $TALARIA_HOME, no /etc secrets.
    kSystemOnly,
  };
  std::string bwrap = "bwrap";  // the program (looked up in PATH)
  HostView host = HostView::kWholeHost;
  // Bound read-write at the same path (absolute directories that exist).
  std::vector<std::string> writable;
  bool network = false;
  // setsid inside: keeps the sandbox from injecting input into our terminal (TIOCSTI). Off only
  // for a command that needs its own pseudo-terminal as controlling terminal.
  bool new_session = true;
  // Working directory inside; empty: bwrap's default.
  std::string chdir;
  // Hidden inside: a directory is covered by an empty read-only tmpfs, a file by /dev/null.
  // Applied after the writable binds, so a writable directory that contains one does not show
  // it again. Each must exist (a missing one has nothing to hide).
  std::vector<std::string> hidden;
  // Size limit of the private /tmp in bytes; 0: none (a tmpfs then takes up to half of RAM).
  uint64_t tmp_size_bytes = 0;
  // --cap-drop ALL: no capability inside, not even in the sandbox's own user namespace (bwrap
  // run by root otherwise keeps most of them).
  bool drop_capabilities = false;
  // A descriptor the command inherits holding a compiled seccomp BPF program (--seccomp FD),
  // which bwrap loads just before it executes the command; -1: none.
  int seccomp_fd = -1;
  // A scratch directory: inside, `scratch_dir` (absolute) is a fresh tmpfs of at most
  // `scratch_size_bytes` (0: no limit) holding only `scratch_files` (host files beneath it,
  // bound read-only at the same paths). What the command writes there never reaches the host,
  // so it cannot fill the host's disk. Empty: none.
  std::string scratch_dir;
  uint64_t scratch_size_bytes = 0;
  std::vector<std::string> scratch_files;
};

// The bwrap argv for `layout`, up to and including the "--" that precedes the command. Always
// unshares every namespace (user, pid, ipc, uts, cgroup, and net unless `network`), mounts a
// fresh /dev, /proc and /tmp, and makes the sandbox die with its parent.
std::vector<std::string> BwrapArgv(const BwrapLayout& layout);

// Whether `bwrap` runs and can create its namespaces here. NotFound when the program is missing,
// FailedPrecondition (with bwrap's stderr) when namespaces are refused.
Status ProbeBwrap(const std::string& bwrap);

}  // namespace talaria::env
