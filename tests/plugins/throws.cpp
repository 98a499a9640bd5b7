// Stages one tool, then throws out of the entry point: the tool must not be published.
#include <stdexcept>

#include "plugin_common.h"

TALARIA_PLUGIN_DEFINE_VERSION();

TALARIA_PLUGIN_EXPORT int talaria_register_tools(const talaria_plugin_host* host) {
  test_plugin::RegisterTool(host, "throws_tool", "test", test_plugin::kEmptySchema);
  throw std::runtime_error("plugin setup exploded");
}
