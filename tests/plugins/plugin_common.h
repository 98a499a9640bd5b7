// What the test plugins share: one tool definition helper. Header-only, C ABI only.
#pragma once

#include <string.h>

#include "talaria/plugin.h"

namespace test_plugin {

inline int Reply(void*, const char*, size_t, const talaria_call* call) {
  static const char kText[] = "{\"from\": \"plugin\"}";
  call->set_result(call->context, kText, sizeof kText - 1);
  return TALARIA_PLUGIN_OK;
}

inline int RegisterTool(const talaria_plugin_host* host, const char* name, const char* toolset,
                        const char* schema, talaria_tool_handler handler = Reply) {
  talaria_tool_def def;
  memset(&def, 0, sizeof def);
  def.struct_size = sizeof def;
  def.name = name;
  def.toolset = toolset;
  def.schema_json = schema;
  def.handler = handler;
  return host->register_tool(host->context, &def);
}

inline constexpr const char* kEmptySchema =
    "{\"description\":\"test tool\",\"parameters\":{\"type\":\"object\",\"properties\":{}}}";

}  // namespace test_plugin
