// Project-local configuration and its trust: `.talaria/config.yaml` in the directory talaria
// runs in. A repository can ship one, so whoever can write the repository could otherwise make
// talaria run code; the sections that run code — `mcp_servers` (servers are processes or
// remote endpoints) and `hooks` (shell commands) — are therefore used only after the user
// trusted that exact file content with `talaria trust`, which records its SHA-256 in
// $TALARIA_HOME/trusted.json. Any edit changes the hash and makes the file untrusted again.
// Other sections are not read from a project config (user-level config.yaml only).
//
// The file is read once, and the bytes hashed are the bytes parsed, so a file swapped between
// the check and the use cannot slip in.
//
// Trust covers what the config runs, not only the config: every word of a hook's command or a
// server's command and args that names a regular file inside the project (`sh
// .talaria/check.sh`, `python3 tools/lint.py`, `$TALARIA_PROJECT_DIR/x.sh`) is hashed into the
// trusted digest, and checked again before each hook runs, so a script edited after trusting
// (by an agent, say) runs nowhere. Code such a script loads in turn (imports, sourced files) is
// not followed. Trust is keyed by the path where the config was found, spelled absolute but
// with symlinks left as they are: another repository whose config is a symlink to a trusted
// one is a different, untrusted config.
// Thread-safety: free functions; the trust store is rewritten atomically (temp file + rename),
// concurrent `talaria trust` runs may lose one of two simultaneous updates.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/base/status.h"

namespace talaria {

// A project file a trusted config runs, and its content's hash when it was read.
struct PinnedFile {
  std::string path;  // absolute
  std::string sha256;
};

struct ProjectConfig {
  std::string path;    // absolute where found (symlinks not resolved)
  std::string sha256;  // of the exact bytes read, and of every file in `executed_files`
  std::vector<PinnedFile> executed_files;  // sorted by path
  bool trusted = false;
  std::shared_ptr<const Json> mcp_servers;  // the section; null when absent
  std::shared_ptr<const Json> hooks;        // null when absent
  std::vector<std::string> ignored;         // other top-level sections (only read at user level)

  // True when it declares something that runs code (and so needs trust).
  bool RunsCode() const { return mcp_servers != nullptr || hooks != nullptr; }
  // "mcp_servers (a, b) and hooks (PreToolUse)", for messages.
  std::string DescribeCode() const;
};

// <dir>/.talaria/config.yaml
std::string ProjectConfigPath(std::string_view dir);
// $TALARIA_HOME/trusted.json
std::string TrustStorePath();

// Reads the project config at `path` and looks its hash up in `trust_store`. nullopt when there
// is no such file. InvalidArgument when it is not YAML, its top level is not a mapping, or
// mcp_servers/hooks are not mappings; Unavailable when it cannot be read or the trust store is
// corrupt.
Result<std::optional<ProjectConfig>> LoadProjectConfig(const std::string& path,
                                                       const std::string& trust_store);

// OK when every file still hashes as pinned; FailedPrecondition naming the first that changed
// or disappeared since ("... changed since it was trusted: run `talaria trust` again").
Status CheckPinnedFiles(const std::vector<PinnedFile>& files);

// Records `config.path` with `config.sha256` as trusted (replacing an older hash of the same
// path). Unavailable when the store cannot be written.
Status TrustProjectConfig(const ProjectConfig& config, const std::string& trust_store);
// Forgets `path` (absolute). NotFound when it was not trusted.
Status RevokeProjectConfig(const std::string& path, const std::string& trust_store);

}  // namespace talaria
