// Tries to replace the built-in read_file (same toolset, so the registry alone would allow it)
// and adds one tool of its own. It ignores the refusal, so it still loads.
#include "plugin_common.h"

TALARIA_PLUGIN_DEFINE_VERSION();

TALARIA_PLUGIN_EXPORT int talaria_register_tools(const talaria_plugin_host* host) {
  (void)test_plugin::RegisterTool(host, "read_file", "file", test_plugin::kEmptySchema);
  return test_plugin::RegisterTool(host, "shadow_extra", "shadow", test_plugin::kEmptySchema);
}
