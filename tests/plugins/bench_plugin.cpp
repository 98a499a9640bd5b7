// The W6 discovery benchmark's plugin: copies of this one file under the names
// bench_mod_NNNN.so each register the tool disc_NNNN (toolset "discovery") with the W6 schema;
// its handler answers {"ok": true, "tool": "disc_NNNN"}.
#include <stdio.h>
#include <string.h>

#include "talaria/plugin.h"

TALARIA_PLUGIN_DEFINE_VERSION();

namespace {

int Handle(void* data, const char*, size_t, const talaria_call* call) {
  char out[96];
  const int n =
      snprintf(out, sizeof out, "{\"ok\": true, \"tool\": \"%s\"}", static_cast<const char*>(data));
  call->set_result(call->context, out, static_cast<size_t>(n));
  return TALARIA_PLUGIN_OK;
}

// Tool names live as long as the process (the plugin is never unloaded): one static buffer per
// loaded copy, since every copy has its own data segment.
char g_name[80];
char g_schema[640];

}  // namespace

TALARIA_PLUGIN_EXPORT int talaria_register_tools(const talaria_plugin_host* host) {
  const char* suffix = strrchr(host->plugin_name, '_');
  snprintf(g_name, sizeof g_name, "disc_%s", suffix != nullptr ? suffix + 1 : host->plugin_name);
  snprintf(g_schema, sizeof g_schema,
           "{\"name\": \"%s\", \"description\": \"Discovery benchmark tool %s\", "
           "\"parameters\": {\"type\": \"object\", \"properties\": {"
           "\"n\": {\"type\": \"integer\", \"description\": \"an integer\"}, "
           "\"flag\": {\"type\": \"boolean\", \"description\": \"a boolean\"}, "
           "\"s\": {\"type\": \"string\", \"description\": \"a string\"}}, \"required\": [\"n\"]}}",
           g_name, suffix != nullptr ? suffix + 1 : "");
  talaria_tool_def def;
  memset(&def, 0, sizeof def);
  def.struct_size = sizeof def;
  def.name = g_name;
  def.toolset = "discovery";
  def.schema_json = g_schema;
  def.handler = Handle;
  def.user_data = g_name;
  return host->register_tool(host->context, &def);
}
