// ProgramTraits: one lookup from a program name to the rule families that look at it, so a
// command is dispatched once instead of walking every family's chain of name comparisons.
// The table is built at compile time (open addressing, FNV-1a); a name missing from it is
// only judged by the rules that do not depend on the name (redirections, data flow), so every
// name a family compares against must be listed here with that family's bit.
#include <array>
#include <cstdint>
#include <string_view>

#include "guard/guard_internal.h"

namespace talaria::safety::guard {
namespace {

struct Entry {
  std::string_view name;
  uint32_t traits;
};

constexpr uint32_t kShellTraits = kTraitExec | kTraitShell;
// Interpreter families accepting a version suffix (python3.11, perl5.36, lua5.4).
constexpr uint32_t kVersioned = kTraitExec | kTraitInterpreter | kTraitVersioned;
constexpr uint32_t kNet = kTraitExec | kTraitNetworkTool;

// A table, several entries a line.
// clang-format off
constexpr Entry kEntries[] = {
    // Wrappers peeled by PeelWrappers (guard_peel.cpp).
    {"sudo", kTraitWrapper}, {"doas", kTraitWrapper}, {"run0", kTraitWrapper},
    {"env", kTraitWrapper}, {"exec", kTraitWrapper}, {"nohup", kTraitWrapper},
    {"builtin", kTraitWrapper}, {"unbuffer", kTraitWrapper}, {"catchsegv", kTraitWrapper},
    {"fakeroot", kTraitWrapper}, {"torsocks", kTraitWrapper}, {"eatmydata", kTraitWrapper},
    {"setsid", kTraitWrapper}, {"command", kTraitWrapper}, {"time", kTraitWrapper},
    {"nice", kTraitWrapper}, {"timeout", kTraitWrapper}, {"stdbuf", kTraitWrapper},
    {"ionice", kTraitWrapper}, {"chrt", kTraitWrapper}, {"taskset", kTraitWrapper},
    {"chroot", kTraitWrapper}, {"busybox", kTraitWrapper}, {"toybox", kTraitWrapper},
    {"xargs", kTraitWrapper}, {"proxychains", kTraitWrapper}, {"proxychains4", kTraitWrapper},
    {"strace", kTraitWrapper}, {"ltrace", kTraitWrapper}, {"systemd-run", kTraitWrapper},
    {"nsenter", kTraitWrapper}, {"unshare", kTraitWrapper}, {"faketime", kTraitWrapper},
    {"su", kTraitWrapper | kTraitPayload}, {"runuser", kTraitWrapper | kTraitPayload},
    {"sg", kTraitWrapper | kTraitPayload}, {"flock", kTraitWrapper | kTraitPayload},
    {"watch", kTraitWrapper | kTraitPayload}, {"script", kTraitWrapper | kTraitPayload},
    {"ssh", kTraitWrapper | kTraitSink | kTraitSsh},
    // Shell state.
    {"cd", kTraitDirChange}, {"pushd", kTraitDirChange},
    {"export", kTraitDeclaration | kTraitWrite}, {"local", kTraitDeclaration | kTraitWrite},
    {"declare", kTraitDeclaration | kTraitWrite}, {"typeset", kTraitDeclaration | kTraitWrite},
    {"readonly", kTraitDeclaration | kTraitWrite},
    // Deletes (guard_rules_delete.cpp).
    {"rm", kTraitDelete}, {"unlink", kTraitDelete | kTraitWrite},
    {"shred", kTraitDelete | kTraitWrite}, {"find", kTraitDelete},
    // Disks (guard_rules_disk.cpp); mkfs.* and newfs* by prefix.
    {"mkfs", kTraitDisk}, {"mke2fs", kTraitDisk}, {"mkntfs", kTraitDisk},
    {"mkdosfs", kTraitDisk}, {"mkexfatfs", kTraitDisk}, {"mkfs_msdos", kTraitDisk},
    {"mkswap", kTraitDisk}, {"wipefs", kTraitDisk}, {"sgdisk", kTraitDisk},
    {"gdisk", kTraitDisk}, {"sfdisk", kTraitDisk}, {"fdisk", kTraitDisk}, {"cfdisk", kTraitDisk},
    {"parted", kTraitDisk}, {"partx", kTraitDisk}, {"growpart", kTraitDisk},
    {"blkdiscard", kTraitDisk}, {"nvme", kTraitDisk}, {"cryptsetup", kTraitDisk},
    {"dd", kTraitDisk},
    // The system and packages (guard_rules_system.cpp); pip3* by prefix.
    {"shutdown", kTraitSystem}, {"reboot", kTraitSystem}, {"halt", kTraitSystem},
    {"poweroff", kTraitSystem}, {"init", kTraitSystem}, {"telinit", kTraitSystem},
    {"systemctl", kTraitSystem | kTraitPrivilege}, {"loginctl", kTraitSystem | kTraitPrivilege},
    {"service", kTraitSystem}, {"kill", kTraitSystem}, {"pkill", kTraitSystem},
    {"killall", kTraitSystem}, {"pgrep", kTraitSystem},
    {"chmod", kTraitSystem | kTraitWrite | kTraitPrivilege},
    {"chown", kTraitSystem | kTraitWrite}, {"crontab", kTraitSystem}, {"npm", kTraitSystem},
    {"pnpm", kTraitSystem}, {"yarn", kTraitSystem}, {"pip", kTraitSystem},
    {"pipx", kTraitSystem}, {"uv", kTraitSystem}, {"conda", kTraitSystem},
    {"mamba", kTraitSystem}, {"gem", kTraitSystem}, {"cargo", kTraitSystem},
    {"brew", kTraitSystem}, {"snap", kTraitSystem}, {"flatpak", kTraitSystem},
    {"apt", kTraitSystem}, {"apt-get", kTraitSystem}, {"aptitude", kTraitSystem},
    {"dnf", kTraitSystem}, {"yum", kTraitSystem}, {"zypper", kTraitSystem},
    {"apk", kTraitSystem}, {"pacman", kTraitSystem}, {"yay", kTraitSystem},
    {"dpkg", kTraitSystem}, {"rpm", kTraitSystem},
    // Code runners (guard_rules_exec.cpp).
    {"sh", kShellTraits}, {"bash", kShellTraits}, {"zsh", kShellTraits}, {"dash", kShellTraits},
    {"ksh", kShellTraits}, {"mksh", kShellTraits}, {"ash", kShellTraits},
    {"yash", kShellTraits}, {"posh", kShellTraits}, {"fish", kShellTraits},
    {"csh", kShellTraits}, {"tcsh", kShellTraits},
    {"python", kVersioned}, {"pypy", kVersioned}, {"perl", kVersioned}, {"ruby", kVersioned},
    {"node", kVersioned}, {"nodejs", kVersioned}, {"bun", kVersioned}, {"deno", kVersioned},
    {"php", kVersioned}, {"lua", kVersioned}, {"luajit", kVersioned}, {"Rscript", kVersioned},
    {"julia", kVersioned}, {"pwsh", kVersioned}, {"powershell", kVersioned},
    {"osascript", kVersioned},
    {"tclsh", kTraitExec | kTraitInterpreter}, {"wish", kTraitExec | kTraitInterpreter},
    {"irb", kTraitExec | kTraitInterpreter}, {"jshell", kTraitExec | kTraitInterpreter},
    {"groovy", kTraitExec | kTraitInterpreter},
    {"awk", kTraitExec | kTraitSinkName}, {"gawk", kTraitExec | kTraitSinkName},
    {"mawk", kTraitExec}, {"nawk", kTraitExec}, {"eval", kTraitExec | kTraitPayload},
    {"source", kTraitExec},
    {".", kTraitExec}, {"sed", kTraitExec}, {"gsed", kTraitExec}, {"sort", kTraitExec},
    {"rg", kTraitExec}, {"ag", kTraitExec}, {"man", kTraitExec}, {"tar", kTraitExec},
    {"zip", kTraitExec}, {"rsync", kTraitExec | kTraitWrite | kTraitSink},
    {"less", kTraitExec}, {"more", kTraitExec},
    // Network tools (IsNetworkTool) and sinks (data leaving the machine).
    {"curl", kNet | kTraitSink}, {"wget", kNet | kTraitSink},
    {"nc", kNet | kTraitSink | kTraitSinkName}, {"ncat", kNet | kTraitSink | kTraitSinkName},
    {"netcat", kNet | kTraitSink | kTraitSinkName},
    {"socat", kNet | kTraitSink | kTraitSinkName}, {"ping", kNet | kTraitSink},
    {"ping6", kNet | kTraitSink}, {"dig", kNet | kTraitSink}, {"host", kNet | kTraitSink},
    {"nslookup", kNet | kTraitSink}, {"telnet", kNet | kTraitSink}, {"ftp", kNet | kTraitSink},
    {"tftp", kNet | kTraitSink}, {"whois", kNet}, {"traceroute", kNet},
    {"http", kNet | kTraitSink}, {"aria2c", kNet | kTraitSink}, {"https", kTraitSink},
    {"xh", kTraitSink}, {"httpie", kTraitSink}, {"openssl", kTraitSink}, {"scp", kTraitSink},
    {"sftp", kTraitSink}, {"lftp", kTraitSink}, {"smbclient", kTraitSink}, {"gh", kTraitSink},
    {"aws", kTraitSink}, {"gsutil", kTraitSink}, {"rclone", kTraitSink}, {"mail", kTraitSink},
    {"mailx", kTraitSink}, {"sendmail", kTraitSink}, {"mutt", kTraitSink},
    {"drill", kTraitSink}, {"s3cmd", kTraitSink}, {"fetch", kTraitSink}, {"lynx", kTraitSink},
    {"glab", kTraitSink}, {"az", kTraitSink},
    {"http.server", kTraitServerModule}, {"SimpleHTTPServer", kTraitServerModule},
    // Writes (guard_rules_write.cpp).
    {"tee", kTraitWrite}, {"cp", kTraitWrite}, {"mv", kTraitWrite},
    {"install", kTraitWrite | kTraitPrivilege}, {"ln", kTraitWrite}, {"truncate", kTraitWrite},
    {"chgrp", kTraitWrite}, {"touch", kTraitWrite}, {"mkdir", kTraitWrite},
    {"rmdir", kTraitWrite}, {"mkfifo", kTraitWrite}, {"mknod", kTraitWrite},
    {"setfacl", kTraitWrite}, {"chattr", kTraitWrite}, {"utime", kTraitWrite},
    {"link", kTraitWrite},
    // Version control, containers, SQL clients (guard_rules_vcs.cpp).
    {"git", kTraitVcs}, {"docker", kTraitVcs | kTraitPrivilege},
    {"podman", kTraitVcs | kTraitPrivilege}, {"nerdctl", kTraitVcs | kTraitPrivilege},
    {"docker-compose", kTraitVcs}, {"podman-compose", kTraitVcs},
    {"psql", kTraitVcs | kTraitCarrier}, {"mysql", kTraitVcs | kTraitCarrier},
    {"mariadb", kTraitVcs | kTraitCarrier}, {"sqlite3", kTraitVcs | kTraitCarrier},
    {"sqlite", kTraitVcs | kTraitCarrier}, {"duckdb", kTraitVcs | kTraitCarrier},
    {"pgcli", kTraitVcs | kTraitCarrier}, {"mycli", kTraitVcs | kTraitCarrier},
    {"litecli", kTraitVcs | kTraitCarrier}, {"usql", kTraitVcs | kTraitCarrier},
    {"clickhouse-client", kTraitVcs}, {"clickhouse", kTraitVcs}, {"sqlcmd", kTraitVcs},
    {"cockroach", kTraitVcs},
    // Carriers (guard_rules_carriers.cpp).
    {"trap", kTraitCarrier | kTraitPayload}, {"alias", kTraitCarrier},
    {"tmux", kTraitCarrier | kTraitPayload}, {"screen", kTraitCarrier | kTraitPayload},
    {"at", kTraitCarrier | kTraitPayload}, {"batch", kTraitCarrier | kTraitPayload},
    {"make", kTraitCarrier}, {"gmake", kTraitCarrier}, {"remake", kTraitCarrier},
    {"vi", kTraitCarrier}, {"vim", kTraitCarrier}, {"nvim", kTraitCarrier},
    {"view", kTraitCarrier}, {"vimdiff", kTraitCarrier}, {"gvim", kTraitCarrier},
    {"ex", kTraitCarrier}, {"rvim", kTraitCarrier}, {"evim", kTraitCarrier},
    {"nvi", kTraitCarrier}, {"elvis", kTraitCarrier}, {"ed", kTraitCarrier},
    {"red", kTraitCarrier}, {"gdb", kTraitCarrier}, {"lldb", kTraitCarrier},
    {"cgdb", kTraitCarrier}, {"gdb-multiarch", kTraitCarrier},
    // Privilege (guard_rules_privilege.cpp); iptables* and ip6tables* by prefix.
    {"setcap", kTraitPrivilege}, {"useradd", kTraitPrivilege}, {"usermod", kTraitPrivilege},
    {"adduser", kTraitPrivilege}, {"groupmod", kTraitPrivilege}, {"gpasswd", kTraitPrivilege},
    {"addgroup", kTraitPrivilege}, {"ebtables", kTraitPrivilege},
    {"arptables", kTraitPrivilege}, {"nft", kTraitPrivilege}, {"ufw", kTraitPrivilege},
    {"firewall-cmd", kTraitPrivilege}, {"setenforce", kTraitPrivilege},
    {"aa-teardown", kTraitPrivilege}, {"aa-disable", kTraitPrivilege},
    {"passwd", kTraitPrivilege}, {"chpasswd", kTraitPrivilege}, {"newusers", kTraitPrivilege},
    {"chage", kTraitPrivilege},
};
// clang-format on

constexpr uint32_t Hash(std::string_view s) {
  uint32_t h = 2166136261u;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return h;
}

class TraitTable {
 public:
  static constexpr size_t kSlots = 1024;  // a power of two, well above 2x the entries
  static constexpr size_t kMaxName = 24;

  constexpr TraitTable() {
    for (const Entry& e : kEntries) {
      size_t i = Hash(e.name) & (kSlots - 1);
      while (!names_[i].empty() && names_[i] != e.name) i = (i + 1) & (kSlots - 1);
      names_[i] = e.name;
      traits_[i] |= e.traits;
    }
  }

  constexpr uint32_t Find(std::string_view name) const {
    if (name.empty() || name.size() > kMaxName) return 0;
    for (size_t i = Hash(name) & (kSlots - 1);; i = (i + 1) & (kSlots - 1)) {
      if (names_[i].empty()) return 0;
      if (names_[i] == name) return traits_[i];
    }
  }

 private:
  std::array<std::string_view, kSlots> names_{};
  std::array<uint32_t, kSlots> traits_{};
};

constexpr TraitTable kTable;
static_assert(sizeof(kEntries) / sizeof(kEntries[0]) * 2 < TraitTable::kSlots);
static_assert(kTable.Find("rm") == kTraitDelete);
static_assert(kTable.Find("chmod") == (kTraitSystem | kTraitWrite | kTraitPrivilege));

bool IsVersionChar(char c) { return (c >= '0' && c <= '9') || c == '.'; }

}  // namespace

uint32_t ProgramTraits(std::string_view name) {
  uint32_t traits = kTable.Find(name);
  if (name.empty()) return traits;
  switch (name[0]) {
    case 'm':
      if (name.starts_with("mkfs.")) traits |= kTraitDisk;
      break;
    case 'n':
      if (name.starts_with("newfs")) traits |= kTraitDisk;
      break;
    case 'p':
      if (name.starts_with("pip3")) traits |= kTraitSystem;
      break;
    case 'i':
      if (name.starts_with("iptables") || name.starts_with("ip6tables")) {
        traits |= kTraitPrivilege;
      }
      break;
    default:
      break;
  }
  if (IsVersionChar(name.back())) {
    size_t stem = name.size();
    while (stem > 0 && IsVersionChar(name[stem - 1])) --stem;
    if (stem > 0 && (kTable.Find(name.substr(0, stem)) & kTraitVersioned) != 0) {
      traits |= kTraitExec | kTraitInterpreter;
    }
  }
  return traits;
}

}  // namespace talaria::safety::guard
