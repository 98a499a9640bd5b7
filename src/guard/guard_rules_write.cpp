// Writes that need approval whoever makes them: tee, cp/mv/install/ln/rsync destinations (and
// mv sources, which disappear), truncate; links whose source lies outside the working directory
// or is sensitive (a hard link makes the file readable through the workspace); commands that
// change files without writing them (chmod, touch, mkdir, ...) inside $TALARIA_HOME;
// container-host variables set through export.
#include "guard/guard_internal.h"
#include "talaria/confinement/path_rules.h"

namespace talaria::safety::guard {
namespace {

// `ln SOURCE`: a file outside the working directory (any absolute path when it is unknown, or a
// relative one climbing out of it) or a sensitive one (credentials, keys, system files) linked
// in is approve; a link to anything in $TALARIA_HOME is hardline (writes through it land there).
void JudgeLinkSource(Judge& judge, const ShellWord& source, bool symbolic) {
  CheckStateTarget(judge, source);
  const ResolvedPath p = judge.Resolve(source);
  if (p.dynamic) return;
  std::string abs = p.abs;
  const std::string& cwd = judge.options().working_directory;
  if (abs.empty() && !p.rel.empty() && !symbolic) {
    // A symlink's relative source is relative to the link, not to the working directory.
    if (!cwd.empty() && cwd[0] == '/') {
      abs = internal::NormalizeAbsolute(cwd + "/" + p.rel);
    } else {
      // Unknown working directory: only a path climbing out of it counts as outside.
      constexpr std::string_view kProbe = "/p/p/p/p/p/p/p/p";
      const std::string n = internal::NormalizeAbsolute(std::string(kProbe) + "/" + p.rel);
      if (n != kProbe && !n.starts_with(std::string(kProbe) + "/")) abs = n;
    }
  }
  if (abs.empty()) return;
  const ResolvedPath resolved = judge.ResolveText(abs, source.flags & kWordGlob);
  if (ClassifyWrite(resolved) || IsCredentialPath(judge, resolved)) {
    judge.Add("link_sensitive_file", "link to a sensitive file (credentials, keys, system files)",
              GuardTier::kDangerous);
    return;
  }
  bool inside = false;
  if (!cwd.empty() && cwd[0] == '/') {
    inside = internal::RelativeBeneath(internal::NormalizedComponents(cwd),
                                       internal::NormalizedComponents(resolved.abs))
                 .has_value();
  }
  if (!inside) {
    judge.Add("link_outside_file", "link to a file outside the working directory",
              GuardTier::kDangerous);
  }
}

// Operands of cp/mv/install/ln/rsync, and the -t/--target-directory value if any.
void JudgeCopyLike(Judge& judge, const CommandView& v) {
  std::vector<const ShellWord*> operands;
  const ShellWord* target_dir = nullptr;
  bool dirs_only = false;
  bool symbolic = false;
  bool end_of_options = false;
  for (size_t i = 0; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    if (!end_of_options && t == "--") {
      end_of_options = true;
      continue;
    }
    if (!end_of_options && IsOption(t)) {
      if ((t == "-t" || t == "--target-directory") && i + 1 < v.args.size()) {
        target_dir = v.args[++i];
      } else if (t.starts_with("--target-directory=")) {
        target_dir = judge.Own(ShellWord{std::string(t.substr(19)), kWordTilde});
      } else if (v.name == "ln" && (t == "--symbolic" || ShortFlagsContain(t, 's'))) {
        symbolic = true;
      } else if (v.name == "install" && (t == "-d" || t == "--directory")) {
        dirs_only = true;
      } else if (v.name == "install" && (t == "-m" || t == "-o" || t == "-g" || t == "-S" ||
                                         t == "--mode" || t == "--owner" || t == "--group")) {
        ++i;
      } else if (v.name == "cp" && (t == "-S" || t == "--suffix")) {
        ++i;
      } else if (v.name == "rsync" && (t == "-e" || t == "--rsh" || t == "--exclude" ||
                                       t == "--include" || t == "--filter" || t == "-f")) {
        ++i;
      }
      continue;
    }
    operands.push_back(v.args[i]);
  }
  if (target_dir != nullptr) {
    CheckWriteTarget(judge, *target_dir);
  } else if (dirs_only) {
    for (const ShellWord* w : operands) CheckWriteTarget(judge, *w);
  } else if (operands.size() >= 2 || (v.name == "ln" && operands.size() == 1)) {
    CheckWriteTarget(judge, *operands.back());
  }
  if (v.name == "ln") {
    const size_t sources =
        target_dir != nullptr || operands.size() == 1 ? operands.size() : operands.size() - 1;
    for (size_t i = 0; i < sources && i < operands.size(); ++i) {
      JudgeLinkSource(judge, *operands[i], symbolic);
    }
  }
  if (v.name == "mv") {
    const size_t sources =
        target_dir != nullptr ? operands.size() : operands.size() - (operands.empty() ? 0 : 1);
    for (size_t i = 0; i < sources; ++i) CheckWriteTarget(judge, *operands[i]);
  }
}

}  // namespace

void JudgeWriteRules(Judge& judge, const CommandView& v) {
  const std::string_view n = v.name;
  if (n == "tee") {
    for (const ShellWord* w : v.args) {
      if (!IsOption(w->text)) CheckWriteTarget(judge, *w);
    }
  } else if (n == "cp" || n == "mv" || n == "install" || n == "ln" || n == "rsync") {
    JudgeCopyLike(judge, v);
  } else if (n == "truncate") {
    for (size_t i = 0; i < v.args.size(); ++i) {
      const std::string_view t = v.args[i]->text;
      if (t == "-s" || t == "-r" || t == "--size" || t == "--reference") {
        ++i;
      } else if (!IsOption(t)) {
        CheckWriteTarget(judge, *v.args[i]);
      }
    }
  } else if (n == "chmod" || n == "chown" || n == "chgrp" || n == "touch" || n == "mkdir" ||
             n == "rmdir" || n == "mkfifo" || n == "mknod" || n == "setfacl" || n == "chattr" ||
             n == "utime" || n == "shred" || n == "link" || n == "unlink") {
    for (const ShellWord* w : v.args) {
      if (!IsOption(w->text)) CheckStateTarget(judge, *w);
    }
    if (n == "link" && !v.args.empty()) JudgeLinkSource(judge, *v.args.front(), false);
  } else if (n == "export" || n == "declare" || n == "typeset" || n == "readonly" || n == "local") {
    for (const ShellWord* w : v.args) {
      if (w->text.starts_with("DOCKER_HOST=") || w->text.starts_with("CONTAINER_HOST=")) {
        judge.Add("container_remote_host", "container engine pointed at another host or context",
                  GuardTier::kDangerous);
      }
    }
  }
}

}  // namespace talaria::safety::guard
