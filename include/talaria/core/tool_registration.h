// Self-registration: a tool file declares its tool at namespace scope, and nothing else in the
// tree lists it.
//
//   TALARIA_TOOL(ReadFile, [] {
//     talaria::ToolSpec spec;
//     ...
//     return spec;
//   }());
//
// The spec is registered into Registry::Global() during static initialization. Built-in tools
// are compiled into the talaria library itself, so the linker keeps every such object.
// A failing registration is logged to stderr; it never aborts the process.
#pragma once

#include "talaria/core/tool_entry.h"

namespace talaria::internal {

struct ToolRegistrar {
  explicit ToolRegistrar(ToolSpec spec);
};

}  // namespace talaria::internal

#define TALARIA_TOOL(ident, spec_expr) \
  static const ::talaria::internal::ToolRegistrar talaria_tool_registrar_##ident { spec_expr }
