// The Python side of execute_code, generated as source text: the stub module scripts import
// (talaria_tools, re-exported as hermes_tools), and the bootstrap the interpreter runs first.
//
// The stubs keep the original's signatures (web_search(query, limit=5), read_file(path, offset=1,
// limit=2000), ...) and helpers (json_parse, shell_quote, retry); a stub forwards only the
// parameters the registered tool's schema knows, dropping None values. Calls may overlap: the
// module frames each request with an id and whichever waiting thread holds the read side hands
// answers to their callers.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

namespace talaria::tools::code {

// One tool the stubs cover, as the registry has it.
struct StubTool {
  std::string name;
  std::string description;
  std::vector<std::string> schema_params;  // property names of its parameters schema
};

// The tools with the original's stub signatures (sorted).
const std::vector<std::string>& StubbedToolNames();

// "read_file(path, offset=1, limit=2000)" for a stubbed tool; empty for others.
std::string StubSignature(const std::string& tool);
// The same, as the model is told it: only the parameters `schema_params` (the registered tool's
// schema) has. The stub still accepts the original's others, for scripts written for it.
std::string AdvertisedSignature(const std::string& tool,
                                const std::vector<std::string>& schema_params);

// talaria_tools.py for `tools` (each must be a stubbed tool).
std::string TalariaToolsModule(const std::vector<StubTool>& tools);
// hermes_tools.py: the same names under the original's module name.
std::string HermesToolsModule();

// The program given to `python3 -I -S -c`; its arguments are the script's path and the stub
// directory. It announces itself on descriptor 3 (the hello the host authenticates) before any
// user code runs, puts the stub directory on sys.path (-I leaves the script's own directory
// off), and runs the script as __main__ with line-buffered stdout (so a killed script still
// shows what it printed).
std::string BootstrapProgram();

}  // namespace talaria::tools::code
