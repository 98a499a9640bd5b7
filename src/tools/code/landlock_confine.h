// The fallback isolation when bubblewrap is unusable: the interpreter confines itself before any
// user code runs — no_new_privs, a Landlock ruleset (read and execute /usr and the loader's
// files, read-write only the private working directory, no TCP bind/connect on kernels with
// Landlock ABI >= 4, no abstract unix sockets or signals outside on ABI >= 6), every capability
// dropped (bounding set included, so an execve by root regains none) and the seccomp filter of
// seccomp_filter.h's kLandlock profile (no sockets but unix stream ones, no connect, no new
// session or process group, no ptrace, namespaces, mounts, io_uring, bpf, keyrings, perf...).
// The restrictions are applied by Python's ctypes in the bootstrap, which runs before the
// script, and cannot be lifted after.
// Weaker than bwrap: stat() of paths is not mediated (a script can tell that ~/.ssh exists, not
// read it), and no PID or mount namespace.
// Thread-safety: pure functions (LandlockAbi makes one syscall).
#pragma once

#include <string>
#include <string_view>

namespace talaria::tools::code {

// The kernel's Landlock ABI version; 0 when Landlock is unavailable or disabled.
int LandlockAbi();

// Python source that confines the running interpreter as above, letting it write only
// `work_dir`, and loads `seccomp_program` (a compiled BPF program; empty: no seccomp filter);
// exits with status 70 and a message on stderr when it cannot (fail closed).
std::string ConfineProgram(const std::string& work_dir, std::string_view seccomp_program);

}  // namespace talaria::tools::code
