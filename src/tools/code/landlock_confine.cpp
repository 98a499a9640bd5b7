#include "tools/code/landlock_confine.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <string_view>

#include "talaria/base/json.h"

namespace talaria::tools::code {
namespace {

// x86_64 syscall numbers and ABI constants; the program refuses other architectures (the seccomp
// filter kills a process whose arch does not match, so a mismatch fails closed).
constexpr std::string_view kConfine =
    R"py(import ctypes as _ct, os as _os, struct as _st, sys as _sys
def _confine(work_dir, seccomp_program):
    libc = _ct.CDLL(None, use_errno=True)
    libc.syscall.restype = _ct.c_long
    _U = _ct.c_ulong  # variadic arguments travel as full 64-bit words
    def fail(what):
        _sys.stderr.write("talaria: cannot confine the script (%s, errno %d)\n" % (what, _ct.get_errno()))
        _sys.stderr.flush()
        _os._exit(70)
    if _os.uname().machine != "x86_64":
        fail("landlock+seccomp confinement supports x86_64 only")
    if libc.prctl(_U(38), _U(1), _U(0), _U(0), _U(0)) != 0:  # PR_SET_NO_NEW_PRIVS
        fail("no_new_privs")
    # No capability, now or after an execve (root's are recomputed from the bounding set).
    for cap in range(64):
        libc.prctl(_U(24), _U(cap), _U(0), _U(0), _U(0))  # PR_CAPBSET_DROP: EPERM unprivileged, EINVAL past the last
    libc.prctl(_U(47), _U(4), _U(0), _U(0), _U(0))  # PR_CAP_AMBIENT, CLEAR_ALL
    header = _ct.create_string_buffer(_st.pack("<Ii", 0x20080522, 0), 8)  # _LINUX_CAPABILITY_VERSION_3
    caps = _ct.create_string_buffer(24)
    if libc.syscall(_U(126), header, caps) != 0:  # capset: nothing effective, permitted or inheritable
        fail("capset")
    abi = libc.syscall(_U(444), None, _U(0), _U(1))  # landlock_create_ruleset(VERSION)
    if abi < 1:
        fail("landlock unavailable")
    fs_all = (1 << 13) - 1
    if abi >= 2: fs_all |= 1 << 13   # REFER
    if abi >= 3: fs_all |= 1 << 14   # TRUNCATE
    if abi >= 5: fs_all |= 1 << 15   # IOCTL_DEV
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    attr = _st.pack("<QQQ", fs_all, 3 if abi >= 4 else 0, 3 if abi >= 6 else 0)[:size]
    buf = _ct.create_string_buffer(attr, size)
    ruleset = libc.syscall(_U(444), buf, _U(size), _U(0))
    if ruleset < 0:
        fail("landlock_create_ruleset")
    EXEC, WRITE, READ, READ_DIR = 1, 2, 4, 8
    file_only = EXEC | WRITE | READ | ((1 << 14) if abi >= 3 else 0) | ((1 << 15) if abi >= 5 else 0)
    rules = [("/usr", EXEC | READ | READ_DIR), ("/etc/ld.so.cache", READ), ("/etc/localtime", READ),
             ("/dev/null", READ | WRITE), ("/dev/urandom", READ), (work_dir, fs_all)]
    for d in ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"):
        rules.append((d, EXEC | READ | READ_DIR))
    for path, access in rules:
        try:
            fd = _os.open(path, _os.O_PATH | _os.O_CLOEXEC)
        except OSError:
            continue
        if not _os.path.isdir(path):
            access &= file_only
        rule = _ct.create_string_buffer(_st.pack("<Qi", access, fd), 12)
        rc = libc.syscall(_U(445), _U(ruleset), _U(1), rule, _U(0))
        _os.close(fd)
        if rc != 0:
            fail("landlock_add_rule " + path)
    if libc.syscall(_U(446), _U(ruleset), _U(0)) != 0:
        fail("landlock_restrict_self")
    _os.close(ruleset)
    # seccomp: the program compiled by libseccomp (seccomp_filter.h), when this machine has one.
    if seccomp_program:
        filt = _ct.create_string_buffer(seccomp_program, len(seccomp_program))
        class _Prog(_ct.Structure):
            _fields_ = [("len", _ct.c_ushort), ("filter", _ct.c_void_p)]
        fprog = _Prog(len(seccomp_program) // 8, _ct.cast(filt, _ct.c_void_p))
        if libc.prctl(_U(22), _U(2), _ct.byref(fprog), _U(0), _U(0)) != 0:  # PR_SET_SECCOMP, FILTER
            fail("seccomp")
)py";

}  // namespace

int LandlockAbi() {
#ifdef SYS_landlock_create_ruleset
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, 1U);
  return abi > 0 ? static_cast<int>(abi) : 0;
#else
  return 0;
#endif
}

std::string ConfineProgram(const std::string& work_dir, std::string_view seccomp_program) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(seccomp_program.size() * 2);
  for (const char c : seccomp_program) {
    const auto byte = static_cast<unsigned char>(c);
    hex += kHex[byte >> 4];
    hex += kHex[byte & 0xF];
  }
  std::string program(kConfine);
  program += "_confine(";
  program += JsonQuote(work_dir);  // a JSON string literal is a valid Python one
  program += ", bytes.fromhex(\"";
  program += hex;
  program += "\"))\ndel _confine, _ct, _st\n";
  return program;
}

}  // namespace talaria::tools::code
