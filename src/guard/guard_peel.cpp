// Wrapper peeling: sudo, env, exec, nohup, setsid, time, command, builtin, nice, timeout,
// stdbuf, ionice, chrt, taskset, chroot, xargs, busybox/toybox and friends run their operand
// as a command; the guard judges that command. Query-only forms (command -v, chrt -p,
// taskset -p, sudo -l) run nothing and stop the walk. Wrappers taking a command *string*
// (su -c, flock -c, watch, ssh host CMD, script -c) have it parsed and judged here.
#include <initializer_list>

#include "guard/guard_internal.h"

namespace talaria::safety::guard {
namespace {

using Args = std::vector<const ShellWord*>;

bool InList(std::string_view s, std::initializer_list<std::string_view> list) {
  for (std::string_view x : list) {
    if (s == x) return true;
  }
  return false;
}

// Index of the first operand after options. `short_with_arg` lists short options taking a
// value (attached or next word); `long_with_arg` long ones (with '=' or next word).
// `stop_at_numeric` treats "-5"-style words as operands (not used by most tools).
size_t SkipOptions(const Args& a, size_t i, std::string_view short_with_arg,
                   std::initializer_list<std::string_view> long_with_arg) {
  while (i < a.size()) {
    const std::string_view t = a[i]->text;
    if (t == "--") return i + 1;
    if (!IsOption(t)) return i;
    if (t.starts_with("--")) {
      const std::string_view name = t.substr(0, t.find('='));
      if (t.find('=') == std::string_view::npos && InList(name, long_with_arg)) ++i;
      ++i;
      continue;
    }
    bool takes_next = false;
    for (size_t k = 1; k < t.size(); ++k) {
      if (short_with_arg.find(t[k]) != std::string_view::npos) {
        takes_next = k + 1 == t.size();
        break;
      }
    }
    i += takes_next ? 2 : 1;
  }
  return i;
}

// Makes a[k] the command and a[k+1..] its arguments. False when there is no a[k].
bool ShiftTo(CommandView& v, size_t k) {
  if (k >= v.args.size()) return false;
  v.name_word = v.args[k];
  v.name = Basename(v.args[k]->text);
  v.args.erase(v.args.begin(), v.args.begin() + static_cast<std::ptrdiff_t>(k + 1));
  return true;
}

std::string Join(const Args& a, size_t from) {
  std::string out;
  for (size_t i = from; i < a.size(); ++i) {
    if (!out.empty()) out += ' ';
    out += a[i]->text;
  }
  return out;
}

void CheckContainerEnv(Judge& judge, std::string_view assignment) {
  if (assignment.starts_with("DOCKER_HOST=") || assignment.starts_with("CONTAINER_HOST=")) {
    judge.Add("container_remote_host", "container engine pointed at another host or context",
              GuardTier::kDangerous);
  }
}

bool IsAssignmentWord(std::string_view t) {
  const size_t eq = t.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  for (size_t i = 0; i < eq; ++i) {
    const char c = t[i];
    const bool ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// sudo, doas, run0
int PeelSudo(Judge& judge, CommandView& v, int depth) {
  Args& a = v.args;
  size_t i = 0;
  bool shell = false;
  while (i < a.size()) {
    const std::string_view t = a[i]->text;
    if (t == "--") {
      ++i;
      break;
    }
    if (!IsOption(t)) break;
    if (t.starts_with("--")) {
      const std::string_view name = t.substr(0, t.find('='));
      if (name == "--stdin" || name == "--askpass" || name == "--shell" || name == "--login") {
        judge.Add("sudo_flags", "sudo reading a password from stdin or running a shell",
                  GuardTier::kDangerous);
        if (name == "--shell" || name == "--login") shell = true;
      }
      if (name == "--list" || name == "--validate" || name == "--version" || name == "--help" ||
          name == "--reset-timestamp" || name == "--remove-timestamp") {
        return -1;
      }
      if (name == "--edit") {
        for (size_t k = i + 1; k < a.size(); ++k) CheckWriteTarget(judge, *a[k]);
        return -1;
      }
      if (t.find('=') == std::string_view::npos &&
          InList(name, {"--user", "--group", "--host", "--prompt", "--role", "--type",
                        "--close-from", "--chdir", "--other-user", "--command-timeout"})) {
        ++i;
      }
      ++i;
      continue;
    }
    bool takes_next = false;
    for (size_t k = 1; k < t.size(); ++k) {
      const char c = t[k];
      if (c == 'S' || c == 'A' || c == 's' || c == 'i' || c == 'a') {
        judge.Add("sudo_flags", "sudo reading a password from stdin or running a shell",
                  GuardTier::kDangerous);
        if (c == 's' || c == 'i') shell = true;
      }
      if (c == 'l' || c == 'v' || c == 'V' || c == 'k' || c == 'K' || c == 'h') {
        if (c != 'h' || k + 1 == t.size()) {
          if (c == 'k' && i + 1 < a.size()) continue;  // sudo -k CMD runs CMD
          return -1;
        }
      }
      if (c == 'e') {
        for (size_t m = i + 1; m < a.size(); ++m) CheckWriteTarget(judge, *a[m]);
        return -1;
      }
      if (std::string_view("ugCDprtTUc").find(c) != std::string_view::npos) {
        takes_next = k + 1 == t.size();
        break;
      }
    }
    i += takes_next ? 2 : 1;
  }
  if (shell && i < a.size()) {
    judge.JudgeScript(Join(a, i), depth + 1);
    return -1;
  }
  return ShiftTo(v, i) ? 1 : -1;
}

// env
int PeelEnv(Judge& judge, CommandView& v, int depth) {
  Args& a = v.args;
  size_t i = 0;
  while (i < a.size()) {
    const std::string_view t = a[i]->text;
    if (t == "--") {
      ++i;
      break;
    }
    if (t == "-" || t == "-i" || t == "--ignore-environment" || t == "-0" || t == "--null" ||
        t == "-v" || t == "--debug" || t.starts_with("--unset=") || t.starts_with("--chdir=") ||
        t.starts_with("--default-signal") || t.starts_with("--ignore-signal") ||
        t.starts_with("--block-signal")) {
      ++i;
      continue;
    }
    if (t == "-u" || t == "--unset" || t == "-C" || t == "--chdir") {
      i += 2;
      continue;
    }
    if ((t.starts_with("-u") || t.starts_with("-C")) && t.size() > 2) {
      ++i;
      continue;
    }
    if (t == "-S" || t == "--split-string" || t.starts_with("--split-string=") ||
        (t.starts_with("-S") && t.size() > 2) ||
        (t.size() > 2 && t[0] == '-' && t[1] != '-' && t.find('S') != std::string_view::npos)) {
      std::string payload;
      size_t next = i + 1;
      if (t.starts_with("--split-string=")) {
        payload = std::string(t.substr(15));
      } else if (t == "-S" || t == "--split-string") {
        if (i + 1 < a.size()) payload = a[i + 1]->text;
        next = i + 2;
      } else {
        payload = std::string(t.substr(t.find('S') + 1));
        if (payload.empty() && i + 1 < a.size()) {
          payload = a[i + 1]->text;
          next = i + 2;
        }
      }
      const std::string rest = Join(a, next);
      if (!rest.empty()) payload += " " + rest;
      judge.JudgeScript(payload, depth + 1);
      return -1;
    }
    if (IsAssignmentWord(t)) {
      CheckContainerEnv(judge, t);
      JudgeEnvAssignment(judge, t, depth);
      ++i;
      continue;
    }
    if (IsOption(t)) {
      ++i;
      continue;
    }
    break;
  }
  return ShiftTo(v, i) ? 1 : -1;
}

// exec
int PeelExec(Judge& /*judge*/, CommandView& v, int /*depth*/) {
  Args& a = v.args;
  return ShiftTo(v, SkipOptions(a, 0, "a", {})) ? 1 : -1;
}

// nohup, setsid, builtin, unbuffer, catchsegv, fakeroot, torsocks, eatmydata: options take no
// value, the operand after them runs.
int PeelAfterOptions(Judge& /*judge*/, CommandView& v, int /*depth*/) {
  Args& a = v.args;
  return ShiftTo(v, SkipOptions(a, 0, "", {})) ? 1 : -1;
}

// command
int PeelCommand(Judge& /*judge*/, CommandView& v, int /*depth*/) {
  Args& a = v.args;
  for (const ShellWord* w : a) {
    if (!IsOption(w->text)) break;
    if (ShortFlagsContain(w->text, 'v') || ShortFlagsContain(w->text, 'V')) return -1;
  }
  return ShiftTo(v, SkipOptions(a, 0, "", {})) ? 1 : -1;
}

// time
int PeelTime(Judge& judge, CommandView& v, int /*depth*/) {
  Args& a = v.args;
  const size_t i = SkipOptions(a, 0, "fo", {"--format", "--output"});
  for (size_t k = 0; k + 1 < a.size() && k < i; ++k) {
    if (a[k]->text == "-o" || a[k]->text == "--output") CheckWriteTarget(judge, *a[k + 1]);
  }
  return ShiftTo(v, i) ? 1 : -1;
}

// nice
int PeelNice(Judge& /*judge*/, CommandView& v, int /*depth*/) {
  Args& a = v.args;
  size_t i = 0;
  while (i < a.size()) {
    const std::string_view t = a[i]->text;
    if (t == "--") {
      ++i;
      break;
    }
    if (t == "-n" || t == "--adjustment") {
      i += 2;
    } else if (IsOption(t)) {
      ++i;  // -n5, -5, -+5, --adjustment=5
    } else {
      break;
    }
  }
  return ShiftTo(v, i) ? 1 : -1;
}

// timeout
int PeelTimeout(Judge& /*judge*/, CommandView& v, int /*depth*/) {
  Args& a = v.args;
  const size_t i = SkipOptions(a, 0, "ks", {"--kill-after", "--signal"});
  return ShiftTo(v, i + 1) ? 1 : -1;  // skip DURATION
}

// stdbuf
int PeelStdbuf(Judge& /*judge*/, CommandView& v, int /*depth*/) {
  Args& a = v.args;
  return ShiftTo(v, SkipOptions(a, 0, "ioe", {"--input", "--output", "--error"})) ? 1 : -1;
}

// ionice
int PeelIonice(Judge& /*judge*/, CommandView& v, int /*depth*/) {
  Args& a = v.args;
  for (const ShellWord* w : a) {
    if (!IsOption(w->text)) break;
    if (ShortFlagsContain(w->text, 'p') || ShortFlagsContain(w->text, 'P') ||
        ShortFlagsContain(w->text, 'u') || w->text.starts_with("--pid") ||
        w->text.starts_with("--pgid") || w->text.starts_with("--uid")) {
      return -1;
    }
  }
  return ShiftTo(v, SkipOptions(a, 0, "cn", {"--class", "--classdata"})) ? 1 : -1;
}

// chrt
int PeelChrt(Judge& /*judge*/, CommandView& v, int /*depth*/) {
  Args& a = v.args;
  for (const ShellWord* w : a) {
    if (!IsOption(w->text)) break;
    if (ShortFlagsContain(w->text, 'p') || ShortFlagsContain(w->text, 'm') || w->text == "--pid" ||
        w->text == "--max") {
      return -1;
    }
  }
  const size_t i =
      SkipOptions(a, 0, "TPD", {"--sched-runtime", "--sched-period", "--sched-deadline"});
  return ShiftTo(v, i + 1) ? 1 : -1;  // skip PRIORITY
}

// taskset
int PeelTaskset(Judge& /*judge*/, CommandView& v, int /*depth*/) {
  Args& a = v.args;
  for (const ShellWord* w : a) {
    if (!IsOption(w->text)) break;
    if (ShortFlagsContain(w->text, 'p') || w->text == "--pid") return -1;
  }
  const size_t i = SkipOptions(a, 0, "", {});
  return ShiftTo(v, i + 1) ? 1 : -1;  // skip MASK / CPU list
}

// chroot
int PeelChroot(Judge& /*judge*/, CommandView& v, int /*depth*/) {
  Args& a = v.args;
  const size_t i = SkipOptions(a, 0, "", {"--userspec", "--groups"});
  return ShiftTo(v, i + 1) ? 1 : -1;  // skip NEWROOT
}

// busybox, toybox
int PeelBusybox(Judge& /*judge*/, CommandView& v, int /*depth*/) {
  Args& a = v.args;
  if (!a.empty() && IsOption(a[0]->text)) return -1;
  return ShiftTo(v, 0) ? 1 : -1;
}

// xargs
int PeelXargs(Judge& /*judge*/, CommandView& v, int /*depth*/) {
  Args& a = v.args;
  size_t i = 0;
  while (i < a.size()) {
    const std::string_view t = a[i]->text;
    if (t == "--") {
      ++i;
      break;
    }
    if (!IsOption(t)) break;
    if (t.starts_with("--")) {
      if (t.find('=') == std::string_view::npos &&
          InList(t, {"--arg-file", "--delimiter", "--eof", "--replace", "--max-lines", "--max-args",
                     "--max-procs", "--max-chars", "--process-slot-var"})) {
        ++i;
      }
      ++i;
      continue;
    }
    const char c = t[1];
    if (std::string_view("adELnPsI").find(c) != std::string_view::npos && t.size() == 2) {
      i += 2;
    } else {
      ++i;  // flags, or -n1 / -I{} / -i / -l / -e forms with attached values
    }
  }
  if (!ShiftTo(v, i)) return -1;  // xargs alone runs echo
  v.stdin_is_data = true;
  v.via = "xargs";
  return 1;
}

// proxychains, proxychains4
int PeelProxychains(Judge& /*judge*/, CommandView& v, int /*depth*/) {
  Args& a = v.args;
  return ShiftTo(v, SkipOptions(a, 0, "f", {})) ? 1 : -1;
}

// strace, ltrace
int PeelStrace(Judge& /*judge*/, CommandView& v, int /*depth*/) {
  Args& a = v.args;
  for (const ShellWord* w : a) {
    if (w->text == "-p") return -1;
  }
  return ShiftTo(v, SkipOptions(a, 0, "abeEIoOpPsSuUX", {"--output", "--trace"})) ? 1 : -1;
}

// systemd-run
int PeelSystemdRun(Judge& /*judge*/, CommandView& v, int /*depth*/) {
  Args& a = v.args;
  return ShiftTo(v, SkipOptions(a, 0, "upEMHs",
                                {"--unit", "--property", "--setenv", "--machine", "--host",
                                 "--description", "--slice", "--uid", "--gid",
                                 "--working-directory", "--on-calendar", "--on-active"}))
             ? 1
             : -1;
}

// nsenter
int PeelNsenter(Judge& /*judge*/, CommandView& v, int /*depth*/) {
  Args& a = v.args;
  return ShiftTo(v, SkipOptions(a, 0, "tSGwR", {"--target", "--setuid", "--setgid"})) ? 1 : -1;
}

// unshare
int PeelUnshare(Judge& /*judge*/, CommandView& v, int /*depth*/) {
  Args& a = v.args;
  return ShiftTo(v, SkipOptions(
                        a, 0, "SGRw",
                        {"--propagation", "--setgroups", "--setuid", "--setgid", "--root", "--wd"}))
             ? 1
             : -1;
}

// faketime
int PeelFaketime(Judge& /*judge*/, CommandView& v, int /*depth*/) {
  Args& a = v.args;
  return ShiftTo(v, SkipOptions(a, 0, "f", {}) + 1) ? 1 : -1;
}

// su, runuser, sg
int PeelSu(Judge& judge, CommandView& v, int depth) {
  const std::string_view n = v.name;
  Args& a = v.args;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string_view t = a[i]->text;
    if ((t == "-c" || t == "--command" || t == "--session-command") && i + 1 < a.size()) {
      judge.JudgeScript(a[i + 1]->text, depth + 1);
      return -1;
    }
    if (t.starts_with("--command=")) {
      judge.JudgeScript(t.substr(10), depth + 1);
      return -1;
    }
  }
  if (n == "sg" && a.size() >= 2) {  // sg GROUP CMD...
    judge.JudgeScript(Join(a, 1), depth + 1);
  }
  return -1;
}

// flock
int PeelFlock(Judge& judge, CommandView& v, int depth) {
  Args& a = v.args;
  size_t i = SkipOptions(a, 0, "wE", {"--timeout", "--conflict-exit-code"});
  if (i >= a.size()) return -1;
  ++i;  // the lock file
  if (i < a.size() && (a[i]->text == "-c" || a[i]->text == "--command")) {
    if (i + 1 < a.size()) judge.JudgeScript(a[i + 1]->text, depth + 1);
    return -1;
  }
  for (size_t k = 0; k + 1 < a.size(); ++k) {
    if (a[k]->text == "-c" || a[k]->text == "--command") {
      judge.JudgeScript(a[k + 1]->text, depth + 1);
      return -1;
    }
  }
  return ShiftTo(v, i) ? 1 : -1;
}

// watch
int PeelWatch(Judge& judge, CommandView& v, int depth) {
  Args& a = v.args;
  bool exec = false;
  for (const ShellWord* w : a) {
    if (!IsOption(w->text)) break;
    if (w->text == "-x" || w->text == "--exec") exec = true;
  }
  const size_t i = SkipOptions(a, 0, "nq", {"--interval", "--equexit"});
  if (exec) return ShiftTo(v, i) ? 1 : -1;
  if (i < a.size()) judge.JudgeScript(Join(a, i), depth + 1);
  return -1;
}

// script
int PeelScript(Judge& judge, CommandView& v, int depth) {
  Args& a = v.args;
  // script -c CMD, --command=CMD, and -c inside a flag cluster (-qc CMD, -qcCMD).
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string_view t = a[i]->text;
    if (t.starts_with("--command=")) {
      judge.JudgeScript(t.substr(10), depth + 1);
    } else if (t == "--command" && i + 1 < a.size()) {
      judge.JudgeScript(a[++i]->text, depth + 1);
    } else if (t.size() > 1 && t[0] == '-' && t[1] != '-') {
      for (size_t k = 1; k < t.size(); ++k) {
        if (t[k] == 'c') {
          if (k + 1 < t.size()) {
            judge.JudgeScript(t.substr(k + 1), depth + 1);
          } else if (i + 1 < a.size()) {
            judge.JudgeScript(a[++i]->text, depth + 1);
          }
          break;
        }
        if (std::string_view("TIOBEm").find(t[k]) != std::string_view::npos) {
          if (k + 1 == t.size()) ++i;
          break;
        }
      }
    }
  }
  return -1;
}

// ssh
int PeelSsh(Judge& judge, CommandView& v, int depth) {
  Args& a = v.args;
  // -R: a port of this machine (often its sshd) opened to the remote host, a way back in.
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string_view t = a[i]->text;
    if (!IsOption(t)) break;  // the host; what follows is the remote command
    std::string key;
    if (i + 1 < a.size() && t == "-o") {
      key = a[i + 1]->text.substr(0, a[i + 1]->text.find_first_of("= "));
      for (char& c : key) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    bool remote_forward = key == "remoteforward";
    for (size_t k = 1; k < t.size() && !t.starts_with("--"); ++k) {
      if (t[k] == 'R') remote_forward = true;
      if (std::string_view("bcDEeFIiJLlmOopPQSWw").find(t[k]) != std::string_view::npos) break;
    }
    if (remote_forward) {
      judge.Add("ssh_remote_forward", "ssh opening a local port to the remote host (-R)",
                GuardTier::kDangerous);
      break;
    }
    if (t.size() == 2 &&
        std::string_view("bcDEeFIiJLlmOoPpQRSWw").find(t[1]) != std::string_view::npos) {
      ++i;  // its value
    }
  }
  for (size_t i = 0; i + 1 < a.size(); ++i) {
    if (a[i]->text != "-o") continue;
    const std::string& o = a[i + 1]->text;
    const size_t eq = o.find_first_of("= ");
    std::string key = o.substr(0, eq);
    for (char& c : key) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if ((key == "proxycommand" || key == "localcommand" || key == "knownhostscommand") &&
        eq != std::string::npos) {
      judge.Add("program_flag", "tool option that runs another program", GuardTier::kDangerous);
      judge.JudgeScript(o.substr(eq + 1), depth + 1);
    }
  }
  size_t i = SkipOptions(a, 0, "bcDEeFIiJLlmOoPpQRSWw", {});
  if (i >= a.size()) return -1;
  ++i;  // the host
  if (i < a.size()) judge.JudgeScript(Join(a, i), depth + 1);
  return -1;
}

// Each wrapper program and how it is peeled (what PeelOnce returns).
using PeelFn = int (*)(Judge& judge, CommandView& v, int depth);
struct Peeler {
  std::string_view name;
  PeelFn peel;
};
constexpr Peeler kPeelers[] = {
    {"sudo", PeelSudo},
    {"doas", PeelSudo},
    {"run0", PeelSudo},
    {"env", PeelEnv},
    {"exec", PeelExec},
    {"nohup", PeelAfterOptions},
    {"builtin", PeelAfterOptions},
    {"unbuffer", PeelAfterOptions},
    {"catchsegv", PeelAfterOptions},
    {"fakeroot", PeelAfterOptions},
    {"torsocks", PeelAfterOptions},
    {"eatmydata", PeelAfterOptions},
    {"setsid", PeelAfterOptions},
    {"command", PeelCommand},
    {"time", PeelTime},
    {"nice", PeelNice},
    {"timeout", PeelTimeout},
    {"stdbuf", PeelStdbuf},
    {"ionice", PeelIonice},
    {"chrt", PeelChrt},
    {"taskset", PeelTaskset},
    {"chroot", PeelChroot},
    {"busybox", PeelBusybox},
    {"toybox", PeelBusybox},
    {"xargs", PeelXargs},
    {"proxychains", PeelProxychains},
    {"proxychains4", PeelProxychains},
    {"strace", PeelStrace},
    {"ltrace", PeelStrace},
    {"systemd-run", PeelSystemdRun},
    {"nsenter", PeelNsenter},
    {"unshare", PeelUnshare},
    {"faketime", PeelFaketime},
    {"su", PeelSu},
    {"runuser", PeelSu},
    {"sg", PeelSu},
    {"flock", PeelFlock},
    {"watch", PeelWatch},
    {"script", PeelScript},
    {"ssh", PeelSsh},
};

// Returns: 1 peeled (continue), 0 not a wrapper (stop peeling, judge view), -1 nothing to
// judge (query-only, or the payload was judged here).
int PeelOnce(Judge& judge, CommandView& v, int depth) {
  for (const Peeler& p : kPeelers) {
    if (p.name == v.name) return p.peel(judge, v, depth);
  }
  return 0;
}

}  // namespace

bool PeelWrappers(Judge& judge, CommandView& view, int depth) {
  for (int round = 0; round < 64; ++round) {
    if (view.name_word == nullptr || !view.name_word->IsLiteral()) return true;
    if ((ProgramTraits(view.name) & kTraitWrapper) == 0) return true;
    const int r = PeelOnce(judge, view, depth);
    if (r < 0) return false;
    if (r == 0) return true;
  }
  judge.Add("payload_too_deep", "command payloads nested too deeply", GuardTier::kDangerous);
  return false;
}

}  // namespace talaria::safety::guard
