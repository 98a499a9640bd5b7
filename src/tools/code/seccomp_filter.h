// The seccomp filter execute_code's interpreter runs under, compiled with libseccomp into a
// classic BPF program (the bytes of struct sock_filter[]): bwrap loads it with --seccomp FD just
// before it executes the interpreter, and the Landlock path's bootstrap loads it with
// prctl(PR_SET_SECCOMP) before the script's first line.
//
// Every profile refuses, with EPERM, the syscalls that reach kernel attack surface a script has
// no use for: mounts and the new mount API, pivot_root, chroot, ptrace, process_vm_readv/writev,
// kcmp, keyrings, bpf, perf_event_open, userfaultfd, io_uring, unshare, setns, clone with any
// CLONE_NEW* flag, kexec, module loading, open_by_handle_at, and the like. clone3 answers ENOSYS
// (its flags sit in memory a filter cannot read), so libc falls back to clone, whose flags it
// can. Any architecture but the native one (x86_64's x32 and i386 ABIs included) kills the
// process. kLandlock also refuses what a network namespace and a new session provide under
// bwrap: every socket but AF_UNIX stream ones, connect, setsid and setpgid.
// Thread-safety: thread-safe (each program is compiled once and cached).
#pragma once

#include <string>

#include "talaria/base/status.h"

namespace talaria::tools::code {

enum class SeccompProfile : unsigned char { kBwrap, kLandlock };

// The compiled program for `profile`. Errors: Unavailable when this kernel has no seccomp filter
// mode, Internal when libseccomp cannot build the filter (both with the reason).
Result<std::string> SeccompProgram(SeccompProfile profile);

}  // namespace talaria::tools::code
