#include "env/ssh_command.h"

#include <string>

#include "talaria/base/sha256.h"

namespace talaria::env {
namespace {

// sun_path is 108 bytes; ssh first binds "<ControlPath>.<16 random chars>" and renames it.
constexpr size_t kMaxControlPath = 108 - 1 - 17;

bool HasUnsafeChar(std::string_view s) {
  for (const char c : s) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return true;
  }
  return false;
}

// A value inside ssh's own option syntax (-o Key=Value, IdentityFile): ssh splits values on
// blanks, honours double quotes and backslashes, and expands %-tokens, so paths are quoted and
// a literal '%' is doubled.
std::string ConfigValue(std::string_view value) {
  std::string out = "\"";
  for (const char c : value) {
    if (c == '%') {
      out += "%%";
    } else {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
  }
  out += '"';
  return out;
}

// ssh expands %-tokens in file names given with -i.
std::string PercentEscaped(std::string_view value) {
  std::string out;
  for (const char c : value) {
    out += c;
    if (c == '%') out += '%';
  }
  return out;
}

}  // namespace

std::string ControlSocketName(std::string_view user, std::string_view host, int port) {
  const std::string key = std::string(user) + "@" + std::string(host) + ":" + std::to_string(port);
  return Sha256Hex(key).substr(0, 16) + ".sock";
}

Status ValidateSshOptions(const SshOptions& options, std::string_view control_path) {
  if (options.host.empty()) return InvalidArgumentError("ssh: no host given");
  if (options.host.front() == '-' || HasUnsafeChar(options.host)) {
    return InvalidArgumentError("ssh: invalid host '" + options.host + "'");
  }
  if (!options.user.empty() && (options.user.front() == '-' || HasUnsafeChar(options.user) ||
                                options.user.find('@') != std::string::npos)) {
    return InvalidArgumentError("ssh: invalid user '" + options.user + "'");
  }
  if (options.port < 1 || options.port > 65535) {
    return InvalidArgumentError("ssh: invalid port " + std::to_string(options.port));
  }
  if (control_path.size() > kMaxControlPath) {
    return InvalidArgumentError("ssh: control socket path '" + std::string(control_path) +
                                "' is longer than " + std::to_string(kMaxControlPath) +
                                " bytes; choose a shorter control_dir");
  }
  for (const std::string& o : options.extra_options) {
    if (o.empty() || o.front() == '-') {
      return InvalidArgumentError("ssh: invalid option '" + o + "' (want Key=Value)");
    }
  }
  return Status::Ok();
}

std::vector<std::string> SshOptionArgv(const SshOptions& options, std::string_view control_path) {
  const long long connect_timeout =
      options.connect_timeout.count() > 0 ? options.connect_timeout.count() : 1;
  // clang-format off
  std::vector<std::string> argv = {
      "-o", "ControlMaster=auto",
      "-o", "ControlPath=" + ConfigValue(control_path),
      "-o", "ControlPersist=300",
      "-o", "BatchMode=yes",
      "-o", "StrictHostKeyChecking=accept-new",
      "-o", "ConnectTimeout=" + std::to_string(connect_timeout),
      // A dead connection is noticed in about 45 s instead of hanging every later command.
      "-o", "ServerAliveInterval=15",
      "-o", "ServerAliveCountMax=3",
  };
  // clang-format on

  if (!options.known_hosts_file.empty()) {
    argv.insert(argv.end(), {"-o", "UserKnownHostsFile=" + ConfigValue(options.known_hosts_file)});
  }
  if (!options.identity_file.empty()) {
    // The key named is the key used: no agent or default keys tried first (or instead).
    argv.insert(argv.end(),
                {"-o", "IdentitiesOnly=yes", "-i", PercentEscaped(options.identity_file)});
  }
  argv.insert(argv.end(), {"-p", std::to_string(options.port)});
  for (const std::string& o : options.extra_options) argv.insert(argv.end(), {"-o", o});
  return argv;
}

std::string SshDestination(const SshOptions& options) {
  return options.user.empty() ? options.host : options.user + "@" + options.host;
}

CwdReport ExtractCwdReport(std::string_view stderr_text, std::string_view marker) {
  CwdReport report;
  size_t pos = std::string_view::npos;
  // The last marker that starts a line (ssh's messages end with newlines; the report is written
  // after everything the remote side printed).
  for (size_t at = stderr_text.rfind(marker); at != std::string_view::npos;
       at = at == 0 ? std::string_view::npos : stderr_text.rfind(marker, at - 1)) {
    if (at == 0 || stderr_text[at - 1] == '\n') {
      pos = at;
      break;
    }
  }
  if (pos == std::string_view::npos) {
    report.rest = std::string(stderr_text);
    return report;
  }
  size_t end = stderr_text.find('\n', pos);
  const size_t line_end = end == std::string_view::npos ? stderr_text.size() : end + 1;
  if (end == std::string_view::npos) end = stderr_text.size();
  report.found = true;
  report.cwd = std::string(stderr_text.substr(pos + marker.size(), end - pos - marker.size()));
  report.rest = std::string(stderr_text.substr(0, pos)) + std::string(stderr_text.substr(line_end));
  return report;
}

}  // namespace talaria::env
