/* talaria/plugin.h: the C ABI a shared-object plugin implements.
 *
 * A plugin is a shared object (`*.so`) that exports exactly two symbols:
 *
 *   talaria_plugin_interface_version  a `const uint32_t` data object holding the interface
 *                                     version the plugin was built against
 *                                     (TALARIA_PLUGIN_DEFINE_VERSION() defines it);
 *   talaria_register_tools            the entry point, a C function receiving the host's
 *                                     registration interface.
 *
 * Discovery reads both from the file before anything of the plugin runs: it looks the symbols
 * up in the ELF dynamic symbol table and reads the version's value from the file, so a plugin
 * built for another interface version is never even mapped. Only then is it dlopen'ed
 * (RTLD_NOW | RTLD_LOCAL) and talaria_register_tools called once, on the loading thread.
 *
 * Everything crossing the boundary is plain C: integers, NUL-terminated UTF-8 strings, JSON text
 * and function pointers, so a plugin may be written in C, or in C++ built by another compiler or
 * standard library. No memory changes owner across the boundary: the host copies every string it
 * is given before the call returns, and the plugin hands results back through a host callback
 * (set_result) instead of returning allocated memory.
 *
 * Rules for plugins:
 *  - Registration is all-or-nothing: tools registered during talaria_register_tools are staged
 *    and published together only when it returns TALARIA_PLUGIN_OK. A non-zero return (or a
 *    C++ exception escaping it, which the host catches as a courtesy) discards them all.
 *  - A plugin can add tools, never remove any, and cannot replace an existing tool (a built-in,
 *    an MCP tool, another plugin's) unless the user's config lists it under
 *    plugins.allow_shadowing. A refused register_tool call returns a non-zero code.
 *  - Handlers may run on any thread, concurrently; they must be thread-safe and must not let a
 *    C++ exception escape (the host converts one into an error result if it can, but that is
 *    undefined behaviour across compilers).
 *  - Loading and registration are rehearsed first in a throwaway process (talaria-plugin-trial):
 *    a plugin that crashes, exits or hangs there is reported as failed and never loaded into
 *    talaria. So static constructors and talaria_register_tools run twice on a plugin's first
 *    load (once per changed file after that): keep them free of side effects. A crash in a
 *    handler, or one that happens only sometimes, still takes the process down. Only install
 *    plugins you trust; the pre-scan and the trial protect against broken files, not against
 *    malicious code.
 *  - A loaded plugin is never unloaded (its handlers stay referenced by the registry).
 *
 * Minimal plugin (see examples/plugin/):
 *
 *   #include <talaria/plugin.h>
 *   TALARIA_PLUGIN_DEFINE_VERSION();
 *   static int Echo(void* data, const char* args, size_t len, const talaria_call* call) {
 *     call->set_result(call->context, args, len);
 *     return TALARIA_PLUGIN_OK;
 *   }
 *   TALARIA_PLUGIN_EXPORT int talaria_register_tools(const talaria_plugin_host* host) {
 *     talaria_tool_def def;
 *     memset(&def, 0, sizeof def);
 *     def.struct_size = sizeof def;
 *     def.name = "echo"; def.toolset = "example";
 *     def.schema_json = "{\"name\":\"echo\",\"description\":\"Echo the arguments\","
 *                       "\"parameters\":{\"type\":\"object\",\"properties\":{}}}";
 *     def.handler = Echo;
 *     return host->register_tool(host->context, &def);
 *   }
 */
#ifndef TALARIA_PLUGIN_H_
#define TALARIA_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define TALARIA_PLUGIN_EXTERN_C extern "C"
extern "C" {
#else
#define TALARIA_PLUGIN_EXTERN_C
#endif

/* Bumped on every incompatible change of the structs or rules below. A host loads a plugin only
 * when the plugin's talaria_plugin_interface_version equals a version the host supports (this
 * host: exactly TALARIA_PLUGIN_INTERFACE_VERSION). Compatible additions append fields to the
 * structs and are detected through their struct_size, without a version bump. */
#define TALARIA_PLUGIN_INTERFACE_VERSION 1u

#define TALARIA_PLUGIN_ENTRY_SYMBOL "talaria_register_tools"
#define TALARIA_PLUGIN_VERSION_SYMBOL "talaria_plugin_interface_version"

/* Return codes (entry point, register_tool, handlers). */
#define TALARIA_PLUGIN_OK 0
#define TALARIA_PLUGIN_ERROR 1            /* generic failure */
#define TALARIA_PLUGIN_INVALID_ARGUMENT 2 /* register_tool: bad definition or schema */
#define TALARIA_PLUGIN_ALREADY_EXISTS 3   /* register_tool: would replace an existing tool */
#define TALARIA_PLUGIN_UNSUPPORTED                                                              \
  4                                /* client_request: no MCP client, or it lacks the capability \
                                    */
#define TALARIA_PLUGIN_CANCELLED 5 /* client_request: the call was cancelled or timed out */

/* talaria_tool_def.parallel: may calls of this tool run beside others in one model turn? */
#define TALARIA_PARALLEL_NEVER 0 /* a barrier: runs alone (the default) */
#define TALARIA_PARALLEL_SAFE 1  /* read-only and independent: may run beside other safe calls */

/* talaria_plugin_host.log levels. */
#define TALARIA_LOG_ERROR 0
#define TALARIA_LOG_WARN 1
#define TALARIA_LOG_INFO 2

#if defined(__GNUC__) || defined(__clang__)
#define TALARIA_PLUGIN_EXPORT TALARIA_PLUGIN_EXTERN_C __attribute__((visibility("default")))
#else
#define TALARIA_PLUGIN_EXPORT TALARIA_PLUGIN_EXTERN_C
#endif

/* Defines the version symbol. Use it exactly once, at file scope, in one source of the plugin. */
#define TALARIA_PLUGIN_DEFINE_VERSION()                                   \
  TALARIA_PLUGIN_EXPORT const uint32_t talaria_plugin_interface_version = \
      TALARIA_PLUGIN_INTERFACE_VERSION

/* One running call, as a handler sees it. Valid only until the handler returns. */
typedef struct talaria_call {
  uint32_t struct_size; /* sizeof(talaria_call) as the host compiled it */
  void* context;        /* opaque; pass it back to the callbacks below */
  /* Sets the call's result text (copied; a later call replaces it). On TALARIA_PLUGIN_OK the
   * text is the result the model sees (JSON by convention; an object with an "error" key marks
   * a failure, as for built-in tools). On any other return code the text is the error message. */
  void (*set_result)(void* context, const char* text, size_t length);
  /* Non-zero once the call is cancelled or past its deadline: long handlers poll it and return. */
  int (*is_cancelled)(void* context);

  /* The fields below were appended; a plugin uses one only when struct_size covers it
   * (TALARIA_CALL_HAS(call, field)). */

  /* Rich content for clients that render more than text: a JSON array of MCP content blocks
   * (text, image, audio, resource, resource_link; copied). The result text (set_result) stays
   * what the model sees, so set both. */
  void (*set_content)(void* context, const char* json, size_t length);
  /* The MCP client behind the call, when there is one (else these do nothing or return
   * TALARIA_PLUGIN_UNSUPPORTED). A log message (level: "debug" .. "emergency"; data: JSON). */
  void (*client_log)(void* context, const char* level, const char* data_json);
  /* Progress (sent only when the client asked for it and `progress` grew); total < 0: none. */
  void (*client_progress)(void* context, double progress, double total, const char* message);
  /* Sends a request ("elicitation/create", "sampling/createMessage", ...; params: a JSON object)
   * and waits for the answer within the call's deadline. On TALARIA_PLUGIN_OK `receive` gets the
   * result object's JSON; on TALARIA_PLUGIN_UNSUPPORTED (no client, or it lacks the capability),
   * TALARIA_PLUGIN_CANCELLED or TALARIA_PLUGIN_ERROR it gets the reason. `receive` runs before
   * client_request returns; its text is valid only during that call. */
  int (*client_request)(void* context, const char* method, const char* params_json,
                        void (*receive)(void* user, const char* text, size_t length), void* user);
} talaria_call;

/* Whether the host's talaria_call has `field` (hosts before an addition lack it). */
#define TALARIA_CALL_HAS(call, field)                                              \
  ((call)->struct_size >= offsetof(talaria_call, field) + sizeof((call)->field) && \
   (call)->field != NULL)

/* A tool's handler: `args_json` holds the coerced, schema-validated arguments as a JSON object
 * (`args_length` bytes, also NUL-terminated). Returns TALARIA_PLUGIN_OK or an error code. */
typedef int (*talaria_tool_handler)(void* user_data, const char* args_json, size_t args_length,
                                    const talaria_call* call);

/* What a plugin declares about one tool. Zero-initialize it and set struct_size = sizeof; fields
 * the host does not know (a newer plugin) are ignored, fields the plugin does not have (an older
 * plugin, smaller struct_size) take their defaults. */
typedef struct talaria_tool_def {
  uint32_t struct_size;
  const char* name;        /* the tool's wire name, [A-Za-z0-9_-]{1,64} */
  const char* toolset;     /* e.g. "example"; names starting "mcp-" are reserved */
  const char* schema_json; /* {"name", "description", "parameters": {object JSON Schema}} */
  talaria_tool_handler handler;
  void* user_data;   /* passed to the handler unchanged; must outlive the process */
  int32_t parallel;  /* TALARIA_PARALLEL_*; default NEVER */
  const char* emoji; /* NULL: the default */
} talaria_tool_def;

/* A resource (fixed URI) or resource template an MCP server may serve (appended in the same
 * interface version; see talaria_plugin_host.register_resource). The handler gets the requested
 * URI as `args_json` (a JSON object {"uri": "...", "variables": {"id": "123"}}) and sets as its
 * result the JSON array of MCP resource contents ([{uri, mimeType, text | blob}]); an error code
 * with a message, or the message "not found", fails the read. */
typedef struct talaria_resource_def {
  uint32_t struct_size;
  const char* toolset;       /* served when this toolset is selected */
  const char* resource_json; /* MCP Resource {uri, name, description?, mimeType?} or
                                ResourceTemplate {uriTemplate, name, ...}; may add "completions":
                                {"variable": ["candidate", ...]} for completion/complete */
  talaria_tool_handler read;
  void* user_data;
} talaria_resource_def;

/* A prompt an MCP server may serve. `prompt_json` is the MCP Prompt {name, description?,
 * arguments?: [{name, description?, required?}]}, optionally with "completions": {"arg":
 * ["candidate", ...]}. The handler gets the arguments (a JSON object of strings) and sets as its
 * result the GetPromptResult JSON ({"messages": [...]}). */
typedef struct talaria_prompt_def {
  uint32_t struct_size;
  const char* toolset;
  const char* prompt_json;
  talaria_tool_handler get;
  void* user_data;
} talaria_prompt_def;

/* The registration interface passed to talaria_register_tools. Valid only during that call. */
typedef struct talaria_plugin_host {
  uint32_t interface_version; /* TALARIA_PLUGIN_INTERFACE_VERSION of the host */
  uint32_t struct_size;       /* sizeof(talaria_plugin_host) as the host compiled it */
  void* context;              /* opaque; pass it back to the callbacks below */
  const char* plugin_name;    /* the file name without ".so", e.g. "example_plugin" */
  /* Stages one tool. TALARIA_PLUGIN_OK, or an error code with the reason logged and kept for
   * `talaria plugins`. The definition and its strings are copied before it returns. */
  int (*register_tool)(void* context, const talaria_tool_def* def);
  /* Records why registration failed (shown by `talaria plugins`); the last message wins. */
  void (*set_error)(void* context, const char* message);
  /* Writes one line to talaria's log, prefixed with the plugin's name. */
  void (*log)(void* context, int level, const char* message);
  /* Appended; check struct_size before use. Stage a resource / prompt for MCP serving, published
   * with the tools. Hosts that serve no MCP accept and ignore them. */
  int (*register_resource)(void* context, const talaria_resource_def* def);
  int (*register_prompt)(void* context, const talaria_prompt_def* def);
} talaria_plugin_host;

/* The entry point every plugin exports. Returns TALARIA_PLUGIN_OK to publish the staged tools. */
typedef int (*talaria_register_tools_fn)(const talaria_plugin_host* host);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TALARIA_PLUGIN_H_ */
