// Deletion: rm (recursive, of /, system directories, home; root-anchored paths), unlink,
// shred, find -delete / -exec, and deletes run on found items (xargs rm, find -exec rm).
#include <array>
#include <optional>
#include <string>

#include "guard/guard_internal.h"
#include "talaria/confinement/path_rules.h"

namespace talaria::safety::guard {
namespace {

constexpr std::array<std::string_view, 21> kSystemDirs = {
    "bin", "boot", "dev",  "etc", "home", "lib", "lib32", "lib64", "libx32", "media", "mnt",
    "opt", "proc", "root", "run", "sbin", "srv", "sys",   "usr",   "var",    "snap"};

bool IsSystemDir(std::string_view c) {
  for (std::string_view d : kSystemDirs) {
    if (c == d) return true;
  }
  return false;
}

bool IsGlobComponent(std::string_view c) {
  return c.find_first_of("*?[") != std::string_view::npos;
}

enum class Target { kOther, kRoot, kSystem, kHome };

// What a recursive delete of `p` would take out.
Target ClassifyDeleteTarget(const ResolvedPath& p) {
  if (p.in_home) {
    if (p.home_rest.empty()) return Target::kHome;
    if (p.glob && p.home_rest.find('/') == std::string::npos && IsGlobComponent(p.home_rest)) {
      return Target::kHome;
    }
  }
  if (p.abs.empty()) return Target::kOther;
  const auto comps = internal::NormalizedComponents(p.abs);
  if (comps.empty()) return Target::kRoot;
  if (comps.size() == 1 && p.glob && IsGlobComponent(comps[0])) return Target::kRoot;
  if (comps.size() == 1 && IsSystemDir(comps[0])) return Target::kSystem;
  if (comps.size() == 2 && IsSystemDir(comps[0]) && p.glob && IsGlobComponent(comps[1])) {
    return Target::kSystem;
  }
  if (comps.size() == 2 && comps[0] == "usr" &&
      (comps[1] == "bin" || comps[1] == "lib" || comps[1] == "sbin" || comps[1] == "share" ||
       comps[1] == "local" || comps[1] == "include")) {
    return Target::kSystem;
  }
  return Target::kOther;
}

void AddTarget(Judge& judge, Target t) {
  switch (t) {
    case Target::kRoot:
      judge.Add("recursive_delete_root", "recursive delete of the root directory",
                GuardTier::kHardline);
      break;
    case Target::kSystem:
      judge.Add("recursive_delete_system", "recursive delete of a system directory",
                GuardTier::kHardline);
      break;
    case Target::kHome:
      judge.Add("recursive_delete_home", "recursive delete of the home directory",
                GuardTier::kHardline);
      break;
    case Target::kOther:
      break;
  }
}

// Everything a recursive delete of `w` may take out: the path as written, resolved against
// each directory an earlier cd may have moved to (cd / && rm -rf *), and with unset variables
// expanded empty (rm -rf "$DIR"/ is rm -rf / when DIR is unset).
void AddRecursiveTargets(Judge& judge, const ShellWord& w) {
  const ResolvedPath p = judge.Resolve(w);
  AddTarget(judge, ClassifyDeleteTarget(p));
  const uint8_t glob = w.flags & kWordGlob;
  if (p.dynamic) {
    if (!w.Has(kWordExpansion)) return;
    const std::optional<std::string> empty = judge.EmptyExpansionPath(w.text);
    if (!empty || empty->empty()) return;
    if (empty->starts_with('/')) {
      AddTarget(judge, ClassifyDeleteTarget(judge.ResolveText(*empty, glob)));
    } else {
      for (const std::string& cwd : judge.cwds()) {
        AddTarget(judge, ClassifyDeleteTarget(judge.ResolveText(cwd + "/" + *empty, glob)));
      }
    }
    return;
  }
  if (!p.abs.empty() || p.rel.empty()) return;
  for (const std::string& cwd : judge.cwds()) {
    AddTarget(judge, ClassifyDeleteTarget(judge.ResolveText(cwd + "/" + p.rel, glob)));
  }
}

bool UnderTmp(const ResolvedPath& p) {
  return (p.abs.starts_with("/tmp/") || p.abs.starts_with("/var/tmp/")) && !p.glob;
}

void JudgeRm(Judge& judge, const CommandView& v) {
  bool recursive = false;
  bool end_of_options = false;
  std::vector<const ShellWord*> operands;
  for (const ShellWord* w : v.args) {
    const std::string_view t = w->text;
    if (!end_of_options && t == "--") {
      end_of_options = true;
      continue;
    }
    if (!end_of_options && IsOption(t)) {
      if (t.starts_with("--")) {
        if (t == "--recursive" || t == "--recursiv" || t == "--recursi" || t == "--recurs" ||
            t == "--recur" || t == "--recu" || t == "--rec" || t == "--re") {
          recursive = true;
        }
      } else if (t.find_first_of("rR") != std::string_view::npos) {
        recursive = true;
      }
      continue;
    }
    operands.push_back(w);
  }
  if (v.via == "xargs" || v.via == "find -exec") {
    judge.Add("indirect_delete", "delete of found items (xargs rm, find -exec rm)",
              GuardTier::kDangerous);
  }
  for (const ShellWord* w : operands) {
    const ResolvedPath p = judge.Resolve(*w);
    if (recursive) AddRecursiveTargets(judge, *w);
    if (!p.abs.empty() && !UnderTmp(p)) {
      judge.Add("delete_absolute_path", "delete of a root-anchored path", GuardTier::kDangerous);
    }
    CheckWriteTarget(judge, *w);
  }
  if (recursive) judge.Add("recursive_delete", "recursive delete", GuardTier::kDangerous);
}

void JudgeFind(Judge& judge, const CommandView& v, int depth) {
  std::vector<const ShellWord*> roots;
  size_t i = 0;
  while (i < v.args.size() &&
         (v.args[i]->text == "-H" || v.args[i]->text == "-L" || v.args[i]->text == "-P" ||
          v.args[i]->text.starts_with("-O") || v.args[i]->text.starts_with("-D"))) {
    i += v.args[i]->text == "-D" ? 2 : 1;
  }
  for (; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    if (t.starts_with("-") || t == "(" || t == "!" || t == ",") break;
    roots.push_back(v.args[i]);
  }
  if (roots.empty()) roots.push_back(judge.Own(ShellWord{".", 0}));  // GNU find's default
  for (; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    if (t == "-delete") {
      judge.Add("find_delete", "find -delete", GuardTier::kDangerous);
      for (const ShellWord* r : roots) {
        AddRecursiveTargets(judge, *r);
        CheckStateTarget(judge, *r);
      }
    } else if (t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir") {
      size_t end = i + 1;
      while (end < v.args.size() && v.args[end]->text != ";" && v.args[end]->text != "+") ++end;
      if (i + 1 < end) {
        CommandView sub;
        sub.name_word = v.args[i + 1];
        sub.name = Basename(v.args[i + 1]->text);
        sub.args.assign(v.args.begin() + static_cast<std::ptrdiff_t>(i + 2),
                        v.args.begin() + static_cast<std::ptrdiff_t>(end));
        sub.cmd = v.cmd;
        sub.script = v.script;
        sub.via = "find -exec";
        judge.JudgeArgv(sub, depth + 1);
        if (sub.name == "rm" || sub.name == "unlink" || sub.name == "shred") {
          for (const ShellWord* r : roots) {
            AddRecursiveTargets(judge, *r);
            CheckStateTarget(judge, *r);
          }
        }
      }
      i = end;
    } else if (t == "-fprint" || t == "-fprint0" || t == "-fprintf" || t == "-fls") {
      if (i + 1 < v.args.size()) CheckWriteTarget(judge, *v.args[i + 1]);
    }
  }
}

}  // namespace

void JudgeDeleteRules(Judge& judge, const CommandView& v, int depth) {
  const std::string_view n = v.name;
  if (n == "rm") {
    JudgeRm(judge, v);
  } else if (n == "unlink") {
    for (const ShellWord* w : v.args) {
      if (IsOption(w->text)) continue;
      const ResolvedPath p = judge.Resolve(*w);
      if (!p.abs.empty() && !UnderTmp(p)) {
        judge.Add("delete_absolute_path", "delete of a root-anchored path", GuardTier::kDangerous);
      }
      CheckWriteTarget(judge, *w);
    }
  } else if (n == "shred") {
    bool device = false;
    for (const ShellWord* w : v.args) {
      if (!IsOption(w->text) && IsBlockDevice(judge.Resolve(*w))) device = true;
    }
    if (device) {
      judge.Add("wipe_block_device", "wipe a block device", GuardTier::kHardline);
    } else {
      judge.Add("shred", "irrecoverable overwrite of files (shred)", GuardTier::kDangerous);
    }
  } else if (n == "find") {
    JudgeFind(judge, v, depth);
  }
}

}  // namespace talaria::safety::guard
