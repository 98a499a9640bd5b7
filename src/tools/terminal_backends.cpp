#include "tools/terminal_backends.h"

#include <map>
#include <mutex>

#include "talaria/base/paths.h"
#include "talaria/env/host_pool.h"

namespace talaria::tools {
namespace {

// One pool per host list for the whole process: every session placed by the same rule, on the
// same counts.
std::mutex pools_mu;
std::map<std::string, std::shared_ptr<env::HostPool>> pools;  // Guarded by pools_mu.

std::string PoolKey(const TerminalSettings& t) {
  std::string key;
  for (const std::string& h : t.pool_hosts) key += h + "\n";
  key += t.ssh_identity_file + "\n" + t.ssh_known_hosts_file + "\n" + t.ssh_cwd;
  return key;
}

Result<std::shared_ptr<env::HostPool>> PoolFor(const TerminalSettings& t) {
  const std::string key = PoolKey(t);
  std::lock_guard lock(pools_mu);
  if (auto it = pools.find(key); it != pools.end()) return it->second;
  env::HostPoolOptions options;
  options.health_interval = std::chrono::seconds(t.pool_health_interval_s);
  for (const std::string& spec : t.pool_hosts) {
    env::SshOptions ssh;
    ssh.identity_file = t.ssh_identity_file;
    ssh.known_hosts_file = t.ssh_known_hosts_file;
    ssh.initial_cwd = t.ssh_cwd;
    TALARIA_RETURN_IF_ERROR(ParsePoolHost(spec, ssh));
    env::SshOptions probe = ssh;
    // A connection of its own: a host that takes no new connections fails the probe even
    // while the sessions' shared one lasts.
    probe.control_dir = TalariaHome() + "/ssh/probe";
    env::PoolHost host;
    host.name = spec;
    host.open = [ssh] { return env::OpenSsh(ssh); };
    host.probe = [probe]() -> Status {
      auto env = env::OpenSsh(probe);
      return env ? Status::Ok() : env.error();
    };
    options.hosts.push_back(std::move(host));
  }
  auto pool = TALARIA_TRY(env::HostPool::Create(std::move(options)));
  pools.emplace(key, pool);
  return pool;
}

}  // namespace

std::vector<env::PoolHostStatus> PoolHostsOf(const TerminalSettings& t) {
  std::shared_ptr<env::HostPool> pool;
  {
    std::lock_guard lock(pools_mu);
    if (auto it = pools.find(PoolKey(t)); it != pools.end()) pool = it->second;
  }
  return pool ? pool->Hosts() : std::vector<env::PoolHostStatus>{};
}

Status ParsePoolHost(std::string_view spec, env::SshOptions& ssh) {
  std::string_view rest = spec;
  if (const size_t at = rest.find('@'); at != std::string_view::npos) {
    ssh.user = std::string(rest.substr(0, at));
    rest.remove_prefix(at + 1);
  }
  if (const size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    const std::string_view port = rest.substr(colon + 1);
    int value = 0;
    for (char c : port) {
      if (c < '0' || c > '9' || value > 65535) {
        return InvalidArgumentError("terminal.pool.hosts: bad port in '" + std::string(spec) + "'");
      }
      value = value * 10 + (c - '0');
    }
    if (port.empty() || value < 1 || value > 65535) {
      return InvalidArgumentError("terminal.pool.hosts: bad port in '" + std::string(spec) + "'");
    }
    ssh.port = value;
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) {
    return InvalidArgumentError("terminal.pool.hosts: no host in '" + std::string(spec) + "'");
  }
  ssh.host = std::string(rest);
  return Status::Ok();
}

Result<std::shared_ptr<env::Environment>> OpenClusterBackend(const TerminalSettings& t,
                                                             const std::vector<std::string>& roots,
                                                             const std::string& session_id) {
  if (t.backend == "apptainer") {
    env::ApptainerOptions apptainer;
    apptainer.image = t.apptainer_image;
    apptainer.program = t.apptainer_program;
    for (const std::string& root : roots)
      apptainer.binds.push_back(std::string(root).append(":").append(root));
    apptainer.initial_cwd = roots.empty() ? std::string() : roots.front();
    return env::OpenApptainer(std::move(apptainer));
  }
  if (t.pool_hosts.empty()) {
    return Err(InvalidArgumentError("terminal.backend pool needs terminal.pool.hosts"));
  }
  std::shared_ptr<env::HostPool> pool = TALARIA_TRY(PoolFor(t));
  return pool->Acquire(session_id);
}

}  // namespace talaria::tools
