#include "bench_common.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

namespace talaria_bench {

int64_t Count(const Options& opts, int64_t full, int64_t min_quick) {
  if (!opts.quick) return full;
  return std::max(full / 100, min_quick);
}

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string Hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

uint64_t Fnv1a64Joined(const std::vector<std::string>& names) {
  std::string joined;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) joined += '\n';
    joined += names[i];
  }
  return Fnv1a64(joined);
}

void SelfTest() {
  bool ok = SplitMix64(0).Next() == 0xe220a8397b1dcdafULL;
  SplitMix64 g(0x5EED0003);
  ok = ok && g.Next() == 0xac4dd1641a6e5ca4ULL && g.Next() == 0x7588ff52ced1f484ULL &&
       g.Next() == 0x48468c3ed12542e8ULL;
  ok = ok && Fnv1a64("a") == 0xaf63dc4c8601ec8cULL;
  if (!ok) {
    std::fprintf(stderr, "self-test failed: splitmix64/fnv1a64 test vectors differ\n");
    std::exit(3);
  }
}

void PrintHashMetric(std::string_view name, uint64_t hash) {
  std::printf("METRIC %.*s %s hash\n", static_cast<int>(name.size()), name.data(),
              Hex16(hash).c_str());
  std::fflush(stdout);
}

void Check(bool ok, std::string_view what) {
  if (ok) return;
  std::fprintf(stderr, "CHECK FAILED: %.*s\n", static_cast<int>(what.size()), what.data());
  std::exit(2);
}

void CheckHash(std::string_view metric, uint64_t got, uint64_t want) {
  PrintHashMetric(metric, got);
  Check(got == want, std::string(metric) + ": got " + Hex16(got) + ", spec says " + Hex16(want));
}

Json BenchSchema(std::string_view name, int k) {
  auto prop = [](const char* type, const char* description) {
    Json p = Json::object();
    p["type"] = type;
    p["description"] = description;
    return p;
  };
  Json properties = Json::object();
  properties["n"] = prop("integer", "an integer");
  properties["flag"] = prop("boolean", "a boolean");
  properties["s"] = prop("string", "a string");
  Json parameters = Json::object();
  parameters["type"] = "object";
  parameters["properties"] = std::move(properties);
  parameters["required"] = Json::array({"n"});
  Json schema = Json::object();
  schema["name"] = std::string(name);
  schema["description"] = "Benchmark tool " + std::to_string(k);
  schema["parameters"] = std::move(parameters);
  return schema;
}

talaria::ToolResult BenchHandler(const Json& args, talaria::ToolContext& /*ctx*/) {
  std::string text;
  text.reserve(40);
  text += "{\"ok\": true, \"n\": ";
  auto it = args.find("n");
  if (it == args.end()) {
    text += "null";
  } else if (it->is_number_integer()) {
    text += std::to_string(it->get<int64_t>());
  } else {
    text += talaria::DumpJsonPythonStyle(*it);
  }
  text += '}';
  return talaria::ToolResult::Text(std::move(text));
}

std::vector<std::string> BenchToolNames() {
  std::vector<std::string> names;
  names.reserve(kBenchTools);
  for (int k = 0; k < kBenchTools; ++k) names.push_back("tool_" + std::to_string(k));
  return names;
}

void RegisterBenchTools(talaria::Registry& registry) {
  for (int k = 0; k < kBenchTools; ++k) {
    const std::string name = "tool_" + std::to_string(k);
    const Json schema = BenchSchema(name, k);
    talaria::ToolSpec spec;
    spec.name = name;
    spec.toolset = std::string(kBenchToolset);
    spec.schema = schema;
    spec.handler = BenchHandler;
    talaria::Status s = registry.Register(std::move(spec));
    Check(s.ok(), "registering " + name + ": " + s.message());
  }
}

// Built like a dict literal: the object's storage (a vector of pairs) is sized once and each
// pair is constructed in place. operator[] would search the keys, insert a null and then
// assign a temporary, which made the map's construction cost more than the coercion of W2.
Json StringArgs() {
  Json args(Json::value_t::object);
  auto& pairs = args.get_ref<Json::object_t&>();
  pairs.reserve(3);
  pairs.emplace_back("n", "42");
  pairs.emplace_back("flag", "true");
  pairs.emplace_back("s", "x");
  return args;
}

Json TypedArgs() {
  Json args = Json::object();
  args.get_ref<Json::object_t&>().reserve(3);
  args["n"] = 42;
  args["flag"] = true;
  args["s"] = "x";
  return args;
}

}  // namespace talaria_bench
