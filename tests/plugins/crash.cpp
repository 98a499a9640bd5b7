// Aborts inside registration: the trial process must die of it, not talaria.
#include <stdlib.h>

#include "plugin_common.h"

TALARIA_PLUGIN_DEFINE_VERSION();

TALARIA_PLUGIN_EXPORT int talaria_register_tools(const talaria_plugin_host*) { abort(); }
