#include "tools/code/landlock_confine.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <string_view>

#include "talaria/base/json.h"

namespace talaria::tools::code {
namespace {

// x86_64 syscall numbers and ABI constants; the program refuses other architectures (the seccomp
// filter kills a process whose arch does not match, so a mismatch fails closed).
constexpr std::string_view kConfine = R"py(import ctypes as _ct, os as _os, struct as _st, sys as _sys
def _confine(work_dir):
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
    # seccomp: classic BPF over struct seccomp_data {nr, arch, ip, args[6]}.
    ALLOW, DENY, KILL = 0x7FFF0000, 0x00050000 | 1, 0x80000000  # ERRNO(EPERM)
    denied = [42, 112, 109, 101, 425, 426, 427, 310, 311, 308, 272, 165, 166, 321, 248, 249, 250, 298, 134, 155]
    prog = []
    def ld(off): prog.append((0x20, 0, 0, off))
    def jeq(k, jt, jf): prog.append((0x15, jt, jf, k))
    def ret(k): prog.append((0x06, 0, 0, k))
    ld(4); jeq(0xC000003E, 1, 0); ret(KILL)
    ld(0)
    prog.append((0x35, 0, 0, 0x40000000))  # jge x32 bit: patched to DENY below
    x32 = len(prog) - 1
    for nr in denied:
        jeq(nr, 0, 0)
    first_denied = x32 + 1
    jeq(435, 0, 0)           # clone3: ENOSYS, so glibc uses clone (its flags are inspectable)
    clone3 = len(prog) - 1
    jeq(41, 0, 0)            # socket(): check family and type
    sock = len(prog) - 1
    ld(16); jeq(1, 0, 0)      # AF_UNIX only
    fam = len(prog) - 1
    ld(24); prog.append((0x54, 0, 0, 0xF)); jeq(1, 0, 0)  # SOCK_STREAM only
    typ = len(prog) - 1
    allow = len(prog); ret(ALLOW)
    deny = len(prog); ret(DENY)
    nosys = len(prog); ret(0x00050000 | 38)
    def patch(i, jt=None, jf=None):
        c, t, f, k = prog[i]
        prog[i] = (c, t if jt is None else jt - i - 1, f if jf is None else jf - i - 1, k)
    patch(x32, jt=deny, jf=x32 + 1)
    for i in range(first_denied, clone3):
        patch(i, jt=deny, jf=i + 1)
    patch(clone3, jt=nosys, jf=clone3 + 1)
    patch(sock, jt=sock + 1, jf=allow)
    patch(fam, jt=fam + 1, jf=deny)
    patch(typ, jt=allow, jf=deny)
    code = b"".join(_st.pack("<HBBI", *p) for p in prog)
    filt = _ct.create_string_buffer(code, len(code))
    class _Prog(_ct.Structure):
        _fields_ = [("len", _ct.c_ushort), ("filter", _ct.c_void_p)]
    fprog = _Prog(len(prog), _ct.cast(filt, _ct.c_void_p))
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

std::string ConfineProgram(const std::string& work_dir) {
  std::string program(kConfine);
  program += "_confine(";
  program += JsonQuote(work_dir);  // a JSON string literal is a valid Python one
  program += ")\ndel _confine, _ct, _st\n";
  return program;
}

}  // namespace talaria::tools::code
