// Registers through a wild pointer: the host's copy of the definition faults (SIGSEGV), in the
// trial process first.
#include <stdint.h>

#include "plugin_common.h"

TALARIA_PLUGIN_DEFINE_VERSION();

TALARIA_PLUGIN_EXPORT int talaria_register_tools(const talaria_plugin_host* host) {
  // An address no mapping ever covers on x86-64 or aarch64 user space (non-canonical / kernel).
  const auto* wild = reinterpret_cast<const talaria_tool_def*>(uintptr_t{0xdead000000000000});
  return host->register_tool(host->context, wild);
}
