// CheckpointSettingsFromConfig: config.yaml's `checkpoints` section.
#include "talaria/checkpoints/checkpoint_store.h"
#include "talaria/core/config_section.h"

namespace talaria::checkpoints {
namespace {
[[maybe_unused]] const bool kSectionDeclared = (DeclareConfigSection("checkpoints"), true);
}  // namespace

Result<CheckpointSettings> CheckpointSettingsFromConfig(const Config& config) {
  CheckpointSettings s;
  const ConfigSection c = TALARIA_TRY(ConfigSection::Of(config, "checkpoints"));
  TALARIA_RETURN_IF_ERROR(c.ReadBool("enabled", s.enabled));
  int64_t snapshots = s.max_snapshots;
  TALARIA_RETURN_IF_ERROR(c.ReadInt("max_snapshots", 1, 10000, snapshots));
  s.max_snapshots = static_cast<int>(snapshots);
  int64_t total_mb = static_cast<int64_t>(s.max_total_bytes >> 20);
  TALARIA_RETURN_IF_ERROR(c.ReadInt("max_total_size_mb", 1, int64_t{1} << 30, total_mb));
  s.max_total_bytes = static_cast<uint64_t>(total_mb) << 20;
  int64_t file_mb = static_cast<int64_t>(s.max_file_bytes >> 20);
  TALARIA_RETURN_IF_ERROR(c.ReadInt("max_file_size_mb", 1, 4095, file_mb));
  s.max_file_bytes = static_cast<uint64_t>(file_mb) << 20;
  int64_t files = static_cast<int64_t>(s.max_files);
  TALARIA_RETURN_IF_ERROR(c.ReadInt("max_files", 1, 10000000, files));
  s.max_files = static_cast<size_t>(files);
  // The original's HERMES_CHECKPOINT_TIMEOUT range.
  int64_t timeout = s.timeout.count();
  TALARIA_RETURN_IF_ERROR(c.ReadInt("timeout_s", 10, 60, timeout));
  s.timeout = std::chrono::seconds(timeout);
  return s;
}

}  // namespace talaria::checkpoints
