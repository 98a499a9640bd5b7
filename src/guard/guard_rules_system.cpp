// The system: shutdown/reboot, kill -1, force-kills, service control, talaria killing itself,
// world-writable permissions, chown -R root, and package removal.
#include <cstdlib>

#include "guard/guard_internal.h"

namespace talaria::safety::guard {
namespace {

void Shutdown(Judge& judge) {
  judge.Add("system_shutdown", "shut down or reboot the system", GuardTier::kHardline);
}

// The first argument that is not an option (skipping the values of `with_arg` options).
const ShellWord* FirstOperand(const CommandView& v,
                              std::initializer_list<std::string_view> with_arg,
                              size_t* index = nullptr) {
  for (size_t i = 0; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    if (IsOption(t)) {
      for (std::string_view w : with_arg) {
        if (t == w) ++i;
      }
      continue;
    }
    if (index != nullptr) *index = i;
    return v.args[i];
  }
  return nullptr;
}

bool MentionsTalaria(std::string_view t) { return t.find("talaria") != std::string_view::npos; }

// kill: signal options, then pids; -1 as a pid (or a lone `kill -1`) means every process.
void JudgeKill(Judge& judge, const CommandView& v) {
  std::vector<std::string_view> operands;
  bool options_done = false;
  bool signal_seen = false;
  for (size_t i = 0; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    if (!options_done && t == "--") {
      options_done = true;
      continue;
    }
    if (!options_done && (t == "-s" || t == "-n" || t == "--signal")) {
      ++i;
      signal_seen = true;
      continue;
    }
    if (!options_done && (t == "-l" || t == "-L" || t == "--list" || t == "--table")) return;
    if (!options_done && !signal_seen && IsOption(t)) {
      signal_seen = true;  // -9, -KILL, -SIGTERM
      continue;
    }
    operands.push_back(t);
  }
  bool all = false;
  for (std::string_view op : operands) {
    if (op == "-1") all = true;
  }
  if (operands.empty() && !v.args.empty() && v.args[0]->text == "-1") all = true;
  if (all) {
    judge.Add("kill_all_processes", "kill every process (kill -1)", GuardTier::kHardline);
  }
  // kill $(pgrep talaria), kill `pidof talaria`
  if (v.script != nullptr && v.cmd != nullptr && !v.script->commands.empty()) {
    const int self = static_cast<int>(v.cmd - v.script->commands.data());
    for (const SimpleCommand& c : v.script->commands) {
      if (c.parent != self || c.argv.empty()) continue;
      const std::string_view name = Basename(c.argv[0].text);
      if (name != "pgrep" && name != "pidof" && name != "pkill") continue;
      for (const ShellWord& w : c.argv) {
        if (MentionsTalaria(w.text)) {
          judge.Add("self_termination", "stop talaria itself", GuardTier::kDangerous);
        }
      }
    }
  }
}

void JudgePkill(Judge& judge, const CommandView& v) {
  bool force = false;
  for (size_t i = 0; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    if (MentionsTalaria(t)) {
      judge.Add("self_termination", "stop talaria itself", GuardTier::kDangerous);
    }
    if (t == "-9" || t == "-KILL" || t == "-SIGKILL" || t == "--signal=KILL" || t == "--signal=9" ||
        t == "--signal=SIGKILL") {
      force = true;
    }
    if ((t == "-s" || t == "--signal") && i + 1 < v.args.size()) {
      const std::string_view s = v.args[i + 1]->text;
      if (s == "9" || s == "KILL" || s == "SIGKILL") force = true;
    }
    if (v.name == "killall" && (t == "-r" || t == "--regexp")) force = true;
  }
  if (force) {
    judge.Add("kill_processes_force", "force-kill processes by name (pkill -9, killall -9)",
              GuardTier::kDangerous);
  }
}

void JudgeSystemctl(Judge& judge, const CommandView& v) {
  const ShellWord* verb = FirstOperand(
      v, {"-H",         "--host",  "-M",          "--machine",  "-t",      "--type", "-p",
          "--property", "-s",      "--signal",    "-n",         "--lines", "-o",     "--output",
          "--root",     "--state", "--kill-whom", "--job-mode", "--what",  "--when"});
  if (verb == nullptr) return;
  const std::string_view t = verb->text;
  if (t == "poweroff" || t == "reboot" || t == "halt" || t == "kexec" || t == "soft-reboot") {
    Shutdown(judge);
  } else if (t == "stop" || t == "restart" || t == "disable" || t == "mask" || t == "kill" ||
             t == "isolate" || t == "try-restart" || t == "reload-or-restart" || t == "rescue" ||
             t == "emergency") {
    judge.Add("service_control", "stop, restart, disable or mask a system service",
              GuardTier::kDangerous);
  }
}

// chmod MODE: world-writable (o+w, a+w, 777, 666, ...).
void JudgeChmod(Judge& judge, const CommandView& v) {
  const ShellWord* mode = FirstOperand(v, {"--reference"});
  if (mode == nullptr) return;
  const std::string_view m = mode->text;
  bool world_writable = false;
  if (IsOctalMode(m)) {
    const long bits = std::strtol(std::string(m).c_str(), nullptr, 8);
    world_writable = (bits & 02) != 0;
  } else {
    ForEachModeAction(m, [&](std::string_view who, char op, std::string_view perms) {
      if (op != '-' && who.find_first_of("oa") != std::string_view::npos &&
          perms.find('w') != std::string_view::npos) {
        world_writable = true;
      }
    });
  }
  if (world_writable) {
    judge.Add("world_writable", "world-writable permissions (chmod 777, 666, o+w, a+w)",
              GuardTier::kDangerous);
  }
}

void JudgeChown(Judge& judge, const CommandView& v) {
  bool recursive = false;
  for (const ShellWord* w : v.args) {
    if (w->text == "--recursive" || ShortFlagsContain(w->text, 'R')) recursive = true;
  }
  const ShellWord* owner = FirstOperand(v, {"--reference", "--from"});
  if (!recursive || owner == nullptr) return;
  const std::string_view o = owner->text;
  if (o == "root" || o.starts_with("root:") || o.starts_with("root.") || o == "0" ||
      o.starts_with("0:") || o == ":root" || o == ":0") {
    judge.Add("chown_root_recursive", "recursive chown to root", GuardTier::kDangerous);
  }
}

// crontab: -l lists (allowed); -r removes every job; -e, a file operand, `-` or no operand at
// all (stdin) installs one (persistence: the commands run later, unattended).
void JudgeCrontab(Judge& judge, const CommandView& v) {
  bool list = false;
  bool remove = false;
  bool install = false;
  bool options_done = false;
  for (size_t i = 0; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    if (!options_done && t == "--") {
      options_done = true;
      continue;
    }
    if (!options_done && t.size() > 1 && t[0] == '-') {
      if (t == "-u" || t == "-n") {
        ++i;  // -u USER, cronie's -n HOST
        continue;
      }
      if (t.starts_with("-u")) continue;  // -uUSER
      for (size_t k = 1; k < t.size(); ++k) {
        if (t[k] == 'l') list = true;
        if (t[k] == 'r') remove = true;
        if (t[k] == 'e') install = true;
      }
      continue;
    }
    install = true;  // a file, or `-` for stdin
  }
  if (remove) {
    judge.Add("crontab_remove", "remove the user's crontab (every cron job)",
              GuardTier::kDangerous);
  }
  if (install || (!list && !remove)) {
    judge.Add("crontab_install", "install or edit a crontab (commands that run later)",
              GuardTier::kDangerous);
  }
}

void Uninstall(Judge& judge) {
  judge.Add("package_uninstall", "uninstall packages", GuardTier::kDangerous);
}

void JudgePackages(Judge& judge, const CommandView& v) {
  const std::string_view n = v.name;
  size_t vi = 0;
  const ShellWord* verb_word = FirstOperand(v, {}, &vi);
  const std::string_view verb = verb_word == nullptr ? std::string_view() : verb_word->text;
  auto has = [&](std::initializer_list<std::string_view> flags) {
    for (const ShellWord* w : v.args) {
      for (std::string_view f : flags) {
        if (w->text == f) return true;
      }
    }
    return false;
  };
  if (n == "npm") {
    if ((verb == "uninstall" || verb == "un" || verb == "remove" || verb == "rm" || verb == "r" ||
         verb == "unlink") &&
        has({"-g", "--global", "--location=global"})) {
      Uninstall(judge);
    }
  } else if (n == "pnpm") {
    if (verb == "remove" || verb == "rm" || verb == "uninstall" || verb == "un") Uninstall(judge);
  } else if (n == "yarn") {
    if (verb == "global" && vi + 1 < v.args.size() && v.args[vi + 1]->text == "remove") {
      Uninstall(judge);
    }
  } else if (n == "pip" || n.starts_with("pip3") || n == "pipx" || n == "uv" || n == "conda" ||
             n == "mamba" || n == "gem" || n == "cargo" || n == "brew" || n == "snap" ||
             n == "flatpak") {
    if (verb == "uninstall" || verb == "remove" || (n == "brew" && verb == "rm") ||
        (n == "uv" && verb == "pip" && vi + 1 < v.args.size() &&
         v.args[vi + 1]->text == "uninstall")) {
      Uninstall(judge);
    }
  } else if (n == "apt" || n == "apt-get" || n == "aptitude" || n == "dnf" || n == "yum" ||
             n == "zypper" || n == "apk") {
    if (verb == "remove" || verb == "purge" || verb == "autoremove" || verb == "erase" ||
        verb == "del" || verb == "rm") {
      Uninstall(judge);
    }
  } else if (n == "pacman" || n == "yay") {
    for (const ShellWord* w : v.args) {
      if (w->text == "--remove" || (w->text.size() > 1 && w->text[0] == '-' && w->text[1] == 'R')) {
        Uninstall(judge);
      }
    }
  } else if (n == "dpkg") {
    if (has({"-r", "-P", "--remove", "--purge"})) Uninstall(judge);
  } else if (n == "rpm") {
    if (has({"-e", "--erase"})) Uninstall(judge);
  }
}

}  // namespace

void JudgeSystemRules(Judge& judge, const CommandView& v) {
  const std::string_view n = v.name;
  if (n == "shutdown" || n == "reboot" || n == "halt" || n == "poweroff") {
    if (v.args.size() == 1 && (v.args[0]->text == "--help" || v.args[0]->text == "--version")) {
      return;
    }
    Shutdown(judge);
  } else if (n == "init" || n == "telinit") {
    for (const ShellWord* w : v.args) {
      if (w->text == "0" || w->text == "6") Shutdown(judge);
    }
  } else if (n == "systemctl") {
    JudgeSystemctl(judge, v);
  } else if (n == "loginctl") {
    const ShellWord* verb = FirstOperand(v, {"-H", "-M", "-p"});
    if (verb != nullptr &&
        (verb->text == "poweroff" || verb->text == "reboot" || verb->text == "halt")) {
      Shutdown(judge);
    }
  } else if (n == "service") {
    for (const ShellWord* w : v.args) {
      if (w->text == "stop" || w->text == "restart" || w->text == "--full-restart") {
        judge.Add("service_control", "stop, restart, disable or mask a system service",
                  GuardTier::kDangerous);
      }
    }
  } else if (n == "kill") {
    JudgeKill(judge, v);
  } else if (n == "pkill" || n == "killall" || n == "pgrep") {
    if (n != "pgrep") JudgePkill(judge, v);
  } else if (n == "chmod") {
    JudgeChmod(judge, v);
  } else if (n == "chown") {
    JudgeChown(judge, v);
  } else if (n == "crontab") {
    JudgeCrontab(judge, v);
  } else {
    JudgePackages(judge, v);
  }
}

}  // namespace talaria::safety::guard
