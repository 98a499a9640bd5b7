// Ends the process from a static constructor, before registration is even called.
#include <unistd.h>

#include "plugin_common.h"

TALARIA_PLUGIN_DEFINE_VERSION();

namespace {
struct ExitAtLoad {
  ExitAtLoad() { _exit(3); }
} exit_at_load;
}  // namespace

TALARIA_PLUGIN_EXPORT int talaria_register_tools(const talaria_plugin_host*) {
  return TALARIA_PLUGIN_OK;
}
