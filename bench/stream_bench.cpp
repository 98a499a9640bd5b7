// talaria_stream_bench: the model client's stream parsing throughput (issue 20): an SSE body in
// OpenAI's chunk format, a mix of text deltas (60 %), reasoning deltas (10 %) and tool-call
// argument deltas over 4 interleaved calls (30 %), ~8 MB, fed through SseParser and
// StreamAssembler in 16 KB pieces as the network hands them over. The same body with named
// events takes the DOM path (no chunk scanner), for comparison.
//
//   talaria_stream_bench [--quick]
//   METRIC sse_parse_mb_per_s <median> MB/s
//   METRIC sse_parse_dom_mb_per_s <median> MB/s
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/sse_parser.h"
#include "agent/stream_assembler.h"
#include "bench_util.h"

namespace {

using Clock = std::chrono::steady_clock;
using talaria::Json;

const char* const kWords[] = {" the",  " file", " function", " returns",    " é",  " 日本",   " a",
                              " test", "\n",    " `x`",      " \"quoted\"", " 42", " because"};

std::string Chunk(const Json& delta, talaria_bench::SplitMix64& rng) {
  Json chunk = {
      {"id", "chatcmpl-Bx7kq2mZ0fT3"},
      {"object", "chat.completion.chunk"},
      {"created", 1764950400},
      {"model", "gpt-4.1-2025-04-14"},
      {"service_tier", "default"},
      {"system_fingerprint", "fp_51e1070cf2"},
      {"choices",
       Json::array(
           {{{"index", 0}, {"delta", delta}, {"logprobs", nullptr}, {"finish_reason", nullptr}}})}};
  if (rng.Below(2) == 0) chunk["obfuscation"] = "k2Fz9";
  return "data: " + chunk.dump() + "\n\n";
}

std::string MakeBody(size_t target, talaria_bench::SplitMix64& rng) {
  std::string body;
  int calls_open = 0;
  while (body.size() < target) {
    const uint64_t kind = rng.Below(10);
    std::string words;
    for (uint64_t i = 0, n = 1 + rng.Below(3); i < n; ++i) words += kWords[rng.Below(13)];
    if (kind < 6) {
      body += Chunk({{"content", words}}, rng);
    } else if (kind < 7) {
      body += Chunk({{"reasoning_content", words}}, rng);
    } else {
      const uint64_t index = rng.Below(4);
      Json call = {{"index", index}, {"function", {{"arguments", "{\\\"k\\\": \\\"" + words}}}};
      if (calls_open < 4 && static_cast<int>(index) >= calls_open) {
        call["id"] = "call_" + std::to_string(index);
        call["type"] = "function";
        call["function"]["name"] = "write_file";
        ++calls_open;
      }
      body += Chunk({{"tool_calls", Json::array({call})}}, rng);
    }
  }
  body +=
      "data: {\"id\":\"x\",\"choices\":[],\"usage\":{\"prompt_tokens\":9000,"
      "\"completion_tokens\":4000}}\n\ndata: [DONE]\n\n";
  return body;
}

std::string Named(const std::string& body) {
  std::string out;
  size_t pos = 0;
  while (pos < body.size()) {
    const size_t end = body.find('\n', pos);
    if (body.compare(pos, 5, "data:") == 0) out += "event: chunk\n";
    out.append(body, pos, end + 1 - pos);
    pos = end + 1;
  }
  return out;
}

struct Feeder : talaria::agent::SseParser::Handler {
  talaria::Status OnEvent(std::string_view event, std::string_view data) override {
    return assembler.OnEvent(event, data);
  }
  talaria::agent::StreamAssembler assembler;
};

// One pass: MB/s, and the assembled size (so the work is not optimised away).
double Pass(const std::string& body, size_t& sink) {
  const auto start = Clock::now();
  Feeder feeder;
  talaria::agent::SseParser parser(&feeder);
  for (size_t pos = 0; pos < body.size(); pos += 16384) {
    if (!parser.Feed(std::string_view(body).substr(pos, 16384)).ok()) return 0;
  }
  if (!parser.Finish().ok()) return 0;
  talaria::agent::AssembledTurn turn = feeder.assembler.Finish();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  sink += turn.content.size() + turn.reasoning.size() + turn.tool_calls.size();
  return static_cast<double>(body.size()) / 1e6 / seconds;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  talaria_bench::SplitMix64 rng(20);
  const std::string body = MakeBody(quick ? (1u << 20) : (8u << 20), rng);
  const std::string named = Named(body);
  const int passes = quick ? 3 : 9;
  size_t sink = 0;
  std::vector<double> fast;
  std::vector<double> dom;
  for (int i = 0; i < passes; ++i) {
    fast.push_back(Pass(body, sink));
    dom.push_back(Pass(named, sink));
  }
  std::fprintf(stderr, "body %zu bytes, assembled %zu\n", body.size(), sink / (2 * passes));
  talaria_bench::PrintMetric("sse_parse_mb_per_s", talaria_bench::Median(fast), "MB/s");
  talaria_bench::PrintMetric("sse_parse_dom_mb_per_s", talaria_bench::Median(dom), "MB/s");
  return 0;
}
