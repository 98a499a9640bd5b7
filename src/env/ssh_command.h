// Pieces of the SSH environment that need no connection (ssh joins its remote-command arguments
// with spaces and hands the string to the remote login shell, so every word goes through
// ShellJoin of base/shell_words.h), the ControlPath socket name and the ssh argv, and the parsing
// of the cwd report a remote command leaves on ssh's stderr. Thread-safety: pure functions;
// thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/shell_words.h"
#include "talaria/base/status.h"
#include "talaria/env/environment.h"

namespace talaria::env {

// "<first 16 hex digits of sha256(user@host:port)>.sock", the original's socket name.
std::string ControlSocketName(std::string_view user, std::string_view host, int port);

// Rejects what ssh would misread: an empty host, a host or user starting with '-' (an option)
// or containing whitespace or control characters, a port outside 1..65535, a ControlPath too
// long for a Unix socket. InvalidArgument.
Status ValidateSshOptions(const SshOptions& options, std::string_view control_path);

// ssh's options for `options`, without the destination: the multiplexed connection at
// `control_path`, BatchMode, accept-new host keys, ConnectTimeout, keep-alives, then
// UserKnownHostsFile, -i (with IdentitiesOnly), -p and the extra -o options.
std::vector<std::string> SshOptionArgv(const SshOptions& options, std::string_view control_path);

// "user@host" or "host".
std::string SshDestination(const SshOptions& options);

// What a remote run left on ssh's stderr: the cwd report line "<marker><cwd>\n" (the last one;
// `cwd` empty when the shell could not tell) and everything else (ssh's own messages).
struct CwdReport {
  bool found = false;
  std::string cwd;
  std::string rest;
};
CwdReport ExtractCwdReport(std::string_view stderr_text, std::string_view marker);

}  // namespace talaria::env
