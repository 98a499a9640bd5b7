// Path operands for the guard: ~ and $HOME expansion with the configured home, lexical
// normalisation, home folding, block devices and the sensitive-write classes.
#include <fnmatch.h>
#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <memory>

#include "guard/guard_internal.h"
#include "talaria/confinement/path_rules.h"

namespace talaria::safety::guard {
namespace {

using internal::NormalizeAbsolute;
using internal::NormalizedComponents;
using internal::RelativeBeneath;

// Used for ~ when no home is configured: a plausible depth keeps `~/..` meaningful.
constexpr std::string_view kPlaceholderHome = "/home/user";

constexpr std::array<std::string_view, 14> kShellRcFiles = {
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",  ".zprofile",
    ".zshenv", ".zlogin",       ".zlogout",    ".kshrc",       ".cshrc",   ".tcshrc", ".login"};
// Read by shells or their helpers at start: aliases and functions defined there run in the
// user's later sessions.
constexpr std::array<std::string_view, 9> kAliasFiles = {
    ".bash_aliases", ".aliases", ".zsh_aliases", ".bash_functions", ".inputrc",
    ".xprofile",     ".xinitrc", ".xsessionrc",  ".pam_environment"};
constexpr std::array<std::string_view, 6> kCredentialFiles = {
    ".netrc", ".pgpass", ".npmrc", ".pypirc", ".git-credentials", ".my.cnf"};
constexpr std::array<std::string_view, 7> kCredentialDirs = {
    ".aws", ".gnupg", ".kube", ".docker", ".azure", ".gcloud", ".password-store"};
constexpr std::array<std::string_view, 12> kSystemWriteDirs = {
    "etc", "boot", "usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "sys", "proc", "root"};
constexpr std::array<std::string_view, 8> kHarmlessDev = {"null",  "zero", "stdout", "stderr",
                                                          "stdin", "tty",  "random", "urandom"};

const RE2& BlockDevicePattern() {
  static const RE2 re(
      "/dev/(?:(?:sd|hd|vd|xvd)[a-z]+[0-9]*|nvme[0-9]+(?:n[0-9]+)?(?:p[0-9]+)?|"
      "mmcblk[0-9]+(?:p[0-9]+|boot[0-9]+)?|md[0-9]+(?:p[0-9]+)?|md/.+|dm-[0-9]+|"
      "loop[0-9]+(?:p[0-9]+)?|nbd[0-9]+(?:p[0-9]+)?|mapper/.+|disk/by-[^/]+/.+|sr[0-9]+|"
      "zd[0-9]+|rbd[0-9]+|ram[0-9]+|r?disk[0-9]+(?:s[0-9]+)?|sg[0-9]+|st[0-9]+|nst[0-9]+)");
  return re;
}

constexpr std::array<const char*, 8> kDeviceSamples = {"/dev/sda", "/dev/sdb1",    "/dev/nvme0n1",
                                                       "/dev/vda", "/dev/mmcblk0", "/dev/xvda",
                                                       "/dev/hda", "/dev/md0"};

constexpr WriteFinding kTalariaHomeFinding{
    "write_talaria_home",
    "modify talaria's own state ($TALARIA_HOME: config, approvals, trust, audit)",
    GuardTier::kHardline};

// `after` is a path beneath a `.git` directory: does git run something it names, or read
// where to find such things from it? config (and config.worktree), hooks, commondir (another
// repository's config and hooks), a submodule's or worktree's config and hooks, gitdir
// pointers, info/attributes (filter and diff drivers by name), objects/info/alternates.
bool GitRunsFrom(std::string_view after) {
  std::vector<std::string_view> c;
  size_t start = 0;
  while (start <= after.size() && c.size() < 64) {
    size_t end = after.find('/', start);
    if (end == std::string_view::npos) end = after.size();
    if (end > start && after.substr(start, end - start) != ".") {
      c.push_back(after.substr(start, end - start));
    }
    start = end + 1;
  }
  // modules/NAME/... and worktrees/NAME/... are git directories of their own (modules nest).
  while (c.size() >= 3 && (c[0] == "modules" || c[0] == "worktrees")) {
    c.erase(c.begin(), c.begin() + 2);
  }
  if (c.empty()) return false;
  const std::string_view f = c[0];
  if (f == "hooks" || f == "config" || f == "config.worktree" || f == "commondir" ||
      f == "gitdir" || f.starts_with("config.")) {
    return true;
  }
  if (c.size() >= 2 && f == "info" && (c[1] == "attributes" || c[1] == "sparse-checkout")) {
    return true;
  }
  return c.size() >= 3 && f == "objects" && c[1] == "info" && c[2] == "alternates";
}

// Files and directories beneath home that make something run later, unattended: desktop
// autostart, user services and timers, programs in a PATH directory ahead of the system's,
// git's global config (pager, hooks path, aliases, fsmonitor), editors' and tools' rc files,
// Python's .pth and customize modules (run by every interpreter start).
std::optional<WriteFinding> ClassifyPersistence(const std::vector<std::string>& rest) {
  const std::string_view first = rest[0];
  const std::string_view second = rest.size() >= 2 ? std::string_view(rest[1]) : "";
  const std::string_view base = rest.back();
  if ((first == ".config" && (second == "autostart" || second == "systemd" ||
                              second == "environment.d" || second == "upstart")) ||
      (first == ".local" && second == "share" && rest.size() >= 3 && rest[2] == "systemd")) {
    return WriteFinding{"write_autostart", "write to autostart or user services (persistence)",
                        GuardTier::kDangerous};
  }
  if ((first == ".local" && second == "bin" && rest.size() >= 3) ||
      (first == "bin" && rest.size() >= 2)) {
    return WriteFinding{"write_user_bin",
                        "program dropped in a PATH directory (~/.local/bin, ~/bin)",
                        GuardTier::kDangerous};
  }
  if ((rest.size() == 1 && (first == ".gitconfig" || first == ".gitattributes_global")) ||
      (first == ".config" && second == "git")) {
    return WriteFinding{"write_gitconfig", "write to git's global configuration",
                        GuardTier::kDangerous};
  }
  static constexpr std::array<std::string_view, 12> kRcFiles = {
      ".vimrc",   ".exrc",   ".gvimrc",   ".emacs",    ".tmux.conf", ".screenrc",
      ".gdbinit", ".psqlrc", ".sqliterc", ".lldbinit", ".curlrc",    ".wgetrc"};
  if ((rest.size() == 1 && OneOf(first, kRcFiles)) ||
      (first == ".config" && (second == "nvim" || second == "tmux")) || first == ".vim" ||
      (first == ".emacs.d" && rest.size() >= 2)) {
    return WriteFinding{"write_tool_rc", "write to a tool's startup file (runs commands later)",
                        GuardTier::kDangerous};
  }
  if (base.ends_with(".pth") || base == "sitecustomize.py" || base == "usercustomize.py") {
    return WriteFinding{"write_tool_rc", "write to a tool's startup file (runs commands later)",
                        GuardTier::kDangerous};
  }
  return std::nullopt;
}

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

ResolvedPath Judge::Resolve(const ShellWord& word) const {
  return ResolveText(word.text, word.flags);
}

namespace {

// Component-wise: could the glob pattern `comps` (an absolute path with * ? [) name `base` or
// something beneath it? `~/.tal*/approvals.json` reaches $TALARIA_HOME.
bool GlobReaches(const std::vector<std::string>& comps, const std::vector<std::string>& base) {
  if (comps.size() < base.size()) return false;
  for (size_t i = 0; i < base.size(); ++i) {
    if (::fnmatch(comps[i].c_str(), base[i].c_str(), FNM_PERIOD) != 0 && comps[i] != base[i]) {
      return false;
    }
  }
  return true;
}

}  // namespace

void Judge::InitHomes() {
  thread_local std::shared_ptr<const JudgeHomes> last;
  if (last != nullptr && last->home_option == options_.home &&
      last->talaria_option == options_.talaria_home) {
    homes_ = last;
    return;
  }
  auto h = std::make_shared<JudgeHomes>();
  h->home_option = options_.home;
  h->talaria_option = options_.talaria_home;
  h->home_abs = options_.home.empty() || options_.home[0] != '/' ? std::string(kPlaceholderHome)
                                                                 : NormalizeAbsolute(options_.home);
  const std::string& t = options_.talaria_home;
  h->talaria_abs = t.empty() || t[0] != '/' ? h->home_abs + "/.talaria" : NormalizeAbsolute(t);
  h->home_comps = NormalizedComponents(h->home_abs);
  h->talaria_comps = NormalizedComponents(h->talaria_abs);
  homes_ = h;
  last = std::move(h);
}

std::string Judge::TalariaHome() const { return homes_->talaria_abs; }

ResolvedPath Judge::ResolveText(std::string_view text, uint8_t flags) const {
  ResolvedPath rp;
  rp.glob = (flags & kWordGlob) != 0;
  const std::string& home = homes_->home_abs;
  std::string path(text);
  bool expanded_home = false;
  // The variables naming the home and talaria's home, in every spelling the shell expands.
  struct Var {
    std::string_view spelling;
    bool talaria;
  };
  static constexpr Var kVars[] = {
      {"$HOME", false}, {"${HOME}", false}, {"$TALARIA_HOME", true}, {"${TALARIA_HOME}", true}};
  if ((flags & kWordTilde) != 0 && (path == "~" || path.starts_with("~/"))) {
    path = home + path.substr(1);
    expanded_home = true;
  } else {
    for (const Var& v : kVars) {
      if (path == v.spelling || (path.starts_with(v.spelling) && path[v.spelling.size()] == '/')) {
        path = (v.talaria ? homes_->talaria_abs : home) + path.substr(v.spelling.size());
        expanded_home = true;
        break;
      }
    }
  }
  rp.dynamic =
      (flags & (kWordCommandSubst | kWordProcessSubst)) != 0 ||
      ((flags & kWordExpansion) != 0 && (!expanded_home || path.find('$') != std::string::npos));
  if (path.empty() || path[0] != '/') {
    rp.rel = std::move(path);
    return rp;
  }
  rp.abs = NormalizeAbsolute(path);
  const auto comps = NormalizedComponents(rp.abs);
  if (auto rest = RelativeBeneath(homes_->home_comps, comps)) {
    rp.in_home = true;
    rp.home_rest = std::move(*rest);
  }
  if (auto rest = RelativeBeneath(homes_->talaria_comps, comps)) {
    rp.in_talaria_home = true;
    rp.talaria_rest = std::move(*rest);
  } else if (rp.glob && GlobReaches(comps, homes_->talaria_comps)) {
    rp.in_talaria_home = true;
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
      return WriteFinding{"write_block_device", "write to a raw block device",
                          GuardTier::kHardline};
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
    if (p.in_talaria_home) return kTalariaHomeFinding;
    if (p.in_home) {
      const auto rest = NormalizedComponents("/" + p.home_rest);
      if (!rest.empty()) {
        if (rest[0] == ".ssh") {
          return WriteFinding{"write_ssh", "write into ~/.ssh", GuardTier::kDangerous};
        }
        if (OneOf(rest[0], kCredentialDirs) || (rest.size() >= 2 && rest[0] == ".config" &&
                                                (rest[1] == "gh" || rest[1] == "gcloud"))) {
          return WriteFinding{"write_credentials", "write to a credential file",
                              GuardTier::kDangerous};
        }
        if (rest.size() >= 3 && rest[0] == ".config" && rest[1] == "fish") {
          return WriteFinding{"write_shell_rc", "write to a shell startup file",
                              GuardTier::kDangerous};
        }
        if (auto f = ClassifyPersistence(rest)) return f;
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
    if (comp == ".ssh")
      return WriteFinding{"write_ssh", "write into ~/.ssh", GuardTier::kDangerous};
    if (comp == ".git" && (end == path.size() || GitRunsFrom(path.substr(end + 1)))) {
      // `.git` itself as a file is a gitfile ("gitdir: DIR"): it points git at another
      // repository, with that repository's config and hooks.
      return WriteFinding{"write_git_hooks", "write to git hooks or git config",
                          GuardTier::kDangerous};
    }
    start = end + 1;
  }
  if (OneOf(base, kShellRcFiles) || OneOf(base, kAliasFiles)) {
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

namespace {

// `word` as written, then (relative) at every directory the command may run in.
template <typename Fn>
void ForEachResolution(const Judge& judge, const ShellWord& word, Fn&& fn) {
  const ResolvedPath p = judge.Resolve(word);
  fn(p);
  if (!p.abs.empty() || p.rel.empty() || word.Has(kWordCommandSubst | kWordProcessSubst)) return;
  for (const std::string& cwd : judge.cwds()) {
    fn(judge.ResolveText(cwd + "/" + p.rel, word.flags & kWordGlob));
  }
}

}  // namespace

void CheckWriteTarget(Judge& judge, const ShellWord& word) {
  if (word.text.empty()) return;
  ForEachResolution(judge, word, [&](const ResolvedPath& p) {
    if (auto f = ClassifyWrite(p)) judge.Add(f->rule, f->description, f->tier);
  });
}

void CheckStateTarget(Judge& judge, const ShellWord& word) {
  if (word.text.empty()) return;
  ForEachResolution(judge, word, [&](const ResolvedPath& p) {
    if (p.in_talaria_home) {
      judge.Add(kTalariaHomeFinding.rule, kTalariaHomeFinding.description,
                kTalariaHomeFinding.tier);
    }
  });
}

bool CodeModifiesTalariaHome(const Judge& judge, std::string_view code) {
  const std::string talaria = judge.TalariaHome();
  const ResolvedPath t = judge.ResolveText(talaria, 0);
  // How code may name it: the absolute path, the variable, or its path beneath home
  // (".talaria" in os.path.expanduser("~/.talaria/x") or Path.home() / ".talaria").
  bool named = code.find(talaria) != std::string_view::npos ||
               code.find("TALARIA_HOME") != std::string_view::npos;
  if (!named && t.in_home && !t.home_rest.empty()) {
    named = code.find(t.home_rest) != std::string_view::npos;
  }
  if (!named) return false;
  static const RE2 kModifies(
      "(?i)(write|unlink|remove|rename|replace|rmtree|rm_r|truncate|chmod|chown|symlink|link|"
      "copy|move|dump|mkdir|touch|system|exec|popen|spawn|open\\s*\\([^)]*['\"][^'\"]*[wax+]|"
      "print\\s*>|>>?\\s*['\"$]|fopen|file_put_contents|append)");
  return RE2::PartialMatch(code, kModifies);
}

}  // namespace talaria::safety::guard
