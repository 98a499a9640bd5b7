// The recorded responses of real servers in ../shared/corpus/llm-streams/ (see its README.md):
// each is assembled to its `expect` whatever the chunk boundaries. Skipped where the folder is
// absent (a user's clone); the corpus is never copied into the repository.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/hermes_text.h"
#include "agent/sse_parser.h"
#include "agent/stream_assembler.h"
#include "talaria/base/file_io.h"

namespace talaria::agent {
namespace {

namespace fs = std::filesystem;

fs::path CorpusDir() {
  if (const char* dir = std::getenv("TALARIA_LLM_STREAMS_DIR")) return dir;
  return fs::path(TALARIA_SOURCE_DIR) / ".." / "shared" / "corpus" / "llm-streams";
}

struct Feeder : SseParser::Handler {
  explicit Feeder(int choice) : assembler(nullptr, choice) {}
  Status OnEvent(std::string_view event, std::string_view data) override {
    return assembler.OnEvent(event, data);
  }
  StreamAssembler assembler;
};

// Feeds `body` in pieces of `size` bytes (0: as one piece; -1: random sizes from `rng`).
AssembledTurn AssembleSse(const std::string& body, int size, int choice, std::mt19937& rng,
                          std::string& error) {
  Feeder feeder(choice);
  SseParser parser(&feeder);
  size_t pos = 0;
  while (pos < body.size()) {
    size_t n = size == 0 ? body.size() : static_cast<size_t>(size);
    if (size < 0) n = std::uniform_int_distribution<size_t>(1, 97)(rng);
    n = std::min(n, body.size() - pos);
    Status status = parser.Feed(std::string_view(body).substr(pos, n));
    if (!status.ok()) {
      error = status.ToString();
      return {};
    }
    pos += n;
  }
  Status status = parser.Finish();
  if (!status.ok()) error = status.ToString();
  return feeder.assembler.Finish();
}

std::string Nullable(const Json& value) {
  return value.is_string() ? value.get<std::string>() : "";
}

// The differences between what was assembled and what the case expects ("" when none).
std::string Compare(const AssembledTurn& turn, const Json& expect) {
  std::string diff;
  auto mismatch = [&](const std::string& what, const std::string& got, const std::string& want) {
    diff += what + ": got [" + got + "] want [" + want + "]\n";
  };
  if (turn.content != Nullable(expect["content"])) {
    mismatch("content", turn.content, Nullable(expect["content"]));
  }
  if (turn.finish_reason != Nullable(expect["finish_reason"])) {
    mismatch("finish_reason", turn.finish_reason, Nullable(expect["finish_reason"]));
  }
  if (expect.contains("reasoning") && turn.reasoning != Nullable(expect["reasoning"])) {
    mismatch("reasoning", turn.reasoning, Nullable(expect["reasoning"]));
  }
  if (expect.contains("refusal") && turn.refusal != Nullable(expect["refusal"])) {
    mismatch("refusal", turn.refusal, Nullable(expect["refusal"]));
  }
  if (expect.contains("error")) {
    if (!turn.error || *turn.error != expect["error"]) {
      mismatch("error", turn.error ? turn.error->dump() : "none", expect["error"].dump());
    }
  } else if (turn.error) {
    mismatch("error", turn.error->dump(), "none");
  }
  const Json& calls = expect["tool_calls"];
  if (turn.tool_calls.size() != calls.size()) {
    mismatch("tool call count", std::to_string(turn.tool_calls.size()),
             std::to_string(calls.size()));
    return diff;
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    const ToolCall& got = turn.tool_calls[i];
    const Json& want = calls[i];
    const std::string at = "call " + std::to_string(i) + " ";
    if (got.id != Nullable(want["id"])) mismatch(at + "id", got.id, Nullable(want["id"]));
    if (got.name != Nullable(want["name"])) mismatch(at + "name", got.name, Nullable(want["name"]));
    if (want["arguments"].is_null()) {
      if (got.arguments != Nullable(want["arguments_raw"])) {
        mismatch(at + "raw arguments", got.arguments, Nullable(want["arguments_raw"]));
      }
    } else {
      Json parsed = got.arguments.empty()
                        ? Json::object()
                        : Json::parse(got.arguments, nullptr, /*allow_exceptions=*/false);
      if (parsed != want["arguments"]) {
        mismatch(at + "arguments", got.arguments, want["arguments"].dump());
      }
    }
  }
  return diff;
}

std::string CompareTextCalls(const std::string& content, const Json& expect) {
  HermesExtraction extracted = ExtractHermesToolCalls(content);
  AssembledTurn as_turn;
  as_turn.tool_calls = extracted.tool_calls;
  Json as_expect = {
      {"content", content}, {"finish_reason", nullptr}, {"tool_calls", expect["text_tool_calls"]}};
  as_turn.content = content;
  return Compare(as_turn, as_expect);
}

TEST(StreamCorpus, EveryRecordedResponseAssemblesToItsExpectAtEveryChunkSize) {
  const fs::path dir = CorpusDir();
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no corpus at " << dir;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  std::mt19937 rng(20);
  int checked = 0;
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.filename().string());
    auto text = ReadWholeFile(file.string());
    ASSERT_TRUE(text.has_value());
    Json doc = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(doc.is_object());
    const std::string body = doc["body"].get<std::string>();
    const Json& expect = doc["expect"];
    if (file.filename() == "openllmetry-writer-concatenated-args-json.json") {
      // Its expect (one call, seven argument objects glued together) is what a client that
      // reads "index": null as 0 makes of the body; the body itself holds seven calls, each
      // with its own id and valid arguments. Merging them is the bug class the fuzzer guards
      // against, so here: seven calls, and nothing lost (their arguments make the glued text).
      auto turn = ParseCompletion(body);
      ASSERT_TRUE(turn.has_value()) << turn.error().ToString();
      ASSERT_EQ(turn->tool_calls.size(), 7u);
      std::string glued;
      std::set<std::string> ids;
      for (const ToolCall& call : turn->tool_calls) {
        EXPECT_TRUE(IsValidJsonText(call.arguments)) << call.arguments;
        EXPECT_EQ(call.name, "get_weather");
        glued += call.arguments;
        ids.insert(call.id);
      }
      EXPECT_EQ(glued, expect["tool_calls"][0]["arguments_raw"].get<std::string>());
      EXPECT_EQ(ids.size(), 7u);
    } else if (doc["kind"] == "json") {
      auto turn = ParseCompletion(body);
      ASSERT_TRUE(turn.has_value()) << turn.error().ToString();
      EXPECT_EQ(Compare(*turn, expect), "");
    } else {
      // Every size up to 130 bytes, some larger ones, the whole body, and random cuts.
      std::vector<int> sizes;
      for (int n = 1; n <= 130; ++n) sizes.push_back(n);
      for (int n : {257, 1000, 4096, 0, -1, -1, -1}) sizes.push_back(n);
      for (int size : sizes) {
        std::string error;
        AssembledTurn turn = AssembleSse(body, size, 0, rng, error);
        ASSERT_EQ(error, "") << "chunk size " << size;
        const std::string diff = Compare(turn, expect);
        ASSERT_EQ(diff, "") << "chunk size " << size;
      }
      if (expect.contains("other_choices")) {
        for (const Json& other : expect["other_choices"]) {
          std::string error;
          AssembledTurn turn = AssembleSse(body, 5, other["index"].get<int>(), rng, error);
          EXPECT_EQ(error, "");
          EXPECT_EQ(Compare(turn, other), "") << "choice " << other["index"];
        }
      }
    }
    // Calls written as text: the Hermes format is parsed; a Llama-3 JSON object left in the
    // content is not taken for a call (any answer in JSON would be).
    if (expect.contains("text_tool_calls") &&
        Nullable(expect["content"]).find("<tool_call>") != std::string::npos) {
      EXPECT_EQ(CompareTextCalls(Nullable(expect["content"]), expect), "");
    }
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(files.size()));
}

}  // namespace
}  // namespace talaria::agent
