#include "talaria/confinement/path_rules.h"

#include <linux/limits.h>

#include <algorithm>
#include <array>

namespace talaria::safety::internal {
namespace {

using Components = std::vector<std::string>;

// Directories directly under home whose whole subtree is write-denied (credentials).
constexpr std::array<std::string_view, 6> kHomeCredentialDirs = {".ssh",  ".aws",    ".gnupg",
                                                                 ".kube", ".docker", ".azure"};
// Under ~/.config.
constexpr std::array<std::string_view, 2> kConfigCredentialDirs = {"gh", "gcloud"};
constexpr std::array<std::string_view, 5> kHomeCredentialFiles = {".netrc", ".pgpass", ".npmrc",
                                                                  ".pypirc", ".git-credentials"};
constexpr std::array<std::string_view, 11> kShellRcFiles = {
    ".bashrc",   ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
    ".zprofile", ".zshenv",       ".login",      ".cshrc",       ".tcshrc"};
constexpr std::array<std::string_view, 7> kEnvFiles = {
    ".env",         ".env.local", ".env.development", ".env.production", ".env.test",
    ".env.staging", ".envrc"};

std::string QuoteRulePath(std::string_view shown) { return "'" + std::string(shown) + "'"; }

std::vector<Components> ToComponentLists(const std::vector<std::string>& paths) {
  std::vector<Components> out;
  for (const std::string& p : paths) {
    if (p.empty() || p[0] != '/') continue;
    Components c = NormalizedComponents(p);
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(std::move(c));
  }
  return out;
}

// Remainder components of `path` beneath `base`, or nullopt.
std::optional<Components> Beneath(const Components& base, const Components& path) {
  if (path.size() < base.size() || !std::equal(base.begin(), base.end(), path.begin())) {
    return std::nullopt;
  }
  return Components(path.begin() + static_cast<std::ptrdiff_t>(base.size()), path.end());
}

}  // namespace

Status ValidatePathString(std::string_view path) {
  if (path.empty()) return InvalidArgumentError("path is empty");
  if (path.find('\0') != std::string_view::npos) {
    return InvalidArgumentError("path contains a NUL byte");
  }
  if (path.size() >= PATH_MAX) {
    return InvalidArgumentError("path is too long (" + std::to_string(path.size()) +
                                " bytes; the limit is " + std::to_string(PATH_MAX - 1) + ")");
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (end - start > NAME_MAX) {
      std::string head(path.substr(start, 40));
      return InvalidArgumentError("a component of the path is too long (" +
                                  std::to_string(end - start) + " bytes, starting '" + head +
                                  "...'; the limit is " + std::to_string(NAME_MAX) + ")");
    }
    start = end + 1;
  }
  return Status::Ok();
}

std::vector<std::string> NormalizedComponents(std::string_view absolute_path) {
  Components out;
  size_t start = 0;
  while (start <= absolute_path.size()) {
    size_t end = absolute_path.find('/', start);
    if (end == std::string_view::npos) end = absolute_path.size();
    std::string_view c = absolute_path.substr(start, end - start);
    if (c == "..") {
      if (!out.empty()) out.pop_back();
    } else if (!c.empty() && c != ".") {
      out.emplace_back(c);
    }
    start = end + 1;
  }
  return out;
}

std::string JoinAbsolute(const std::vector<std::string>& components) {
  if (components.empty()) return "/";
  std::string out;
  for (const std::string& c : components) {
    out += '/';
    out += c;
  }
  return out;
}

std::string NormalizeAbsolute(std::string_view absolute_path) {
  return JoinAbsolute(NormalizedComponents(absolute_path));
}

std::optional<std::string> RelativeBeneath(const std::vector<std::string>& base,
                                           const std::vector<std::string>& path) {
  std::optional<Components> rest = Beneath(base, path);
  if (!rest) return std::nullopt;
  std::string out;
  for (const std::string& c : *rest) {
    if (!out.empty()) out += '/';
    out += c;
  }
  return out;
}

SensitivePaths::SensitivePaths(const std::vector<std::string>& homes,
                               const std::vector<std::string>& talaria_homes)
    : homes_(ToComponentLists(homes)), talaria_homes_(ToComponentLists(talaria_homes)) {}

std::optional<std::string> SensitivePaths::WriteDenial(std::string_view normalized_path,
                                                       std::string_view shown) const {
  const Components p = NormalizedComponents(normalized_path);
  const std::string credential =
      "Write denied: " + QuoteRulePath(shown) + " is a protected credential or system file.";

  // Anywhere, at any depth: git's internal files. Several make the next git command run a
  // program (config, config.worktree, hooks/, commondir and gitdir pointing git at a hostile
  // directory, modules/*/config and modules/*/hooks/ of submodules, worktrees/*/), and a `.git`
  // file redirects git to another repository: file tools write none of them.
  if (std::find(p.begin(), p.end(), ".git") != p.end()) {
    return "Write denied: " + QuoteRulePath(shown) +
           " is inside git's own directory (its config, hooks and pointers make git run "
           "commands); change a repository through git itself.";
  }

  // System files.
  if (p.size() >= 2 && p[0] == "etc") {
    if (p.size() == 2 && (p[1] == "sudoers" || p[1] == "passwd" || p[1] == "shadow")) {
      return credential;
    }
    if (p[1] == "sudoers.d" || p[1] == "systemd") return credential;
  }

  // talaria's own state (config, approvals, trust, audit, memories, sessions, plugins): a tool
  // that could write it could approve or trust itself.
  for (const Components& t : talaria_homes_) {
    if (Beneath(t, p)) {
      return "Write denied: " + QuoteRulePath(shown) +
             " is in talaria's own state directory (config, approvals, trust, audit, memories); "
             "only talaria itself writes there.";
    }
  }

  for (const Components& h : homes_) {
    std::optional<Components> r = Beneath(h, p);
    if (!r || r->empty()) continue;
    const Components& rest = *r;
    if (OneOf(rest[0], kHomeCredentialDirs)) return credential;
    if (rest[0] == ".config" && rest.size() >= 2 && OneOf(rest[1], kConfigCredentialDirs)) {
      return credential;
    }
    if (rest.size() == 1 && OneOf(rest[0], kHomeCredentialFiles)) return credential;
    if ((rest.size() == 1 && OneOf(rest[0], kShellRcFiles)) ||
        (rest.size() == 3 && rest[0] == ".config" && rest[1] == "fish" &&
         rest[2] == "config.fish")) {
      return "Write denied: " + QuoteRulePath(shown) +
             " is a shell startup file (it runs code in every new shell).";
    }
  }
  return std::nullopt;
}

std::optional<std::string> SensitivePaths::ReadDenial(std::string_view normalized_path,
                                                      std::string_view shown) const {
  const Components p = NormalizedComponents(normalized_path);
  if (!p.empty() && OneOf(p.back(), kEnvFiles)) {
    return "Read denied: " + QuoteRulePath(shown) +
           " is an environment file that may hold secrets (.env files are never read).";
  }
  // The user's credential stores under a home: the file tools read them no more than the
  // sandbox shows them to a command.
  for (const Components& h : homes_) {
    std::optional<Components> r = Beneath(h, p);
    if (!r || r->empty()) continue;
    const Components& rest = *r;
    if (OneOf(rest[0], kHomeCredentialDirs) ||
        (rest[0] == ".config" && rest.size() >= 2 && OneOf(rest[1], kConfigCredentialDirs)) ||
        (rest.size() == 1 && OneOf(rest[0], kHomeCredentialFiles))) {
      return "Read denied: " + QuoteRulePath(shown) +
             " is in a credential store (keys, tokens, passwords).";
    }
  }
  // talaria's state is not the model's to read either (credentials, approvals, other
  // sessions, the audit trail), except the spill files talaria itself points the model to.
  for (const Components& t : talaria_homes_) {
    std::optional<Components> r = Beneath(t, p);
    if (!r) continue;
    if (r->size() >= 2 && (*r)[0] == "spill") continue;
    return "Read denied: " + QuoteRulePath(shown) +
           " is in talaria's own state directory (credentials, approvals, sessions, audit).";
  }
  return std::nullopt;
}

}  // namespace talaria::safety::internal
