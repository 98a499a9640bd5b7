#include "checkpoints/git/git_util.h"

#include <mutex>

namespace talaria::checkpoints {

Status InitLibgit2() {
  static std::once_flag once;
  static Status status;
  std::call_once(once, [] {
    if (git_libgit2_init() < 0) {
      status = GitError("libgit2 init");
      return;
    }
    // No global, XDG or system config: ~/.gitconfig could set hooks-free but behaviour-changing
    // options (core.autocrlf, filters) that would make snapshots differ between machines.
    for (int level : {GIT_CONFIG_LEVEL_SYSTEM, GIT_CONFIG_LEVEL_XDG, GIT_CONFIG_LEVEL_GLOBAL}) {
      if (git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, level, "") < 0) {
        status = GitError("libgit2 config search path");
        return;
      }
    }
  });
  return status;
}

Status GitError(std::string_view what) {
  const git_error* e = git_error_last();
  std::string message = "checkpoints: " + std::string(what);
  if (e != nullptr && e->message != nullptr) {
    message += ": ";
    message += e->message;
  }
  return InternalError(std::move(message));
}

std::string OidHex(const git_oid& oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, &oid);
  return std::string(buf);
}

}  // namespace talaria::checkpoints
