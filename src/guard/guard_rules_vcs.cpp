// Git (history-destroying subcommands, program-running configuration, --output), container
// engines (remote hosts, lifecycle) and SQL clients (destructive statements).
#include <re2/re2.h>

#include "guard/guard_internal.h"
#include "talaria/base/ascii.h"

namespace talaria::safety::guard {
namespace {

// git configuration keys whose value is a program git runs.
bool IsProgramKey(std::string_view key_in) {
  const std::string key = AsciiLower(key_in);
  static constexpr std::string_view kExact[] = {"core.pager",
                                                "core.sshcommand",
                                                "core.editor",
                                                "core.fsmonitor",
                                                "core.hookspath",
                                                "core.askpass",
                                                "core.gitproxy",
                                                "sequence.editor",
                                                "diff.external",
                                                "credential.helper",
                                                "gpg.program",
                                                "gpg.ssh.program",
                                                "uploadpack.packobjectshook",
                                                "merge.tool",
                                                "diff.tool",
                                                "web.browser",
                                                "sendemail.sendmailcmd",
                                                "sendemail.smtpserver",
                                                "core.alternaterefscommand"};
  for (std::string_view k : kExact) {
    if (key == k) return true;
  }
  if (key.starts_with("alias.") || key.starts_with("pager.")) return true;
  // include.path / includeIf.*.path pull in another config file; remote.*.uploadpack and
  // receivepack are programs git runs (locally, for a local remote).
  if (key.starts_with("include.") || key.starts_with("includeif.") || key == "core.worktree") {
    return true;
  }
  if (key.starts_with("remote.") &&
      (key.ends_with(".uploadpack") || key.ends_with(".receivepack") || key.ends_with(".vcs"))) {
    return true;
  }
  if (key.starts_with("filter.") || key.starts_with("diff.") || key.starts_with("merge.") ||
      key.starts_with("mergetool.") || key.starts_with("difftool.") ||
      key.starts_with("credential.")) {
    return key.ends_with(".clean") || key.ends_with(".smudge") || key.ends_with(".process") ||
           key.ends_with(".textconv") || key.ends_with(".command") || key.ends_with(".cmd") ||
           key.ends_with(".driver") || key.ends_with(".helper") || key.ends_with(".path");
  }
  if (key.starts_with("protocol.") && key.ends_with(".allow")) return true;
  return false;
}

void GitConfig(Judge& judge, std::string_view key, std::string_view value, int depth) {
  if (!IsProgramKey(key)) return;
  judge.Add("git_config_command", "git configuration that runs a program", GuardTier::kDangerous);
  if (value.starts_with("!")) value.remove_prefix(1);
  if (!value.empty() && depth < kMaxPayloadDepth) judge.JudgeScript(value, depth + 1);
}

void JudgeGit(Judge& judge, const CommandView& v, int depth) {
  size_t i = 0;
  for (; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    if (!IsOption(t)) break;
    if (t == "-c" && i + 1 < v.args.size()) {
      const std::string_view kv = v.args[++i]->text;
      const size_t eq = kv.find('=');
      GitConfig(judge, kv.substr(0, eq), eq == std::string_view::npos ? "" : kv.substr(eq + 1),
                depth);
    } else if (t.starts_with("-c") && t.size() > 2) {
      const std::string_view kv = t.substr(2);
      const size_t eq = kv.find('=');
      GitConfig(judge, kv.substr(0, eq), eq == std::string_view::npos ? "" : kv.substr(eq + 1),
                depth);
    } else if (t == "--config-env" && i + 1 < v.args.size()) {
      const std::string_view kv = v.args[++i]->text;
      GitConfig(judge, kv.substr(0, kv.find('=')), "", depth);
    } else if (t.starts_with("--config-env=")) {
      const std::string_view kv = t.substr(13);
      GitConfig(judge, kv.substr(0, kv.find('=')), "", depth);
    } else if (t.starts_with("--exec-path=")) {
      judge.Add("git_config_command", "git configuration that runs a program",
                GuardTier::kDangerous);
    } else if (t == "-C" || t == "--git-dir" || t == "--work-tree" || t == "--namespace" ||
               t == "--super-prefix") {
      ++i;
    }
  }
  if (i >= v.args.size()) return;
  const std::string_view sub = v.args[i]->text;
  std::vector<std::string_view> rest;
  for (size_t k = i + 1; k < v.args.size(); ++k) rest.push_back(v.args[k]->text);
  auto has_short = [&](char c) {
    for (std::string_view a : rest) {
      if (ShortFlagsContain(a, c)) return true;
    }
    return false;
  };
  auto has = [&](std::string_view f) {
    for (std::string_view a : rest) {
      if (a == f) return true;
    }
    return false;
  };
  for (size_t k = i + 1; k < v.args.size(); ++k) {
    const std::string_view a = v.args[k]->text;
    if (a.starts_with("--output=")) {
      CheckWriteTarget(judge, ShellWord{std::string(a.substr(9)), kWordTilde});
    } else if (a == "--output" && k + 1 < v.args.size()) {
      CheckWriteTarget(judge, *v.args[k + 1]);
    }
  }
  if (sub == "reset") {
    for (std::string_view a : rest) {
      if (a.size() >= 3 && std::string_view("--hard").starts_with(a)) {
        judge.Add("git_reset_hard", "git reset --hard", GuardTier::kDangerous);
      }
    }
  } else if (sub == "push") {
    bool force =
        has("--force") || has("--force-with-lease") || has("--force-if-includes") || has_short('f');
    for (std::string_view a : rest) {
      if (a.starts_with("--force-with-lease=")) force = true;
      if (a.size() > 1 && a[0] == '+') force = true;  // +refspec
    }
    if (force) judge.Add("git_force_push", "git push --force", GuardTier::kDangerous);
  } else if (sub == "clean") {
    const bool dry = has("-n") || has("--dry-run") || has_short('n');
    if ((has("--force") || has_short('f')) && !dry) {
      judge.Add("git_clean_force", "git clean -f", GuardTier::kDangerous);
    }
  } else if (sub == "branch") {
    const bool big_d = has_short('D');
    const bool del = has("--delete") || has_short('d');
    const bool force = has("--force") || has_short('f');
    if (big_d || (del && force)) {
      judge.Add("git_branch_force_delete", "git branch -D", GuardTier::kDangerous);
    }
  } else if (sub == "config") {
    // git config [--file F | --global | ...] [set | --add | --replace-all] KEY VALUE: the
    // values of --file/--blob/--type/--default/--comment are not the key.
    for (size_t k = 0; k < rest.size(); ++k) {
      const std::string_view a = rest[k];
      if (a == "-f" || a == "--file" || a == "--blob" || a == "--type" || a == "--default" ||
          a == "--comment" || a == "--value" || a == "-t") {
        ++k;
        continue;
      }
      if (IsOption(a) || a == "set" || a == "add" || a == "replace-all") continue;
      if (IsProgramKey(a)) GitConfig(judge, a, k + 1 < rest.size() ? rest[k + 1] : "", depth);
      break;
    }
  } else if (sub == "rebase") {
    for (size_t k = 0; k + 1 < rest.size(); ++k) {
      if (rest[k] == "-x" || rest[k] == "--exec") judge.JudgeScript(rest[k + 1], depth + 1);
    }
    for (std::string_view a : rest) {
      if (a.starts_with("--exec=")) judge.JudgeScript(a.substr(7), depth + 1);
    }
  } else if (sub == "submodule") {
    for (size_t k = 0; k < rest.size(); ++k) {
      if (rest[k] != "foreach") continue;
      std::string text;
      for (size_t m = k + 1; m < rest.size(); ++m) {
        if (IsOption(rest[m]) && text.empty()) continue;
        if (!text.empty()) text += ' ';
        text += rest[m];
      }
      judge.JudgeScript(text, depth + 1);
      break;
    }
  } else if (sub == "bisect" && !rest.empty() && rest[0] == "run") {
    CommandView run = v;
    run.args.assign(v.args.begin() + static_cast<std::ptrdiff_t>(i + 2), v.args.end());
    if (!run.args.empty()) {
      run.name_word = run.args[0];
      run.name = Basename(run.args[0]->text);
      run.args.erase(run.args.begin());
      judge.JudgeArgv(run, depth + 1);
    }
  } else if (sub == "difftool" || sub == "mergetool") {
    for (size_t k = 0; k < rest.size(); ++k) {
      if ((rest[k] == "-x" || rest[k] == "--extcmd") && k + 1 < rest.size()) {
        judge.Add("program_flag", "tool option that runs another program", GuardTier::kDangerous);
      }
      if (rest[k].starts_with("--extcmd=")) {
        judge.Add("program_flag", "tool option that runs another program", GuardTier::kDangerous);
      }
    }
  }
}

void RemoteHost(Judge& judge) {
  judge.Add("container_remote_host", "container engine pointed at another host or context",
            GuardTier::kDangerous);
}

void Lifecycle(Judge& judge) {
  judge.Add("container_lifecycle", "stop, kill, restart or remove containers",
            GuardTier::kDangerous);
}

void JudgeContainer(Judge& judge, const CommandView& v) {
  const bool podman = v.name == "podman";
  const bool compose_binary = v.name == "docker-compose" || v.name == "podman-compose";
  size_t i = 0;
  for (; i < v.args.size(); ++i) {
    const std::string_view t = v.args[i]->text;
    if (!IsOption(t)) break;
    const std::string_view name = t.substr(0, t.find('='));
    if (!compose_binary &&
        ((!podman && (name == "-H" || name == "--host" || name == "-c" || name == "--context")) ||
         (podman && (name == "--url" || name == "--connection" || name == "-r" ||
                     name == "--remote" || name == "-c" || name == "--identity")))) {
      RemoteHost(judge);
    }
    if (t.find('=') == std::string_view::npos &&
        (name == "-H" || name == "--host" || name == "-c" || name == "--context" ||
         name == "--url" || name == "--connection" || name == "--config" || name == "-l" ||
         name == "--log-level" || name == "-f" || name == "--file" || name == "-p" ||
         name == "--project-name" || name == "--identity" || name == "--profile" ||
         name == "--env-file" || name == "--project-directory")) {
      ++i;
    }
  }
  if (i >= v.args.size()) return;
  std::string_view sub = v.args[i]->text;
  size_t next = i + 1;
  bool compose = compose_binary;
  if (sub == "compose") {
    compose = true;
    for (; next < v.args.size(); ++next) {
      const std::string_view t = v.args[next]->text;
      if (!IsOption(t)) break;
      if (t.find('=') == std::string_view::npos &&
          (t == "-f" || t == "--file" || t == "-p" || t == "--project-name" || t == "--profile" ||
           t == "--env-file" || t == "--project-directory")) {
        ++next;
      }
    }
    if (next >= v.args.size()) return;
    sub = v.args[next]->text;
  }
  if (compose_binary) {
    sub = v.args[i]->text;
  }
  if (sub == "context" && next < v.args.size() && v.args[next]->text == "use") RemoteHost(judge);
  if (sub == "restart" || sub == "stop" || sub == "kill" || sub == "down" ||
      (compose && sub == "rm")) {
    Lifecycle(judge);
  }
  if (sub == "rm" || sub == "rmi") {
    for (size_t k = next; k < v.args.size(); ++k) {
      if (v.args[k]->text == "--force" || ShortFlagsContain(v.args[k]->text, 'f')) Lifecycle(judge);
    }
  }
  if ((sub == "system" || sub == "volume" || sub == "container" || sub == "image" ||
       sub == "network") &&
      next < v.args.size() &&
      (v.args[next]->text == "prune" || v.args[next]->text == "rm" ||
       v.args[next]->text == "stop" || v.args[next]->text == "kill")) {
    Lifecycle(judge);
  }
}

bool IsSqlClient(std::string_view n) {
  return n == "psql" || n == "mysql" || n == "mariadb" || n == "sqlite3" || n == "sqlite" ||
         n == "duckdb" || n == "clickhouse-client" || n == "clickhouse" || n == "sqlcmd" ||
         n == "cockroach" || n == "pgcli" || n == "mycli" || n == "litecli" || n == "usql";
}

bool DestructiveSql(std::string_view text) {
  static const RE2 drop(
      "(?i)\\b(drop\\s+(table|database|schema)|truncate(\\s+table)?\\s+[`\"\\w])");
  static const RE2 del("(?i)\\bdelete\\s+from\\b");
  static const RE2 where("(?i)\\bwhere\\b");
  if (RE2::PartialMatch(text, drop)) return true;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find_first_of(";\n", start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view stmt = text.substr(start, end - start);
    if (RE2::PartialMatch(stmt, del) && !RE2::PartialMatch(stmt, where)) return true;
    start = end + 1;
  }
  return false;
}

void JudgeSql(Judge& judge, const CommandView& v) {
  bool bad = false;
  for (const ShellWord* w : v.args) bad = bad || DestructiveSql(w->text);
  if (v.cmd != nullptr) {
    for (const Redirection& r : v.cmd->redirections) {
      if (r.op == RedirectOp::kHeredoc) bad = bad || DestructiveSql(r.heredoc_body);
      if (r.op == RedirectOp::kHereString) bad = bad || DestructiveSql(r.target.text);
    }
    if (v.cmd->stdin_piped && v.script != nullptr) {
      for (const SimpleCommand& c : v.script->commands) {
        if (c.pipeline != v.cmd->pipeline || c.pipe_pos >= v.cmd->pipe_pos) continue;
        for (const ShellWord& w : c.argv) bad = bad || DestructiveSql(w.text);
        for (const Redirection& r : c.redirections) {
          if (r.op == RedirectOp::kHeredoc) bad = bad || DestructiveSql(r.heredoc_body);
          if (r.op == RedirectOp::kHereString) bad = bad || DestructiveSql(r.target.text);
        }
      }
    }
  }
  if (bad) {
    judge.Add("sql_destructive", "destructive SQL (DROP, TRUNCATE, DELETE without WHERE)",
              GuardTier::kDangerous);
  }
}

}  // namespace

void JudgeVcsRules(Judge& judge, const CommandView& v, int depth) {
  const std::string_view n = v.name;
  if (n == "git") {
    JudgeGit(judge, v, depth);
  } else if (n == "docker" || n == "podman" || n == "docker-compose" || n == "podman-compose" ||
             n == "nerdctl") {
    JudgeContainer(judge, v);
  } else if (IsSqlClient(n)) {
    JudgeSql(judge, v);
  }
}

}  // namespace talaria::safety::guard
