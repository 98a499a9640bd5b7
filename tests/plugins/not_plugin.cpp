// An ordinary shared object: no talaria entry point, so the pre-scan skips it.
#include "plugin_common.h"

TALARIA_PLUGIN_EXPORT int some_library_function(int x) { return x * 2; }
