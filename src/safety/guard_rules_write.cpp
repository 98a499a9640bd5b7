// Writes that need approval whoever makes them: tee, cp/mv/install/ln/rsync destinations (and
// mv sources, which disappear), truncate; container-host variables set through export.
#include "safety/guard_internal.h"

namespace talaria::safety::guard {
namespace {

// Operands of cp/mv/install/ln/rsync, and the -t/--target-directory value if any.
void JudgeCopyLike(Judge& judge, const CommandView& v) {
  std::vector<const ShellWord*> operands;
  const ShellWord* target_dir = nullptr;
  bool dirs_only = false;
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
  if (v.name == "mv") {
    const size_t sources = target_dir != nullptr ? operands.size() : operands.size() - (operands.empty() ? 0 : 1);
    for (size_t i = 0; i < sources; ++i) CheckWriteTarget(judge, *operands[i]);
  }
}

}  // namespace

void JudgeWriteRules(Judge& judge, const CommandView& v) {
  const std::string& n = v.name;
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
  } else if (n == "export" || n == "declare" || n == "typeset" || n == "readonly" ||
             n == "local") {
    for (const ShellWord* w : v.args) {
      if (w->text.starts_with("DOCKER_HOST=") || w->text.starts_with("CONTAINER_HOST=")) {
        judge.Add("container_remote_host", "container engine pointed at another host or context",
                  GuardTier::kDangerous);
      }
    }
  }
}

}  // namespace talaria::safety::guard
