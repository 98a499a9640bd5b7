// A plugin built against a future interface version: the pre-scan must skip it unloaded.
#include "plugin_common.h"

TALARIA_PLUGIN_EXPORT const uint32_t talaria_plugin_interface_version = 999;

TALARIA_PLUGIN_EXPORT int talaria_register_tools(const talaria_plugin_host* host) {
  return test_plugin::RegisterTool(host, "wrong_version_tool", "test", test_plugin::kEmptySchema);
}
