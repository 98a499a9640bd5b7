// The system prompt: identity and tool guidance, the frozen memory snapshot, the project's
// context files, and a line saying when and with what the session started. Built once per
// session (and again only by a compaction) so the prompt prefix stays cache-stable.
//
// Context files are the project's own instructions for agents, found in the working directory:
// talaria's and the original's names first, then the shared names (AGENTS.md, CLAUDE.md,
// .cursorrules and .cursor/rules/*.mdc). Only the first kind found is loaded (as the original
// does, so two copies of the same rules are not paid twice), each file bounded, and all of it
// wrapped as untrusted content: a repository's file must not be able to speak as the system.
// Thread-safety: free functions, no shared state.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace talaria::agent {

inline constexpr size_t kMaxContextFileChars = 20'000;

struct ContextFile {
  std::string path;     // relative to the directory searched
  std::string content;  // bounded (head and tail kept, a marker between)
};

// The context files of `dir` (see above); empty when there are none or none can be read.
std::vector<ContextFile> LoadContextFiles(const std::string& dir);

struct SystemPromptParts {
  std::vector<std::string> tool_names;  // what the session offers
  std::string memory_snapshot;          // frozen for the session; "" when there is none
  std::vector<ContextFile> context_files;
  std::string extra;  // the embedder's own instructions
  std::string cwd;
  std::string model;
  std::string session_id;
  std::string started;     // "Saturday, December 5, 2026"
  bool compacted = false;  // earlier turns were compacted into a summary
};

std::string BuildSystemPrompt(const SystemPromptParts& parts);

// Today's date, as BuildSystemPrompt's `started` wants it (UTC).
std::string TodayForPrompt();

}  // namespace talaria::agent
