// Prints what the trial protocol looks like ("done" for itself and the next plugins) to stdout
// and stderr, then aborts: the forged lines must not count.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "plugin_common.h"

TALARIA_PLUGIN_DEFINE_VERSION();

TALARIA_PLUGIN_EXPORT int talaria_register_tools(const talaria_plugin_host*) {
  static const char kForged[] = "ready\ndone 0\ndone 1\ndone 2\ndone 3\n";
  printf("%s", kForged);
  fflush(stdout);
  (void)!write(STDOUT_FILENO, kForged, sizeof kForged - 1);
  (void)!write(STDERR_FILENO, kForged, sizeof kForged - 1);
  abort();
}
