// SessionOptionsFromConfig: the `terminal` section of config.yaml.
#include <nlohmann/json.hpp>

#include "talaria/tools/session.h"

namespace talaria::tools {
namespace {

Status Bad(const std::string& key, const std::string& what) {
  return InvalidArgumentError("config: terminal." + key + " must be " + what);
}

Status ReadString(const Json& section, const std::string& key, std::string& out) {
  auto it = section.find(key);
  if (it == section.end() || it->is_null()) return {};
  if (!it->is_string()) return Bad(key, "a string");
  out = it->get<std::string>();
  return {};
}

Status ReadStrings(const Json& section, const std::string& key, std::vector<std::string>& out) {
  auto it = section.find(key);
  if (it == section.end() || it->is_null()) return {};
  if (!it->is_array()) return Bad(key, "a list of strings");
  for (const Json& v : *it) {
    if (!v.is_string()) return Bad(key, "a list of strings");
    out.push_back(v.get<std::string>());
  }
  return {};
}

}  // namespace

Result<SessionOptions> SessionOptionsFromConfig(const Config& config, SessionOptions base) {
  if (config.raw == nullptr) return base;
  auto it = config.raw->find("terminal");
  if (it == config.raw->end() || it->is_null()) return base;
  if (!it->is_object()) return Err(InvalidArgumentError("config: terminal must be a mapping"));
  const Json& t = *it;
  TerminalSettings& s = base.terminal;
  TALARIA_RETURN_IF_ERROR(ReadString(t, "backend", s.backend));
  if (s.backend != "local" && s.backend != "bwrap" && s.backend != "ssh" && s.backend != "docker") {
    return Err(Bad("backend", "one of local, bwrap, ssh, docker (got '" + s.backend + "')"));
  }
  TALARIA_RETURN_IF_ERROR(ReadStrings(t, "env_passthrough", base.env_passthrough));
  if (auto n = t.find("network"); n != t.end() && !n->is_null()) {
    if (!n->is_boolean()) return Err(Bad("network", "true or false"));
    s.network = n->get<bool>();
  }
  if (auto ssh = t.find("ssh"); ssh != t.end() && !ssh->is_null()) {
    if (!ssh->is_object()) return Err(Bad("ssh", "a mapping"));
    TALARIA_RETURN_IF_ERROR(ReadString(*ssh, "host", s.ssh_host));
    TALARIA_RETURN_IF_ERROR(ReadString(*ssh, "user", s.ssh_user));
    TALARIA_RETURN_IF_ERROR(ReadString(*ssh, "identity_file", s.ssh_identity_file));
    TALARIA_RETURN_IF_ERROR(ReadString(*ssh, "cwd", s.ssh_cwd));
    if (auto port = ssh->find("port"); port != ssh->end() && !port->is_null()) {
      if (!port->is_number_integer() || port->get<int64_t>() < 1 || port->get<int64_t>() > 65535) {
        return Err(Bad("ssh.port", "a port number"));
      }
      s.ssh_port = port->get<int>();
    }
  }
  if (s.backend == "ssh" && s.ssh_host.empty()) return Err(Bad("ssh.host", "set when backend is ssh"));
  if (auto docker = t.find("docker"); docker != t.end() && !docker->is_null()) {
    if (!docker->is_object()) return Err(Bad("docker", "a mapping"));
    TALARIA_RETURN_IF_ERROR(ReadString(*docker, "image", s.docker_image));
    TALARIA_RETURN_IF_ERROR(ReadStrings(*docker, "forward_env", s.docker_forward_env));
  }
  return base;
}

}  // namespace talaria::tools
