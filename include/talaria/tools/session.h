// A tool session: the per-conversation state the tools share — the workspace (roots and cwd),
// the read tracker behind the read guardrails, the audit log of mutations, the shell session
// terminal commands run in (local, starting in the workspace cwd) and its background processes.
//
//   talaria::tools::SessionOptions options;
//   options.roots = {"/srv/project"};
//   auto session = talaria::tools::OpenSession(std::move(options));
//   talaria::ToolContext ctx = session->NewContext("call_1");
//   dispatcher.Dispatch("read_file", R"({"path": "README.md"})", ctx);
//
// Thread-safety: a Session is thread-safe; each call gets its own ToolContext.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/core/tool_context.h"

namespace talaria::tools {

struct SessionOptions {
  std::vector<std::string> roots;  // empty: the process's current directory
  std::string cwd;                 // empty: the first root
  std::string session_id;          // empty: a random id
  std::string audit_log_path;      // empty: $TALARIA_HOME/audit.jsonl
  bool audit = true;
  // Terminal: variables kept in commands' environment although their names look secret.
  std::vector<std::string> env_passthrough;
};

class Session {
 public:
  // Errors: those of Workspace::Open (bad roots or cwd).
  static Result<std::shared_ptr<Session>> Open(SessionOptions options);

  const std::string& id() const { return id_; }
  const std::shared_ptr<safety::Workspace>& workspace() const { return workspace_; }

  // A context for one call of this session.
  ToolContext NewContext(std::string call_id, std::string task_id = "default") const;

 private:
  Session() = default;
  std::string id_;
  std::shared_ptr<safety::Workspace> workspace_;
  std::shared_ptr<ReadLoopObserver> tracker_;
  std::shared_ptr<const safety::AuditLog> audit_;
  std::shared_ptr<env::Environment> environment_;
  std::shared_ptr<env::ProcessTable> processes_;
};

inline Result<std::shared_ptr<Session>> OpenSession(SessionOptions options) {
  return Session::Open(std::move(options));
}

}  // namespace talaria::tools
