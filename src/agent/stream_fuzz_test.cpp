// The stream fuzzer: scripted turns rendered as the providers render them (indexed calls with
// the id and name on the first delta only, index-only, id in every delta without an index,
// Ollama's whole calls at index 0, id-only sequential deltas), with the calls' argument
// fragments interleaved at random, then fed in pieces split at every byte boundary and at
// random: every split must assemble the same calls, none merged or lost.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/sse_parser.h"
#include "agent/stream_assembler.h"

namespace talaria::agent {
namespace {
namespace fuzz {

enum class Style : unsigned char {
  kIndexed,
  kIndexOnly,
  kIdEveryDelta,
  kOllama,
  kIdOnlySequential
};

struct ScriptedCall {
  std::string id;
  std::string name;
  std::string arguments;
};

struct Script {
  std::string content;
  std::vector<ScriptedCall> calls;
};

const char* const kWords[] = {"alpha",  "β-beta", "\"quoted\"", "back\\slash", "new\nline",
                              "日本語", "tab\t",  "{brace}",    "[list]",      "emoji 😀"};

Script MakeScript(std::mt19937& rng, int max_calls = 6, int max_len = 8) {
  Script script;
  std::uniform_int_distribution<int> calls(1, max_calls), words(0, 9), len(1, max_len);
  for (int i = 0, n = len(rng); i < n; ++i) script.content += std::string(kWords[words(rng)]) + " ";
  for (int c = 0, n = calls(rng); c < n; ++c) {
    Json args = Json::object();
    for (int k = 0, m = len(rng); k < m; ++k) {
      args["k" + std::to_string(k)] = std::string(kWords[words(rng)]) + std::to_string(c);
    }
    if (c % 2 == 1) args["nested"] = {{"list", {1, 2, {{"x", kWords[words(rng)]}}}}};
    script.calls.push_back({"call_" + std::to_string(c) + "_" + std::to_string(rng() % 1000),
                            c % 3 == 0 ? "read_file" : "terminal", args.dump()});
  }
  return script;
}

// `text` cut into pieces of 1..9 bytes, never inside a UTF-8 sequence.
std::vector<std::string> Fragments(const std::string& text, std::mt19937& rng) {
  std::vector<std::string> out;
  std::uniform_int_distribution<size_t> len(1, 9);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = std::min(text.size(), pos + len(rng));
    while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
    out.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

std::string Event(const Json& delta, const Json& finish = nullptr) {
  Json chunk = {
      {"id", "chatcmpl-1"},
      {"object", "chat.completion.chunk"},
      {"choices", Json::array({{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}})}};
  return "data: " + chunk.dump() + "\n\n";
}

std::string Render(const Script& script, Style style, std::mt19937& rng) {
  std::string body = Event({{"role", "assistant"}, {"content", ""}});
  for (const std::string& piece : Fragments(script.content, rng)) {
    body += Event({{"content", piece}});
  }
  // Each call's deltas: the first carries id and name.
  std::vector<std::vector<Json>> deltas(script.calls.size());
  for (size_t c = 0; c < script.calls.size(); ++c) {
    const ScriptedCall& call = script.calls[c];
    if (style == Style::kOllama) {
      deltas[c].push_back({{"index", 0},
                           {"id", call.id},
                           {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
      continue;
    }
    std::vector<std::string> pieces = Fragments(call.arguments, rng);
    for (size_t p = 0; p < pieces.size(); ++p) {
      Json d = {{"function", {{"arguments", pieces[p]}}}};
      if (style == Style::kIndexed || style == Style::kIndexOnly) d["index"] = c;
      const bool first = p == 0;
      if (first) d["function"]["name"] = call.name;
      if ((first && style != Style::kIndexOnly) || style == Style::kIdEveryDelta) d["id"] = call.id;
      if (!first && style == Style::kIndexed && rng() % 4 == 0) d["function"]["name"] = call.name;
      deltas[c].push_back(std::move(d));
    }
  }
  // Interleave: the calls start in order; once started, any started call may go next, unless
  // the provider's framing cannot tell them apart.
  const bool interleave =
      style == Style::kIndexed || style == Style::kIndexOnly || style == Style::kIdEveryDelta;
  std::vector<size_t> next(script.calls.size(), 0);
  size_t started = 0;
  size_t remaining = 0;
  for (const auto& d : deltas) remaining += d.size();
  while (remaining > 0) {
    std::vector<size_t> choices;
    for (size_t c = 0; c < started; ++c) {
      if (next[c] < deltas[c].size() && (interleave || c + 1 == started)) choices.push_back(c);
    }
    if (started < deltas.size() && (interleave || choices.empty())) choices.push_back(started);
    const size_t c = choices[rng() % choices.size()];
    if (c == started) ++started;
    Json delta = {{"tool_calls", Json::array({deltas[c][next[c]++]})}};
    if (rng() % 5 == 0) body += ": keep-alive\n\n";
    body += Event(delta);
    --remaining;
  }
  body += Event(Json::object(), script.calls.empty() ? "stop" : "tool_calls");
  body += "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5}}\n\n";
  if (rng() % 2 == 0) body += "data: [DONE]\n\n";
  return body;
}

struct Feeder : SseParser::Handler {
  Status OnEvent(std::string_view event, std::string_view data) override {
    return assembler.OnEvent(event, data);
  }
  StreamAssembler assembler;
};

// The calls and content assembled from `body` cut at `cuts` (ascending offsets).
std::string AssembleAt(const std::string& body, const std::vector<size_t>& cuts) {
  Feeder feeder;
  SseParser parser(&feeder);
  size_t pos = 0;
  for (size_t cut : cuts) {
    if (!parser.Feed(std::string_view(body).substr(pos, cut - pos)).ok()) return "feed failed";
    pos = cut;
  }
  if (!parser.Feed(std::string_view(body).substr(pos)).ok()) return "feed failed";
  if (!parser.Finish().ok()) return "finish failed";
  AssembledTurn turn = feeder.assembler.Finish();
  std::string out = turn.content + "|" + turn.finish_reason + "|";
  for (const ToolCall& call : turn.tool_calls) {
    out += call.id + "/" + call.name + "/" + call.arguments + (call.truncated ? "/T" : "") + "|";
  }
  return out;
}

std::string Expected(const Script& script, Style style) {
  std::string out = script.content + "|" + (script.calls.empty() ? "stop" : "tool_calls") + "|";
  for (const ScriptedCall& call : script.calls) {
    out +=
        (style == Style::kIndexOnly ? "" : call.id) + "/" + call.name + "/" + call.arguments + "|";
  }
  return out;
}

std::string NamedEvents(const std::string& body) {
  std::string out;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t line_end = body.find('\n', pos);
    if (line_end == std::string::npos) line_end = body.size() - 1;
    if (body.compare(pos, 5, "data:") == 0) out += "event: chunk\n";
    out.append(body, pos, line_end + 1 - pos);
    pos = line_end + 1;
  }
  return out;
}

std::string WithCrLf(const std::string& body) {
  std::string out;
  for (char c : body) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

TEST(StreamFuzz, EverySplitOfEveryProviderStyleAssemblesTheSameCalls) {
  std::mt19937 rng(20'2026);
  int bodies = 0;
  int splits = 0;
  for (Style style : {Style::kIndexed, Style::kIndexOnly, Style::kIdEveryDelta, Style::kOllama,
                      Style::kIdOnlySequential}) {
    for (int round = 0; round < 12; ++round) {
      // The first round of each style is cut at every byte boundary: a smaller turn.
      const Script script = round == 0 ? MakeScript(rng, 3, 3) : MakeScript(rng);
      std::string body = Render(script, style, rng);
      if (round % 3 == 2) body = WithCrLf(body);
      // Named events skip the chunk scanner: the DOM path must assemble the same.
      if (round % 4 == 3) body = NamedEvents(body);
      const std::string want = Expected(script, style);
      ++bodies;
      ASSERT_EQ(AssembleAt(body, {}), want) << "style " << static_cast<int>(style);
      // Every byte boundary (two pieces) for the first rounds of each style.
      if (round == 0) {
        for (size_t cut = 1; cut < body.size(); ++cut, ++splits) {
          ASSERT_EQ(AssembleAt(body, {cut}), want) << "cut at " << cut;
        }
        std::vector<size_t> every;
        for (size_t cut = 1; cut < body.size(); ++cut) every.push_back(cut);
        ASSERT_EQ(AssembleAt(body, every), want) << "one byte at a time";
      }
      // Random multi-piece splits.
      for (int r = 0; r < 25; ++r, ++splits) {
        std::vector<size_t> cuts;
        for (size_t pos = 0;;) {
          pos += 1 + rng() % 40;
          if (pos >= body.size()) break;
          cuts.push_back(pos);
        }
        ASSERT_EQ(AssembleAt(body, cuts), want) << "random split " << r;
      }
    }
  }
  EXPECT_EQ(bodies, 60);
  EXPECT_GT(splits, 3'000);
}

std::string Summary(const AssembledTurn& turn) {
  std::string out = turn.content + "|" + turn.reasoning + "|" + turn.refusal + "|" +
                    turn.finish_reason + "|" + turn.model + "|";
  for (const ToolCall& call : turn.tool_calls) {
    out += call.id + "/" + call.name + "/" + call.arguments + "|";
  }
  return out;
}

// The chunk scanner against the DOM on mutated chunks: wherever the DOM reads a chunk, the
// scanner (when it accepts the chunk at all) must assemble the same.
TEST(StreamFuzz, ChunkScannerAgreesWithTheDomOnMutatedChunks) {
  std::mt19937 rng(7);
  std::vector<std::string> chunks;
  for (Style style : {Style::kIndexed, Style::kIdEveryDelta, Style::kOllama}) {
    const std::string body = Render(MakeScript(rng), style, rng);
    for (size_t pos = 0; pos < body.size();) {
      const size_t end = body.find("\n\n", pos);
      if (body.compare(pos, 6, "data: ") == 0)
        chunks.push_back(body.substr(pos + 6, end - pos - 6));
      pos = end + 2;
    }
  }
  chunks.push_back(
      R"({"choices":[{"index":0,"delta":{"reasoning_content":null,"reasoning":"r"}}]})");
  chunks.push_back(R"({"model":null,"choices":[{"delta":{"content":"\u00e9\ud83d\ude00\n"}}]})");
  const std::string alphabet = "{}[]\",:\\ 0123456789abcdeflnrstu-.\x80\xc3\xa9";
  int compared = 0;
  for (int round = 0; round < 20'000; ++round) {
    std::string data = chunks[rng() % chunks.size()];
    for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0 && !data.empty(); --edits) {
      const size_t at = rng() % data.size();
      switch (rng() % 4) {
        case 0:
          data[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          data.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
        case 2:
          data.erase(at, 1 + rng() % 4);
          break;
        default:
          data.resize(at);
      }
    }
    StreamAssembler fast;
    StreamAssembler dom;
    const Status dom_status = dom.OnEvent("dom-only", data);  // named: no scanner
    const Status fast_status = fast.OnEvent("", data);
    if (!dom_status.ok()) continue;  // the scanner may be more lenient with skipped fields
    ASSERT_TRUE(fast_status.ok()) << data;
    const AssembledTurn dom_turn = dom.Finish();
    const AssembledTurn fast_turn = fast.Finish();
    if (dom_turn.error) continue;  // the DOM took an error object; the scanner declines those
    ASSERT_EQ(Summary(fast_turn), Summary(dom_turn)) << data;
    ++compared;
  }
  EXPECT_GT(compared, 2'000);
}

TEST(StreamFuzz, DeepNestingIsRefusedNotRecursedInto) {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  for (const std::string& data :
       {"{\"error\":" + deep + "}", "{\"choices\":[{\"delta\":{\"x\":" + deep + "}}]}"}) {
    StreamAssembler assembler;
    EXPECT_EQ(assembler.OnEvent("", data).code(), StatusCode::kInvalidArgument);
  }
  EXPECT_FALSE(ParseCompletion("{\"choices\":" + deep + "}").has_value());
}

}  // namespace fuzz
}  // namespace
}  // namespace talaria::agent
