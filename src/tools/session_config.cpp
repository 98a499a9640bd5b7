// SessionOptionsFromConfig: the `terminal` and `files` sections of config.yaml.
#include "talaria/core/config.h"
#include "talaria/core/config_section.h"
#include "talaria/tools/session.h"

namespace talaria::tools {
namespace {
[[maybe_unused]] const bool kSectionDeclared = (DeclareConfigSection("terminal"), true);
}  // namespace

Result<SessionOptions> SessionOptionsFromConfig(const Config& config, SessionOptions base) {
  const ConfigSection t = TALARIA_TRY(ConfigSection::Of(config, "terminal"));
  TerminalSettings& s = base.terminal;
  TALARIA_RETURN_IF_ERROR(t.ReadString("backend", s.backend));
  const bool sandbox_service = s.backend == "modal" || s.backend == "daytona" ||
                               s.backend == "e2b" || s.backend == "kubernetes";
  if (s.backend != "auto" && s.backend != "local" && s.backend != "bwrap" && s.backend != "ssh" &&
      s.backend != "docker" && s.backend != "apptainer" && s.backend != "pool" &&
      !sandbox_service) {
    return Err(t.Bad("backend",
                     "one of auto, local, bwrap, ssh, docker, apptainer, pool, modal, daytona, "
                     "e2b, kubernetes (got '" +
                         s.backend + "')"));
  }
  TALARIA_RETURN_IF_ERROR(t.ReadStrings("env_passthrough", base.env_passthrough));
  TALARIA_RETURN_IF_ERROR(t.ReadBool("network", s.network));
  int64_t tmp_mb = static_cast<int64_t>(s.tmp_size_mb);
  TALARIA_RETURN_IF_ERROR(t.ReadInt("tmp_size_mb", 0, int64_t{1} << 20, tmp_mb));
  s.tmp_size_mb = static_cast<uint64_t>(tmp_mb);

  const ConfigSection ssh = TALARIA_TRY(t.Sub("ssh"));
  TALARIA_RETURN_IF_ERROR(ssh.ReadString("host", s.ssh_host));
  TALARIA_RETURN_IF_ERROR(ssh.ReadString("user", s.ssh_user));
  TALARIA_RETURN_IF_ERROR(ssh.ReadString("identity_file", s.ssh_identity_file));
  TALARIA_RETURN_IF_ERROR(ssh.ReadString("cwd", s.ssh_cwd));
  TALARIA_RETURN_IF_ERROR(ssh.ReadString("known_hosts_file", s.ssh_known_hosts_file));
  int64_t port = s.ssh_port;
  TALARIA_RETURN_IF_ERROR(ssh.ReadInt("port", 1, 65535, port));
  s.ssh_port = static_cast<int>(port);
  if (s.backend == "ssh" && s.ssh_host.empty())
    return Err(t.Bad("ssh.host", "set when backend is ssh"));

  const ConfigSection docker = TALARIA_TRY(t.Sub("docker"));
  TALARIA_RETURN_IF_ERROR(docker.ReadString("image", s.docker_image));
  TALARIA_RETURN_IF_ERROR(docker.ReadStrings("forward_env", s.docker_forward_env));

  const ConfigSection apptainer = TALARIA_TRY(t.Sub("apptainer"));
  TALARIA_RETURN_IF_ERROR(apptainer.ReadString("image", s.apptainer_image));
  TALARIA_RETURN_IF_ERROR(apptainer.ReadString("program", s.apptainer_program));
  const ConfigSection pool = TALARIA_TRY(t.Sub("pool"));
  TALARIA_RETURN_IF_ERROR(pool.ReadStrings("hosts", s.pool_hosts));
  TALARIA_RETURN_IF_ERROR(pool.ReadInt("health_interval_s", 1, 86400, s.pool_health_interval_s));
  if (s.backend == "pool" && s.pool_hosts.empty())
    return Err(t.Bad("pool.hosts", "set when backend is pool"));
  // The sandbox services' sections (terminal.modal, terminal.daytona, ...): the backend's own.
  for (const char* service : {"modal", "daytona", "e2b", "kubernetes"}) {
    const ConfigSection sb = TALARIA_TRY(t.Sub(service));
    if (s.backend != service) continue;
    TALARIA_RETURN_IF_ERROR(sb.ReadString("url", s.sandbox_url));
    TALARIA_RETURN_IF_ERROR(sb.ReadString("image", s.sandbox_image));
    TALARIA_RETURN_IF_ERROR(sb.ReadString("data_plane_url", s.sandbox_data_plane_url));
    TALARIA_RETURN_IF_ERROR(sb.ReadString("namespace", s.sandbox_namespace));
    TALARIA_RETURN_IF_ERROR(sb.ReadString("kubeconfig", s.sandbox_kubeconfig));
    TALARIA_RETURN_IF_ERROR(sb.ReadString("context", s.sandbox_kube_context));
    TALARIA_RETURN_IF_ERROR(sb.ReadString("warm_pool", s.sandbox_warm_pool));
    TALARIA_RETURN_IF_ERROR(sb.ReadString("ca_file", s.sandbox_ca_file));
    TALARIA_RETURN_IF_ERROR(sb.ReadString("token_file", s.sandbox_token_file));
    TALARIA_RETURN_IF_ERROR(sb.ReadString("organization", s.sandbox_organization));
    TALARIA_RETURN_IF_ERROR(sb.ReadString("cwd", s.sandbox_cwd));
    TALARIA_RETURN_IF_ERROR(sb.ReadBool("persistent", s.sandbox_persistent));
    TALARIA_RETURN_IF_ERROR(sb.ReadBool("sync", s.sandbox_sync));
  }

  const ConfigSection files = TALARIA_TRY(ConfigSection::Of(config, "files"));
  bool read_hard_links = base.hard_link_reads == safety::HardLinkReads::kAllow;
  TALARIA_RETURN_IF_ERROR(files.ReadBool("read_hard_links", read_hard_links));
  base.hard_link_reads =
      read_hard_links ? safety::HardLinkReads::kAllow : safety::HardLinkReads::kRefuse;
  base.checkpoints = TALARIA_TRY(checkpoints::CheckpointSettingsFromConfig(config));
  return base;
}

}  // namespace talaria::tools
