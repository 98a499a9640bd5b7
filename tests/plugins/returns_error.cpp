// Stages one tool, then reports an error: the tool must not be published.
#include "plugin_common.h"

TALARIA_PLUGIN_DEFINE_VERSION();

TALARIA_PLUGIN_EXPORT int talaria_register_tools(const talaria_plugin_host* host) {
  test_plugin::RegisterTool(host, "returns_error_tool", "test", test_plugin::kEmptySchema);
  host->set_error(host->context, "missing configuration file");
  return TALARIA_PLUGIN_ERROR;
}
