// MemorySettingsFromConfig: config.yaml's `memory:` section.
#include "talaria/core/config_section.h"
#include "talaria/memory/memory_store.h"

namespace talaria::memory {
namespace {

[[maybe_unused]] const bool kSectionDeclared = (DeclareConfigSection("memory"), true);

constexpr int64_t kMinLimit = 100;
constexpr int64_t kMaxLimit = 1'000'000;

}  // namespace

Result<MemorySettings> MemorySettingsFromConfig(const Config& config) {
  MemorySettings settings;
  ConfigSection section = TALARIA_TRY(ConfigSection::Of(config, "memory"));
  auto memory_limit = static_cast<int64_t>(settings.memory_char_limit);
  auto user_limit = static_cast<int64_t>(settings.user_char_limit);
  TALARIA_RETURN_IF_ERROR(section.ReadInt("memory_char_limit", kMinLimit, kMaxLimit, memory_limit));
  TALARIA_RETURN_IF_ERROR(section.ReadInt("user_char_limit", kMinLimit, kMaxLimit, user_limit));
  TALARIA_RETURN_IF_ERROR(section.ReadBool("write_approval", settings.write_approval));
  settings.memory_char_limit = static_cast<size_t>(memory_limit);
  settings.user_char_limit = static_cast<size_t>(user_limit);
  return settings;
}

}  // namespace talaria::memory
