// Exports the entry point but no interface version: skipped by the pre-scan.
#include "plugin_common.h"

TALARIA_PLUGIN_EXPORT int talaria_register_tools(const talaria_plugin_host* host) {
  return test_plugin::RegisterTool(host, "no_version_tool", "test", test_plugin::kEmptySchema);
}
