#include "tools/code/seccomp_filter.h"

#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <string_view>

#include "talaria/base/unique_fd.h"

namespace talaria::tools::code {
namespace {

// Refused with EPERM in every profile. Names, not SCMP_SYS numbers: a name this libseccomp
// does not know (a syscall newer than it) is skipped rather than failing the build.
constexpr std::string_view kRefused[] = {
    // Mounts and the new mount API, root changes.
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    // Other processes' memory and descriptors.
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    // Kernel keyrings.
    "keyctl",
    "add_key",
    "request_key",
    // Interfaces with a long record of local privilege escalations.
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "fanotify_init",
    // Namespaces (clone's flags are checked apart).
    "unshare",
    "setns",
    // The kernel itself.
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "syslog",
    "acct",
    "quotactl",
    "quotactl_fd",
    "lookup_dcookie",
    "uselib",
    "vhangup",
    "iopl",
    "ioperm",
    // Files by handle, past any path check.
    "open_by_handle_at",
    "name_to_handle_at",
};

// Refused too under Landlock, where no network namespace or new session stands in for them.
constexpr std::string_view kRefusedUnderLandlock[] = {"connect", "setsid", "setpgid"};

constexpr std::array<uint64_t, 7> kNamespaceFlags = {CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWUTS,
                                                     CLONE_NEWIPC, CLONE_NEWUSER,   CLONE_NEWPID,
                                                     CLONE_NEWNET};

struct FilterDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};
using Filter = std::unique_ptr<void, FilterDeleter>;

Status Check(int rc, std::string_view what) {
  if (rc == 0) return {};
  std::string message = "seccomp: ";
  message += what;
  message += ": ";
  message += std::strerror(-rc);
  return InternalError(std::move(message));
}

// Whether this kernel can run a seccomp filter at all (CONFIG_SECCOMP_FILTER).
Status CheckKernelSupport() {
  uint32_t action = SECCOMP_RET_ERRNO;
  if (::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0) return {};
  return UnavailableError(std::string("seccomp: this kernel has no seccomp filter support (") +
                          std::strerror(errno) + ")");
}

Result<std::string> Compile(SeccompProfile profile) {
  TALARIA_RETURN_IF_ERROR(CheckKernelSupport());
  Filter filter(seccomp_init(SCMP_ACT_ALLOW));
  if (!filter) return Err(InternalError("seccomp: seccomp_init failed"));
  void* ctx = filter.get();
  TALARIA_RETURN_IF_ERROR(Check(
      seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS), "bad-arch action"));
  const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
  const auto refuse = [&](std::string_view name) -> Status {
    const int nr = seccomp_syscall_resolve_name(std::string(name).c_str());
    if (nr == __NR_SCMP_ERROR) return {};  // unknown to this libseccomp
    return Check(seccomp_rule_add(ctx, eperm, nr, 0), name);
  };
  for (std::string_view name : kRefused) TALARIA_RETURN_IF_ERROR(refuse(name));
  for (uint64_t flag : kNamespaceFlags) {
    TALARIA_RETURN_IF_ERROR(Check(
        seccomp_rule_add(ctx, eperm, SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)),
        "clone"));
  }
  TALARIA_RETURN_IF_ERROR(
      Check(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0), "clone3"));
  if (profile == SeccompProfile::kLandlock) {
    for (std::string_view name : kRefusedUnderLandlock) TALARIA_RETURN_IF_ERROR(refuse(name));
    // socket(): AF_UNIX and SOCK_STREAM only (the low four bits of the type; the rest are flags).
    TALARIA_RETURN_IF_ERROR(
        Check(seccomp_rule_add(ctx, eperm, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX)),
              "socket family"));
    for (uint64_t type = 0; type < 16; ++type) {
      if (type == SOCK_STREAM) continue;
      TALARIA_RETURN_IF_ERROR(Check(
          seccomp_rule_add(ctx, eperm, SCMP_SYS(socket), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xF, type)),
          "socket type"));
    }
  }
  UniqueFd memfd(::memfd_create("talaria-seccomp", MFD_CLOEXEC));
  if (!memfd)
    return Err(InternalError(std::string("seccomp: memfd_create: ") + std::strerror(errno)));
  TALARIA_RETURN_IF_ERROR(Check(seccomp_export_bpf(ctx, memfd.get()), "export"));
  if (::lseek(memfd.get(), 0, SEEK_SET) != 0) {
    return Err(InternalError(std::string("seccomp: lseek: ") + std::strerror(errno)));
  }
  std::string program;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(memfd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return Err(
          InternalError(std::string("seccomp: reading the program: ") + std::strerror(errno)));
    if (n == 0) break;
    program.append(buf, static_cast<size_t>(n));
  }
  if (program.empty() || program.size() % 8 != 0) {
    return Err(InternalError("seccomp: libseccomp exported a malformed program"));
  }
  return program;
}

}  // namespace

Result<std::string> SeccompProgram(SeccompProfile profile) {
  static std::mutex mu;
  static std::array<std::string, 2> compiled;  // Guarded by mu.
  const auto index = static_cast<size_t>(profile);
  std::lock_guard lock(mu);
  if (compiled[index].empty()) compiled[index] = TALARIA_TRY(Compile(profile));
  return compiled[index];
}

}  // namespace talaria::tools::code
