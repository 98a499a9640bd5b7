// Embedding talaria: register a tool of your own next to the built-ins, then run model-style
// calls (stringly-typed arguments, as LLMs send them) through the full pipeline.
#include <cstdio>
#include <string>

#include <talaria/core/runtime.h>
#include <nlohmann/json.hpp>

int main() {
  talaria::ToolSpec spec;
  spec.name = "add";
  spec.toolset = "example";
  spec.schema = R"({"name": "add", "description": "Add two integers",
                    "parameters": {"type": "object",
                                   "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                                   "required": ["a", "b"]}})";
  spec.handler = [](const talaria::Json& args, talaria::ToolContext&) {
    const long sum = args["a"].get<long>() + args["b"].get<long>();
    return talaria::ToolResult::FromJson({{"sum", sum}});
  };
  if (auto s = talaria::Registry::Global().Register(std::move(spec)); !s.ok()) {
    std::fprintf(stderr, "register failed: %s\n", s.ToString().c_str());
    return 1;
  }

  auto runtime = talaria::Runtime::Create();
  if (!runtime) {
    std::fprintf(stderr, "runtime: %s\n", runtime.error().ToString().c_str());
    return 1;
  }
  talaria::Dispatcher& dispatcher = (*runtime)->dispatcher();
  talaria::ToolContext ctx;

  // "2" and "40" are strings, as a model might send them; coercion makes them integers.
  talaria::ToolResult ok = dispatcher.Dispatch("add", R"({"a": "2", "b": "40"})", ctx);
  std::printf("add -> %s\n", ok.text.c_str());
  talaria::ToolResult bad = dispatcher.Dispatch("add", R"({"a": "two"})", ctx);
  std::printf("bad -> %s\n", bad.text.c_str());

  auto tools = (*runtime)->toolsets().Resolve("all");
  std::printf("tools in 'all': %zu\n", tools ? (*tools)->size() : 0);
  return ok.ok() && !bad.ok() ? 0 : 1;
}
