// Path operands for the guard: ~ and $HOME expansion with the configured home, lexical
// normalisation, home folding, block devices and the sensitive-write classes.
#include <fnmatch.h>

#include <algorithm>
#include <array>

#include <re2/re2.h>

#include "safety/guard_internal.h"
#include "safety/path_rules.h"

namespace talaria::safety::guard {
namespace {

using internal::NormalizeAbsolute;
using internal::NormalizedComponents;
using internal::RelativeBeneath;

// Used for ~ when no home is configured: a plausible depth keeps `~/..` meaningful.
constexpr std::string_view kPlaceholderHome = "/home/user";

template <size_t N>
bool OneOf(std::string_view s, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

constexpr std::array<std::string_view, 14> kShellRcFiles = {
    ".bashrc",  ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile",
    ".zshenv",  ".zlogin",       ".zlogout",    ".kshrc",       ".cshrc",   ".tcshrc", ".login"};
constexpr std::array<std::string_view, 6> kCredentialFiles = {
    ".netrc", ".pgpass", ".npmrc", ".pypirc", ".git-credentials", ".my.cnf"};
constexpr std::array<std::string_view, 7> kCredentialDirs = {".aws",   ".gnupg", ".kube",
                                                             ".docker", ".azure", ".gcloud",
                                                             ".password-store"};
constexpr std::array<std::string_view, 12> kSystemWriteDirs = {
    "etc", "boot", "usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "sys", "proc", "root"};
constexpr std::array<std::string_view, 8> kHarmlessDev = {"null",   "zero", "stdout", "stderr",
                                                          "stdin",  "tty",  "random", "urandom"};

const RE2& BlockDevicePattern() {
  static const RE2 re(
      "/dev/(?:(?:sd|hd|vd|xvd)[a-z]+[0-9]*|nvme[0-9]+(?:n[0-9]+)?(?:p[0-9]+)?|"
      "mmcblk[0-9]+(?:p[0-9]+|boot[0-9]+)?|md[0-9]+(?:p[0-9]+)?|md/.+|dm-[0-9]+|"
      "loop[0-9]+(?:p[0-9]+)?|nbd[0-9]+(?:p[0-9]+)?|mapper/.+|disk/by-[^/]+/.+|sr[0-9]+|"
      "zd[0-9]+|rbd[0-9]+|ram[0-9]+|r?disk[0-9]+(?:s[0-9]+)?|sg[0-9]+|st[0-9]+|nst[0-9]+)");
  return re;
}

constexpr std::array<const char*, 8> kDeviceSamples = {
    "/dev/sda", "/dev/sdb1", "/dev/nvme0n1", "/dev/vda", "/dev/mmcblk0", "/dev/xvda",
    "/dev/hda", "/dev/md0"};

}  // namespace

std::string_view Basename(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.starts_with(prefix); }

bool IsOption(std::string_view arg) { return arg.size() > 1 && arg[0] == '-'; }

bool ShortFlagsContain(std::string_view arg, char flag) {
  if (arg.size() < 2 || arg[0] != '-' || arg[1] == '-') return false;
  return arg.find(flag, 1) != std::string_view::npos;
}

ResolvedPath Judge::Resolve(const ShellWord& word) const { return ResolveText(word.text, word.flags); }

ResolvedPath Judge::ResolveText(std::string_view text, uint8_t flags) const {
  ResolvedPath rp;
  rp.glob = (flags & kWordGlob) != 0;
  const std::string home = options_.home.empty() || options_.home[0] != '/'
                               ? std::string(kPlaceholderHome)
                               : NormalizeAbsolute(options_.home);
  std::string path(text);
  bool expanded_home = false;
  if ((flags & kWordTilde) != 0 && (path == "~" || path.starts_with("~/"))) {
    path = home + path.substr(1);
    expanded_home = true;
  } else if (path == "$HOME" || path.starts_with("$HOME/")) {
    path = home + path.substr(5);
    expanded_home = true;
  } else if (path == "${HOME}" || path.starts_with("${HOME}/")) {
    path = home + path.substr(7);
    expanded_home = true;
  }
  rp.dynamic = (flags & (kWordCommandSubst | kWordProcessSubst)) != 0 ||
               ((flags & kWordExpansion) != 0 &&
                (!expanded_home || path.find('$') != std::string::npos));
  if (path.empty() || path[0] != '/') {
    rp.rel = std::move(path);
    return rp;
  }
  rp.abs = NormalizeAbsolute(path);
  const auto comps = NormalizedComponents(rp.abs);
  if (auto rest = RelativeBeneath(NormalizedComponents(home), comps)) {
    rp.in_home = true;
    rp.home_rest = std::move(*rest);
  }
  std::string talaria = options_.talaria_home;
  if (talaria.empty() || talaria[0] != '/') talaria = home + "/.talaria";
  if (auto rest = RelativeBeneath(NormalizedComponents(talaria), comps)) {
    rp.in_talaria_home = true;
    rp.talaria_rest = std::move(*rest);
  }
  return rp;
}

bool IsBlockDevice(const ResolvedPath& p) {
  if (!p.abs.starts_with("/dev/")) return false;
  if (p.glob) {
    for (const char* sample : kDeviceSamples) {
      if (::fnmatch(p.abs.c_str(), sample, FNM_PATHNAME) == 0) return true;
    }
    return false;
  }
  return RE2::FullMatch(p.abs, BlockDevicePattern());
}

std::optional<WriteFinding> ClassifyWrite(const ResolvedPath& p) {
  if (p.abs.empty() && p.rel.empty()) return std::nullopt;
  if (!p.abs.empty()) {
    if (IsBlockDevice(p)) {
      return WriteFinding{"write_block_device", "write to a raw block device", GuardTier::kHardline};
    }
    const auto comps = NormalizedComponents(p.abs);
    if (!comps.empty() && comps[0] == "dev") {
      if (comps.size() == 2 && OneOf(comps[1], kHarmlessDev)) return std::nullopt;
      if (comps.size() >= 2 && (comps[1] == "fd" || comps[1] == "shm" || comps[1] == "pts")) {
        return std::nullopt;
      }
      return WriteFinding{"write_system_file", "write into a system directory",
                          GuardTier::kDangerous};
    }
    if (!p.in_home && !p.in_talaria_home && !comps.empty() && OneOf(comps[0], kSystemWriteDirs)) {
      if (comps[0] == "usr" && comps.size() >= 2 && comps[1] == "local" && comps.size() >= 3 &&
          comps[2] == "src") {
        return std::nullopt;
      }
      return WriteFinding{"write_system_file", "write into a system directory",
                          GuardTier::kDangerous};
    }
    if (p.in_talaria_home) {
      const std::string& r = p.talaria_rest;
      if (r == "config.yaml" || r == ".env" || r == "auth.json" || r.starts_with("plugins") ||
          r.starts_with("mcp-tokens")) {
        return WriteFinding{"write_talaria_config", "write to talaria's config or credentials",
                            GuardTier::kDangerous};
      }
    }
    if (p.in_home) {
      const auto rest = NormalizedComponents("/" + p.home_rest);
      if (!rest.empty()) {
        if (rest[0] == ".ssh") {
          return WriteFinding{"write_ssh", "write into ~/.ssh", GuardTier::kDangerous};
        }
        if (OneOf(rest[0], kCredentialDirs) ||
            (rest.size() >= 2 && rest[0] == ".config" &&
             (rest[1] == "gh" || rest[1] == "gcloud"))) {
          return WriteFinding{"write_credentials", "write to a credential file",
                              GuardTier::kDangerous};
        }
        if (rest.size() == 3 && rest[0] == ".config" && rest[1] == "fish" &&
            rest[2] == "config.fish") {
          return WriteFinding{"write_shell_rc", "write to a shell startup file",
                              GuardTier::kDangerous};
        }
      }
    }
  }
  // Anywhere (relative paths resolve against an unknown directory): by component and name.
  const std::string_view path = p.abs.empty() ? std::string_view(p.rel) : std::string_view(p.abs);
  const std::string_view base = Basename(path);
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view comp = path.substr(start, end - start);
    if (comp == ".ssh") return WriteFinding{"write_ssh", "write into ~/.ssh", GuardTier::kDangerous};
    if (comp == ".git" && end < path.size()) {
      const std::string_view after = path.substr(end + 1);
      if (after.starts_with("hooks") || after == "config") {
        return WriteFinding{"write_git_hooks", "write to git hooks or git config",
                            GuardTier::kDangerous};
      }
    }
    start = end + 1;
  }
  if (OneOf(base, kShellRcFiles)) {
    return WriteFinding{"write_shell_rc", "write to a shell startup file", GuardTier::kDangerous};
  }
  if (OneOf(base, kCredentialFiles) || base == "authorized_keys" || base == "id_rsa" ||
      base == "id_ed25519") {
    return WriteFinding{"write_credentials", "write to a credential file", GuardTier::kDangerous};
  }
  if (base == ".env" || base.starts_with(".env.") || base == ".envrc") {
    return WriteFinding{"write_env_file", "write to a .env file", GuardTier::kDangerous};
  }
  if (base == "config.yaml") {
    return WriteFinding{"write_config_yaml", "write to a config.yaml", GuardTier::kDangerous};
  }
  return std::nullopt;
}

void CheckWriteTarget(Judge& judge, const ShellWord& word) {
  if (word.text.empty()) return;
  const ResolvedPath p = judge.Resolve(word);
  if (auto f = ClassifyWrite(p)) judge.Add(f->rule, f->description, f->tier);
}

}  // namespace talaria::safety::guard
