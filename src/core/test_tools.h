// Tests register tools on a Registry of their own: this fills in the schema (from the spec's
// name and an object schema for its parameters) and the toolset ("test" when unset).
#pragma once

#include <string>
#include <string_view>

#include "talaria/base/status.h"
#include "talaria/core/registry.h"

namespace talaria {

inline Status RegisterTestTool(Registry& registry, ToolSpec spec, std::string_view params) {
  std::string schema = R"({"name":")";
  schema += spec.name;
  schema += R"(","description":"test tool","parameters":)";
  schema += params;
  schema += "}";
  spec.schema = std::string_view(schema);
  if (spec.toolset.empty()) spec.toolset = "test";
  return registry.Register(std::move(spec));
}

}  // namespace talaria
