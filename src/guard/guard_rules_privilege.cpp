// Privilege changes and persistence through services: setuid/setgid bits and file
// capabilities, uid-0 or privileged-group accounts, firewall flushes and SELinux off,
// containers given the host (/ or system directories mounted, --privileged, host
// namespaces, the docker socket), and services or user units enabled to start on their own.
#include <array>
#include <string>

#include "guard/guard_internal.h"
#include "talaria/confinement/path_rules.h"

namespace talaria::safety::guard {
namespace {

void Privilege(Judge& judge, std::string_view rule, std::string_view description) {
  judge.Add(rule, description, GuardTier::kDangerous);
}

// chmod u+s, g+s, +s, 4755, 2755, 06755 (and install -m of such a mode).
bool ModeSetsId(std::string_view m) {
  if (IsOctalMode(m)) {
    if (m.size() < 4) return false;
    const char special = m[m.size() - 4];
    return special == '2' || special == '4' || special == '6' || special == '3' || special == '5' ||
           special == '7';
  }
  bool sets_id = false;
  ForEachModeAction(m, [&](std::string_view, char op, std::string_view perms) {
    if (op != '-' && perms.find('s') != std::string_view::npos) sets_id = true;
  });
  return sets_id;
}

constexpr std::array<std::string_view, 14> kPrivilegedGroups = {
    "root",    "0",    "sudo",   "wheel", "admin",           "adm",   "docker", "lxd",
    "libvirt", "disk", "shadow", "kvm",   "systemd-journal", "podman"};

bool NamesPrivilegedGroup(std::string_view list) {
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string_view::npos) end = list.size();
    if (OneOf(list.substr(start, end - start), kPrivilegedGroups)) return true;
    start = end + 1;
  }
  return false;
}

void JudgeAccount(Judge& judge, const CommandView& v) {
  bool bad = false;
  for (size_t i = 0; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    const std::string_view next =
        i + 1 < v.args.size() ? std::string_view(v.args[i + 1]->text) : "";
    const size_t eq = t.find('=');
    const std::string_view key = t.substr(0, eq);
    const std::string_view val = eq == std::string_view::npos ? next : t.substr(eq + 1);
    if (t == "-o" || t == "--non-unique") bad = true;
    if ((key == "-u" || key == "--uid" || key == "-g" || key == "--gid") &&
        (val == "0" || val == "root")) {
      bad = true;
    }
    if ((key == "-G" || key == "--groups" || key == "-aG" || key == "-Ga") &&
        NamesPrivilegedGroup(val)) {
      bad = true;
    }
  }
  // adduser USER GROUP, gpasswd -a USER GROUP: the last operand is the group.
  if ((v.name == "adduser" || v.name == "gpasswd" || v.name == "addgroup") && v.args.size() >= 2 &&
      NamesPrivilegedGroup(v.args.back()->text)) {
    bad = true;
  }
  if (bad) Privilege(judge, "privileged_account", "account given uid 0 or a privileged group");
}

bool IsNoLoginShell(std::string_view shell) {
  const std::string_view b = Basename(shell);
  return b == "nologin" || b == "false";
}

// Accounts created or opened up. A new account that can log in is a way back in (persistence);
// a password set or deleted, an account unlocked or unexpired, a login shell or group membership
// given, a uid or primary group changed: access granted. A system account with a nologin
// shell, comments, locking and moving homes are not. (uid 0 and privileged groups:
// privileged_account.)
void JudgeAccountAccess(Judge& judge, const CommandView& v) {
  const std::string_view n = v.name;
  auto access = [&] {
    Privilege(judge, "account_access",
              "account given a password, login shell, unlock or group membership");
  };
  static constexpr std::array<std::string_view, 9> kUsermodHarmless = {
      "-c", "--comment", "-L", "--lock", "-d", "--home", "-m", "--move-home", "-P"};
  static constexpr std::array<std::string_view, 13> kAdduserFlags = {
      "--system",       "--disabled-login",   "--disabled-password", "--quiet",
      "--debug",        "--force-badname",    "--no-create-home",    "--group",
      "--encrypt-home", "--add_extra_groups", "--add-extra-groups",  "--allow-badname",
      "--verbose"};
  bool query = false;
  bool system = false;
  int shell_nologin = -1;  // -1: no shell given
  bool password = false;
  bool defaults = false;
  bool grant = false;  // usermod/gpasswd/passwd/chage options that open the account up
  size_t operands = 0;
  for (size_t i = 0; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    if (!IsOption(t)) {
      ++operands;
      continue;
    }
    const size_t eq = t.find('=');
    const bool is_long = t.starts_with("--");
    const std::string_view key = is_long ? t.substr(0, eq) : t.substr(0, 2);
    // The value: --opt=V, -sV, or the next word.
    std::string_view val;
    bool next_is_value = false;
    if (is_long && eq != std::string_view::npos) {
      val = t.substr(eq + 1);
    } else if (!is_long && t.size() > 2) {
      val = t.substr(2);
    } else if (i + 1 < v.args.size()) {
      val = v.args[i + 1]->text;
      next_is_value = !IsOption(val);
    }
    if (key == "--help" || key == "-h" || key == "--version" || key == "-V") query = true;
    if (key == "-s" || key == "--shell") shell_nologin = IsNoLoginShell(val) ? 1 : 0;
    if (n == "useradd" || n == "adduser" || n == "newusers") {
      if (key == "-p" || key == "--password") password = true;
      if (key == "-D" || key == "--defaults") defaults = true;
      if (key == "--system" || key == "-r") system = true;
      // adduser takes long options with a separate value; keep operands counted right.
      if (n == "adduser" && is_long && eq == std::string_view::npos && next_is_value &&
          !OneOf(key, kAdduserFlags)) {
        ++i;
      }
    } else if (n == "usermod") {
      const bool nologin_shell = (key == "-s" || key == "--shell") && IsNoLoginShell(val);
      if (!OneOf(key, kUsermodHarmless) && !nologin_shell) grant = true;
    } else if (n == "gpasswd") {
      grant = grant || key == "-a" || key == "--add" || key == "-M" || key == "--members" ||
              key == "-A" || key == "--administrators";
    } else if (n == "passwd") {
      grant = grant || key == "-d" || key == "--delete" || key == "-u" || key == "--unlock" ||
              key == "--stdin";
    } else if (n == "chage") {
      if (key == "-l" || key == "--list") query = true;
      grant = true;
    }
  }
  if (query) return;
  if (n == "chpasswd") {
    access();
  } else if (n == "useradd" || n == "newusers" || (n == "adduser" && operands <= 1)) {
    if (defaults && n == "useradd") return;
    // adduser --system gets a nologin shell unless told otherwise.
    const bool no_login = shell_nologin == 1 || (shell_nologin == -1 && system && n == "adduser");
    if (n == "newusers" || !no_login || password) {
      Privilege(judge, "account_create", "user account created that can log in");
    }
  } else if (n == "adduser") {
    access();  // adduser USER GROUP
  } else if (grant) {
    access();
  }
}

void JudgeFirewall(Judge& judge, const CommandView& v) {
  const std::string_view n = v.name;
  bool off = false;
  if (n.starts_with("iptables") || n.starts_with("ip6tables") || n == "ebtables" ||
      n == "arptables") {
    for (size_t i = 0; i < v.args.size(); ++i) {
      const std::string_view t = v.args[i]->text;
      if (t == "-F" || t == "--flush" || t == "-X" || t == "--delete-chain") off = true;
      if ((t == "-P" || t == "--policy") && i + 2 < v.args.size() &&
          v.args[i + 2]->text == "ACCEPT") {
        off = true;
      }
    }
  } else if (n == "nft") {
    for (size_t i = 0; i + 1 < v.args.size(); ++i) {
      const std::string_view t = v.args[i]->text;
      const std::string_view next = v.args[i + 1]->text;
      if ((t == "flush" || t == "delete") &&
          (next == "ruleset" || next == "table" || next == "chain")) {
        off = true;
      }
    }
    for (const ShellWord* w : v.args) {
      if (w->text.find("flush ruleset") != std::string::npos) off = true;
    }
  } else if (n == "ufw") {
    for (size_t i = 0; i < v.args.size(); ++i) {
      const std::string_view t = v.args[i]->text;
      if (t == "disable" || t == "reset") off = true;
      if (t == "default" && i + 1 < v.args.size() && v.args[i + 1]->text == "allow") off = true;
    }
  } else if (n == "firewall-cmd") {
    for (const ShellWord* w : v.args) {
      if (w->text == "--set-default-zone=trusted" || w->text == "--panic-off" ||
          w->text.starts_with("--set-target=ACCEPT")) {
        off = true;
      }
    }
  } else if (n == "setenforce") {
    off = !v.args.empty() && (v.args[0]->text == "0" || v.args[0]->text == "Permissive" ||
                              v.args[0]->text == "permissive");
  } else if (n == "aa-teardown" || n == "aa-disable") {
    off = true;
  }
  if (off) Privilege(judge, "firewall_disable", "firewall or mandatory access control turned off");
}

// A bind-mount source that hands the container the host: /, a system directory, the home
// directory or a credential store, the container engine's socket.
bool HostSource(Judge& judge, std::string_view src) {
  if (src.empty() || (src[0] != '/' && src[0] != '~' && !src.starts_with("$HOME"))) return false;
  const ResolvedPath p = judge.ResolveText(src, src[0] == '~' ? kWordTilde : 0);
  if (p.abs.empty()) return false;
  if (p.abs.ends_with("docker.sock") || p.abs.ends_with("podman.sock") ||
      p.abs.ends_with("containerd.sock")) {
    return true;
  }
  const auto comps = internal::NormalizedComponents(p.abs);
  if (comps.empty()) return true;  // /
  static constexpr std::array<std::string_view, 13> kHostDirs = {
      "etc", "root", "boot", "dev", "proc", "sys", "usr",
      "var", "bin",  "sbin", "lib", "run",  "home"};
  if (comps.size() == 1 && OneOf(std::string_view(comps[0]), kHostDirs)) return true;
  if (p.in_home && p.home_rest.empty()) return true;
  return IsCredentialPath(judge, p);
}

void JudgeContainerRun(Judge& judge, const CommandView& v) {
  size_t i = 0;
  while (i < v.args.size() && IsOption(v.args[i]->text)) ++i;  // global options (approximately)
  if (i >= v.args.size()) return;
  std::string_view sub = v.args[i]->text;
  if (sub == "container" && i + 1 < v.args.size()) sub = v.args[++i]->text;
  if (sub != "run" && sub != "create" && sub != "exec") return;
  bool bad = false;
  for (size_t k = i + 1; k < v.args.size(); ++k) {
    const std::string_view t = v.args[k]->text;
    if (!IsOption(t)) {
      if (sub != "exec") break;  // the image: what follows is the container's command
      continue;
    }
    const size_t eq = t.find('=');
    const std::string_view key = t.substr(0, eq);
    const bool attached = eq != std::string_view::npos;
    const std::string_view val =
        attached ? t.substr(eq + 1)
                 : (k + 1 < v.args.size() ? std::string_view(v.args[k + 1]->text) : "");
    if (key == "--privileged") {
      bad = true;
      continue;
    }
    if (key == "--pid" || key == "--ipc" || key == "--userns" || key == "--uts" ||
        key == "--cgroupns" || key == "--network" || key == "--net") {
      // --network=host: the host's interfaces, its loopback services and the cloud
      // metadata endpoint without the container's network isolation.
      bad = bad || val == "host";
    } else if (key == "-v" || key == "--volume") {
      bad = bad || HostSource(judge, val.substr(0, val.find(':')));
    } else if (key == "--mount") {
      for (std::string_view field : {"source=", "src="}) {
        const size_t at = val.find(field);
        if (at == std::string_view::npos) continue;
        std::string_view src = val.substr(at + field.size());
        src = src.substr(0, src.find(','));
        bad = bad || HostSource(judge, src);
      }
    } else if (key == "--cap-add") {
      bad = bad || val == "ALL" || val == "SYS_ADMIN" || val == "SYS_MODULE" ||
            val == "SYS_PTRACE" || val == "DAC_READ_SEARCH" || val == "all";
    } else if (key == "--security-opt") {
      bad = bad || val.find("unconfined") != std::string_view::npos ||
            val.find("disable") != std::string_view::npos;
    } else if (key == "--device") {
      bad = bad || IsBlockDevice(judge.ResolveText(val.substr(0, val.find(':')), 0));
    }
    // Options taking a separate value: skip it so it is not taken for the image.
    if (!attached && t.size() == 2 &&
        std::string_view("vepwuhlcm").find(t[1]) != std::string_view::npos) {
      ++k;
    } else if (!attached && t.starts_with("--") &&
               (key == "--volume" || key == "--mount" || key == "--env" || key == "--name" ||
                key == "--workdir" || key == "--user" || key == "--network" || key == "--net" ||
                key == "--pid" || key == "--ipc" || key == "--userns" || key == "--cap-add" ||
                key == "--security-opt" || key == "--device" || key == "--entrypoint" ||
                key == "--label" || key == "--publish" || key == "--hostname" ||
                key == "--platform" || key == "--env-file" || key == "--memory" ||
                key == "--cpus" || key == "--add-host" || key == "--tmpfs" || key == "--uts" ||
                key == "--cgroupns")) {
      ++k;
    }
  }
  if (bad) {
    Privilege(judge, "container_host_access",
              "container given the host (/ mounted, --privileged, host namespaces, engine socket)");
  }
}

void JudgeServiceEnable(Judge& judge, const CommandView& v) {
  if (v.name == "loginctl") {
    for (const ShellWord* w : v.args) {
      if (w->text == "enable-linger") {
        Privilege(judge, "service_enable", "service or user unit set to start on its own");
      }
    }
    return;
  }
  for (size_t i = 0; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    if (IsOption(t)) continue;
    if (t == "enable" || t == "reenable" || t == "link" || t == "edit" || t == "preset" ||
        t == "add-wants" || t == "add-requires" || t == "set-environment" ||
        t == "import-environment") {
      Privilege(judge, "service_enable", "service or user unit set to start on its own");
    }
    return;  // only the verb
  }
}

}  // namespace

void JudgePrivilegeRules(Judge& judge, const CommandView& v) {
  const std::string_view n = v.name;
  if (n == "chmod") {
    for (const ShellWord* w : v.args) {
      if (ModeSetsId(w->text)) {
        Privilege(judge, "setuid_bit", "setuid or setgid bit set on a file");
        break;
      }
    }
  } else if (n == "install") {
    for (size_t i = 0; i + 1 < v.args.size(); ++i) {
      if ((v.args[i]->text == "-m" || v.args[i]->text == "--mode") &&
          ModeSetsId(v.args[i + 1]->text)) {
        Privilege(judge, "setuid_bit", "setuid or setgid bit set on a file");
      }
    }
  } else if (n == "setcap") {
    Privilege(judge, "setuid_bit", "setuid or setgid bit set on a file");
  } else if (n == "useradd" || n == "usermod" || n == "adduser" || n == "groupmod" ||
             n == "gpasswd" || n == "addgroup") {
    JudgeAccount(judge, v);
    JudgeAccountAccess(judge, v);
  } else if (n == "passwd" || n == "chpasswd" || n == "newusers" || n == "chage") {
    JudgeAccountAccess(judge, v);
  } else if (n == "docker" || n == "podman" || n == "nerdctl") {
    JudgeContainerRun(judge, v);
  } else if (n == "systemctl" || n == "loginctl") {
    JudgeServiceEnable(judge, v);
  } else {
    JudgeFirewall(judge, v);
  }
}

}  // namespace talaria::safety::guard
