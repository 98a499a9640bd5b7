// The C ABI between the lint module and libtalaria_python_lint.so, the shared object that embeds
// Debian's libpython3.11. libtalaria loads it with dlopen on the first Python lint, so the
// processes that never lint Python (most starts of `talaria mcp`, every embedder that does not)
// do not map libpython and relocate its ~39,000 relocations at startup.
// Thread-safety: both functions are thread-safe (the module serialises on the GIL).
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

#define TALARIA_PYLINT_MODULE "libtalaria_python_lint.so"

struct talaria_pylint_issue {
  int line;       // 1-based; 0: unknown
  int column;     // 1-based character offset as Python reports it; 0: unknown
  char kind[64];  // exception type name ("SyntaxError", "IndentationError", ...)
  char message[1024];
};

// Starts the embedded interpreter once (later calls return the first outcome).
// 0: running; -1: could not start, `error` (NUL-terminated, cut to error_size) says why.
typedef int (*talaria_pylint_start_fn)(char* error, unsigned long error_size);
// Compiles `source` (NUL-terminated) as file `filename`. 0: compiles; 1: `issue` describes the
// first error; -1: the interpreter is unavailable (issue->message says why).
typedef int (*talaria_pylint_check_fn)(const char* source, const char* filename,
                                       struct talaria_pylint_issue* issue);

// Outlines the classes `source` defines (ast.parse and a walk in the embedded interpreter; the
// source never runs). 0: *json_out is a malloc'd JSON text (free it with the module's
// talaria_pylint_free) listing the classes; 1: the source does not parse, `issue` says why;
// -1: the interpreter is unavailable (issue->message says why). Absent from older modules.
typedef int (*talaria_pylint_outline_fn)(const char* source, const char* filename, char** json_out,
                                         struct talaria_pylint_issue* issue);
typedef void (*talaria_pylint_free_fn)(char* text);

#ifdef __cplusplus
}
#endif
