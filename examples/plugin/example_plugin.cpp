// example_plugin: a talaria plugin with two tools, written against the C ABI of
// <talaria/plugin.h> only (no talaria library, no C++ standard library), so any compiler that
// produces a shared object for this machine can build it:
//
//   c++ -shared -fPIC -fvisibility=hidden -I<talaria>/include -o example_plugin.so
//   example_plugin.cpp cp example_plugin.so ~/.talaria/plugins/ && talaria plugins
//
//   example_echo  returns its arguments unchanged (read-only, may run in parallel)
//   example_add   {"a": int, "b": int} -> {"sum": a + b}
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talaria/plugin.h>

TALARIA_PLUGIN_DEFINE_VERSION();

namespace {

const char kEchoSchema[] =
    R"({"name":"example_echo","description":"Return the arguments unchanged",)"
    R"("parameters":{"type":"object","properties":{)"
    R"("text":{"type":"string","description":"any text"}}}})";

const char kAddSchema[] =
    R"({"name":"example_add","description":"Add two integers",)"
    R"("parameters":{"type":"object","properties":{)"
    R"("a":{"type":"integer","description":"first addend"},)"
    R"("b":{"type":"integer","description":"second addend"}},"required":["a","b"]}})";

int Echo(void*, const char* args, size_t length, const talaria_call* call) {
  call->set_result(call->context, args, length);
  return TALARIA_PLUGIN_OK;
}

// The host hands over compact JSON that already passed the schema, so "a" and "b" are integers.
// A real plugin would use a JSON library; this one only needs two numbers.
long long IntField(const char* json, const char* key) {
  char pattern[16];
  snprintf(pattern, sizeof pattern, "\"%s\":", key);
  const char* at = strstr(json, pattern);
  return at != nullptr ? strtoll(at + strlen(pattern), nullptr, 10) : 0;
}

int Add(void*, const char* args, size_t, const talaria_call* call) {
  char out[64];
  const int n =
      snprintf(out, sizeof out, "{\"sum\": %lld}", IntField(args, "a") + IntField(args, "b"));
  call->set_result(call->context, out, static_cast<size_t>(n));
  return TALARIA_PLUGIN_OK;
}

int Register(const talaria_plugin_host* host, const char* name, const char* schema,
             talaria_tool_handler handler, int parallel) {
  talaria_tool_def def;
  memset(&def, 0, sizeof def);
  def.struct_size = sizeof def;
  def.name = name;
  def.toolset = "example";
  def.schema_json = schema;
  def.handler = handler;
  def.parallel = parallel;
  return host->register_tool(host->context, &def);
}

}  // namespace

TALARIA_PLUGIN_EXPORT int talaria_register_tools(const talaria_plugin_host* host) {
  if (host->interface_version != TALARIA_PLUGIN_INTERFACE_VERSION) return TALARIA_PLUGIN_ERROR;
  int rc = Register(host, "example_echo", kEchoSchema, Echo, TALARIA_PARALLEL_SAFE);
  if (rc != TALARIA_PLUGIN_OK) return rc;
  return Register(host, "example_add", kAddSchema, Add, TALARIA_PARALLEL_SAFE);
}
