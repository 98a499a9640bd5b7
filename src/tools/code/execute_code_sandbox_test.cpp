// execute_code's sandbox against a hostile script (issue 17, finding 10): a fork bomb, a /tmp
// flood, the syscalls that reach the kernel's attack surface, and the capabilities the script
// holds. Real python3 under real bwrap; every loop bounded and every run under a hard timeout.
#include <unistd.h>

#include "talaria/base/subprocess.h"
#include "tools/code/execute_code_test_util.h"
#include "tools/code/landlock_confine.h"

namespace talaria::tools::testing {
namespace {

// The process-limit part of the result's isolation note, or "" when the limit holds.
std::string ProcessLimitCaveat(const Json& r) {
  if (!r.contains("isolation_note")) return "";
  const std::string note = r["isolation_note"].get<std::string>();
  return note.find("process limit") == std::string::npos ? "" : note;
}

TEST_F(ExecuteCodeTest, ForkBombIsContained) {
  CodeExecutionOptions options;
  options.timeout = std::chrono::seconds(20);
  Enable(options);
  Json probe = Run("print(1)");
  ASSERT_EQ(probe["status"], "success") << last_.text;
  if (const std::string caveat = ProcessLimitCaveat(probe); !caveat.empty()) GTEST_SKIP() << caveat;

  // Children park in pause(); the parent forks until the kernel refuses (at most 1,000 times),
  // then kills and reaps them all.
  Json r = Run(R"py(
import errno, os, signal
pids, err = [], None
try:
    for _ in range(1000):
        pid = os.fork()
        if pid == 0:
            signal.pause()
            os._exit(0)
        pids.append(pid)
except OSError as e:
    err = errno.errorcode.get(e.errno, str(e.errno))
for pid in pids:
    os.kill(pid, signal.SIGKILL)
for pid in pids:
    os.waitpid(pid, 0)
print(len(pids), err)
)py");
  ASSERT_EQ(r["status"], "success") << last_.text;
  const std::string out = r["output"].get<std::string>();
  const int forked = std::atoi(out.c_str());
  EXPECT_NE(out.find(" EAGAIN"), std::string::npos) << out;
  EXPECT_LE(forked, static_cast<int>(CodeExecutionOptions{}.max_processes)) << out;
  EXPECT_LT(forked, 1000) << out;

  // The host still starts processes.
  SpawnOptions spawn;
  spawn.argv = {"/bin/true"};
  spawn.timeout = std::chrono::seconds(5);
  auto done = RunProcess(spawn);
  ASSERT_TRUE(done) << done.error().ToString();
  EXPECT_EQ(done->exit_code, 0);
}

TEST_F(ExecuteCodeTest, TmpFloodRunsOutOfSpace) {
  TALARIA_SKIP_WITHOUT_BWRAP();
  // 128 MiB, past the default 64 MiB limit, one 1 MiB write at a time; each file under
  // RLIMIT_FSIZE (256 MiB), so only the file system's size can stop it.
  Json r = Run(R"py(
import errno, os
written, err = 0, None
fd = os.open("/tmp/flood", os.O_WRONLY | os.O_CREAT, 0o600)
chunk = b"x" * (1 << 20)
try:
    for _ in range(128):
        os.write(fd, chunk)
        written += 1
except OSError as e:
    err = errno.errorcode.get(e.errno, str(e.errno))
os.close(fd)
os.unlink("/tmp/flood")
print(written, err)
)py");
  ASSERT_EQ(r["status"], "success") << last_.text;
  const std::string out = r["output"].get<std::string>();
  EXPECT_NE(out.find(" ENOSPC"), std::string::npos) << out;
  EXPECT_LE(std::atoi(out.c_str()), 64) << out;
}

// The working directory (the script's cwd, HOME and TMPDIR) was a read-write bind of a host
// directory under the host's /tmp: a flood there filled the host's disk. Inside it is a tmpfs
// of the same bounded size, and nothing written there reaches the host.
TEST_F(ExecuteCodeTest, WorkingDirectoryFloodStaysInsideAndRunsOutOfSpace) {
  TALARIA_SKIP_WITHOUT_BWRAP();
  Json r = Run(R"py(
import errno, os, tempfile
written, err = 0, None
with tempfile.NamedTemporaryFile(delete=False) as f:
    path = f.name
try:
    with open("flood", "wb") as out:
        for _ in range(128):
            out.write(b"x" * (1 << 20))
            out.flush()
            written += 1
except OSError as e:
    err = errno.errorcode.get(e.errno, str(e.errno))
print(written, err, os.getcwd(), os.path.dirname(path) == os.getcwd())
)py");
  ASSERT_EQ(r["status"], "success") << last_.text;
  const std::string out = r["output"].get<std::string>();
  EXPECT_NE(out.find(" ENOSPC "), std::string::npos) << out;
  EXPECT_LE(std::atoi(out.c_str()), 64) << out;
  // The host side of the working directory never saw the flood (it is gone with the call, and
  // while it ran the host's copy held only the script and its modules).
  const size_t cwd_at = out.find(' ', out.find(' ') + 1) + 1;
  const std::string cwd = out.substr(cwd_at, out.find(' ', cwd_at) - cwd_at);
  EXPECT_FALSE(std::filesystem::exists(cwd + "/flood")) << cwd;
}

// Each attempt prints "<name> <errno name>" (or "<name> ok"): every one is refused with EPERM,
// the script lives on (not SIGSYS) and can say so.
constexpr std::string_view kForbiddenSyscalls = R"py(
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def attempt(name, nr, *args):
    ctypes.set_errno(0)
    rc = libc.syscall(ctypes.c_long(nr), *[ctypes.c_ulong(a & 0xFFFFFFFFFFFFFFFF) if isinstance(a, int) else a for a in args])
    if rc == 0 and name.startswith("clone"):
        os._exit(0)  # the child of a clone that should not have happened
    if rc > 0 and name.startswith("clone"):
        os.waitpid(rc, 0)
    print(name, "ok" if rc >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno())))
attempt("mount", 165, b"none", b"/usr", b"tmpfs", 0, 0)
attempt("umount2", 166, b"/proc", 2)
attempt("pivot_root", 155, b"/tmp", b"/tmp")
attempt("unshare_user", 272, 0x10000000)
attempt("unshare_mount", 272, 0x00020000)
ns = os.open("/proc/self/ns/uts", os.O_RDONLY)
attempt("setns", 308, ns, 0)
attempt("clone_newuser", 56, 0x10000000 | 17, 0, 0, 0, 0)
attempt("ptrace", 101, 0, 0, 0, 0)
attempt("process_vm_readv", 310, os.getpid(), 0, 0, 0, 0, 0)
attempt("keyctl", 250, 0, -3, 1)
attempt("add_key", 248, b"user", b"talaria", b"x", 1, -2)
attempt("bpf", 321, 0, 0, 0)
attempt("perf_event_open", 298, 0, 0, -1, -1, 0)
attempt("userfaultfd", 323, 0)
attempt("open_by_handle_at", 304, 0, 0, 0)
attempt("init_module", 175, 0, 0, b"")
attempt("kexec_load", 246, 0, 0, 0, 0)
)py";
constexpr std::string_view kAllRefused =
    "mount EPERM\numount2 EPERM\npivot_root EPERM\nunshare_user EPERM\nunshare_mount EPERM\nsetns "
    "EPERM\n"
    "clone_newuser EPERM\nptrace EPERM\nprocess_vm_readv EPERM\nkeyctl EPERM\nadd_key EPERM\nbpf "
    "EPERM\n"
    "perf_event_open EPERM\nuserfaultfd EPERM\nopen_by_handle_at EPERM\ninit_module "
    "EPERM\nkexec_load EPERM\n";

TEST_F(ExecuteCodeTest, SeccompRefusesKernelAttackSurface) {
  TALARIA_SKIP_WITHOUT_BWRAP();
  Json r = Run(std::string(kForbiddenSyscalls));
  ASSERT_EQ(r["status"], "success") << last_.text;
  EXPECT_EQ(r["output"], kAllRefused) << last_.text;
  EXPECT_FALSE(r.contains("isolation_note")) << last_.text;
}

TEST_F(ExecuteCodeTest, LandlockFallbackLoadsTheSameFilterAndDropsCapabilities) {
  if (code::LandlockAbi() < 1) GTEST_SKIP() << "Landlock is not available on this kernel";
  CodeExecutionOptions options;
  options.sandbox = CodeSandbox::kLandlock;
  Enable(options);
  Json r = Run(std::string(kForbiddenSyscalls));
  ASSERT_EQ(r["status"], "success") << last_.text;
  EXPECT_EQ(r["isolation"], "landlock+seccomp");
  EXPECT_EQ(r["output"], kAllRefused) << last_.text;
  // Landlock hides /proc/self/status; ask the kernel directly. Unprivileged, the bounding set
  // cannot be emptied (no CAP_SETPCAP); no_new_privs then keeps an execve from gaining from it.
  r = Run(R"py(
import ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
header = ctypes.create_string_buffer(struct.pack("<Ii", 0x20080522, 0), 8)
data = ctypes.create_string_buffer(24)
print("capget", libc.syscall(ctypes.c_long(125), header, data), data.raw.hex())
print("bounding", sum(1 for cap in range(64) if libc.prctl(23, cap, 0, 0, 0) == 1))
print("no_new_privs", libc.prctl(39, 0, 0, 0, 0), "seccomp", libc.prctl(21, 0, 0, 0, 0))
)py");
  ASSERT_EQ(r["status"], "success") << last_.text;
  const std::string out = r["output"].get<std::string>();
  EXPECT_EQ(out.rfind("capget 0 " + std::string(48, '0') + "\n", 0), 0u) << out;
  if (::getuid() == 0) {
    EXPECT_NE(out.find("bounding 0\n"), std::string::npos) << out;
  }
  EXPECT_NE(out.find("no_new_privs 1 seccomp 2\n"), std::string::npos) << out;
}

TEST_F(ExecuteCodeTest, ScriptHoldsNoCapabilityAndCannotGainOne) {
  TALARIA_SKIP_WITHOUT_BWRAP();
  Json r = Run(R"py(
wanted = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp")
for line in open("/proc/self/status"):
    key, _, value = line.partition(":")
    if key in wanted:
        print(key, value.strip())
)py");
  ASSERT_EQ(r["status"], "success") << last_.text;
  EXPECT_EQ(r["output"],
            "CapInh 0000000000000000\nCapPrm 0000000000000000\nCapEff 0000000000000000\n"
            "CapBnd 0000000000000000\nCapAmb 0000000000000000\nNoNewPrivs 1\nSeccomp 2\n")
      << last_.text;
}

}  // namespace
}  // namespace talaria::tools::testing
