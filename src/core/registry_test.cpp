#include "talaria/core/registry.h"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace talaria {
namespace {

ToolSpec MakeSpec(const std::string& name, const std::string& toolset) {
  ToolSpec spec;
  spec.name = name;
  spec.toolset = toolset;
  spec.schema = R"({"name": "ignored", "description": "a test tool",
                    "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}})";
  spec.handler = [name](const Json&, ToolContext&) { return ToolResult::Text(name); };
  return spec;
}

TEST(Registry, RegistersAndFindsATool) {
  Registry r;
  ASSERT_TRUE(r.Register(MakeSpec("alpha", "set")).ok());
  auto entry = r.GetEntry("alpha");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->name(), "alpha");
  EXPECT_EQ(entry->toolset(), "set");
  EXPECT_EQ(entry->description(), "a test tool");
  EXPECT_EQ(entry->emoji(), kDefaultEmoji);
  EXPECT_EQ(r.ToolsetOf("alpha"), "set");
  EXPECT_EQ(r.GetEntry("beta"), nullptr);
  EXPECT_EQ(r.ToolsetOf("beta"), std::nullopt);
  EXPECT_EQ(r.EmojiOf("beta"), kDefaultEmoji);
}

// PeekEntry remembers the entry it found last; a change to the registry (or a lookup in another
// registry on the same thread) must never hand back that stale entry.
TEST(Registry, PeekEntryFollowsChangesAndOtherRegistries) {
  Registry r;
  ASSERT_TRUE(r.Register(MakeSpec("alpha", "set")).ok());
  const ToolEntry* first = r.PeekEntry("alpha");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(r.PeekEntry("alpha"), first);
  EXPECT_EQ(r.PeekEntry("alph"), nullptr);
  EXPECT_EQ(r.PeekEntry("alphaa"), nullptr);

  ASSERT_TRUE(r.Deregister("alpha"));
  EXPECT_EQ(r.PeekEntry("alpha"), nullptr);
  ASSERT_TRUE(r.Register(MakeSpec("alpha", "other")).ok());
  const ToolEntry* second = r.PeekEntry("alpha");
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->toolset(), "other");

  Registry other;
  ASSERT_TRUE(other.Register(MakeSpec("alpha", "elsewhere")).ok());
  EXPECT_EQ(other.PeekEntry("alpha")->toolset(), "elsewhere");
  EXPECT_EQ(r.PeekEntry("alpha")->toolset(), "other");
}

TEST(Registry, ForcesTheSchemaNameToTheRegisteredName) {
  Registry r;
  ASSERT_TRUE(r.Register(MakeSpec("alpha", "set")).ok());
  auto schema = ParseJson(*r.SchemaOf("alpha"));
  ASSERT_TRUE(schema);
  EXPECT_EQ((*schema)["name"], "alpha");
}

TEST(Registry, RejectsMalformedSchemasAtRegistration) {
  Registry r;
  struct Case {
    const char* schema;
    const char* why;
  };
  const Case cases[] = {
      {R"([1, 2])", "schema must be a JSON object"},
      {R"({"name": "x", "parameters": "nope"})", "\"parameters\" must be a JSON object"},
      {R"({"name": "x", "parameters": {"type": "array"}})", "\"type\": \"object\""},
      {R"({"name": "x", "parameters": {"type": "object", "required": 5}})", "required"},
      {R"({"name": "x", "parameters": {"type": "object")", "schema"},
  };
  for (const auto& c : cases) {
    ToolSpec spec = MakeSpec("bad", "set");
    spec.schema = c.schema;
    Status s = r.Register(std::move(spec));
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.schema;
    EXPECT_NE(s.message().find(c.why), std::string::npos) << s.message();
  }
  EXPECT_EQ(r.GetEntry("bad"), nullptr);
  EXPECT_EQ(r.generation(), 0u);
}

TEST(Registry, RejectsSpecsWithoutHandlerOrNames) {
  Registry r;
  ToolSpec no_handler = MakeSpec("a", "set");
  no_handler.handler = nullptr;
  EXPECT_EQ(r.Register(std::move(no_handler)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.Register(MakeSpec("", "set")).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.Register(MakeSpec("a", "")).code(), StatusCode::kInvalidArgument);
  ToolSpec path_scoped = MakeSpec("a", "set");
  path_scoped.parallel = ParallelClass::kPathScoped;
  EXPECT_EQ(r.Register(std::move(path_scoped)).code(), StatusCode::kInvalidArgument);
}

TEST(Registry, RejectsANameClashAcrossToolsets) {
  Registry r;
  ASSERT_TRUE(r.Register(MakeSpec("reader", "file")).ok());
  Status s = r.Register(MakeSpec("reader", "plugin-x"));
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(s.message().find("shadow"), std::string::npos);
  EXPECT_EQ(r.GetEntry("reader")->toolset(), "file");
}

TEST(Registry, AllowsMcpOverMcpAndExplicitOverride) {
  Registry r;
  ASSERT_TRUE(r.Register(MakeSpec("mcp_fs_read", "mcp-a")).ok());
  ASSERT_TRUE(r.Register(MakeSpec("mcp_fs_read", "mcp-b")).ok());
  EXPECT_EQ(r.GetEntry("mcp_fs_read")->toolset(), "mcp-b");
  // mcp over a built-in is still a clash.
  ASSERT_TRUE(r.Register(MakeSpec("shell", "shell")).ok());
  EXPECT_FALSE(r.Register(MakeSpec("shell", "mcp-evil")).ok());
  RegisterOptions opts;
  opts.allow_override = true;
  EXPECT_TRUE(r.Register(MakeSpec("shell", "trusted-plugin"), opts).ok());
  EXPECT_EQ(r.GetEntry("shell")->toolset(), "trusted-plugin");
}

TEST(Registry, SameToolsetReRegistrationReplaces) {
  Registry r;
  ASSERT_TRUE(r.Register(MakeSpec("alpha", "set")).ok());
  ToolSpec second = MakeSpec("alpha", "set");
  second.emoji = "X";
  ASSERT_TRUE(r.Register(std::move(second)).ok());
  EXPECT_EQ(r.GetEntry("alpha")->emoji(), "X");
  EXPECT_EQ(r.Snapshot()->size, 1u);
  EXPECT_EQ(r.ToolsOfToolset("set"), std::vector<std::string>{"alpha"});
}

TEST(Registry, OnlyNewRefusesEvenASameToolsetReRegistration) {
  Registry r;
  ASSERT_TRUE(r.Register(MakeSpec("alpha", "set")).ok());
  RegisterOptions only_new;
  only_new.only_new = true;
  ToolSpec again = MakeSpec("alpha", "set");
  again.emoji = "X";
  EXPECT_EQ(r.Register(std::move(again), only_new).code(), StatusCode::kAlreadyExists);
  EXPECT_NE(r.GetEntry("alpha")->emoji(), "X");
  std::vector<ToolSpec> batch;
  batch.push_back(MakeSpec("beta", "set"));
  batch.push_back(MakeSpec("alpha", "set"));
  EXPECT_EQ(r.Replace({}, std::move(batch), only_new).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(r.GetEntry("beta"), nullptr);  // all or nothing
}

TEST(Registry, OnlyNewLetsExactlyOneOfManyRacingRegistrationsWin) {
  for (int round = 0; round < 50; ++round) {
    Registry r;
    constexpr int kWriters = 6;
    std::barrier start(kWriters);
    std::atomic<int> wins{0};
    std::vector<std::jthread> writers;
    for (int t = 0; t < kWriters; ++t) {
      writers.emplace_back([&, t] {
        RegisterOptions only_new;
        only_new.only_new = true;
        ToolSpec spec = MakeSpec("contested", "plugin-" + std::to_string(t % 2));
        spec.emoji = std::to_string(t);
        start.arrive_and_wait();
        if (r.Register(std::move(spec), only_new).ok()) ++wins;
      });
    }
    writers.clear();  // joins
    ASSERT_EQ(wins.load(), 1) << "round " << round;
    EXPECT_EQ(r.Snapshot()->size, 1u);
  }
}

TEST(Registry, EveryChangeBumpsTheGenerationAndOldSnapshotsStayIntact) {
  Registry r;
  auto before = r.Snapshot();
  ASSERT_TRUE(r.Register(MakeSpec("alpha", "set")).ok());
  EXPECT_EQ(r.generation(), 1u);
  auto middle = r.Snapshot();
  EXPECT_TRUE(r.Deregister("alpha"));
  EXPECT_EQ(r.generation(), 2u);
  EXPECT_FALSE(r.Deregister("alpha"));
  EXPECT_EQ(r.generation(), 2u);
  EXPECT_EQ(before->Find("alpha"), nullptr);
  ASSERT_NE(middle->Find("alpha"), nullptr);  // a reader's snapshot never changes under it
  EXPECT_EQ(r.Snapshot()->Find("alpha"), nullptr);
}

TEST(Registry, EntryOutlivesItsDeregistration) {
  Registry r;
  ASSERT_TRUE(r.Register(MakeSpec("alpha", "set")).ok());
  auto entry = r.GetEntry("alpha");
  ASSERT_TRUE(r.Deregister("alpha"));
  ToolContext ctx;
  EXPECT_EQ(entry->handler()(Json::object(), ctx).text, "alpha");
}

TEST(Registry, DeregisteringTheLastToolDropsChecksAndAliases) {
  Registry r;
  ToolSpec a = MakeSpec("a", "mcp-github");
  a.check_fn = [] { return true; };
  ASSERT_TRUE(r.Register(std::move(a)).ok());
  ASSERT_TRUE(r.Register(MakeSpec("b", "mcp-github")).ok());
  r.RegisterToolsetAlias("github", "mcp-github");
  EXPECT_EQ(r.ResolveToolsetAlias("github"), "mcp-github");
  EXPECT_TRUE(r.Snapshot()->toolset_checks.contains("mcp-github"));

  ASSERT_TRUE(r.Deregister("a"));
  EXPECT_EQ(r.ResolveToolsetAlias("github"), "mcp-github");  // b still there
  ASSERT_TRUE(r.Deregister("b"));
  EXPECT_EQ(r.ResolveToolsetAlias("github"), std::nullopt);
  EXPECT_FALSE(r.Snapshot()->toolset_checks.contains("mcp-github"));
  EXPECT_TRUE(r.ToolsetNames().empty());
}

TEST(Registry, ListenersHearEachChangeWithItsGeneration) {
  Registry r;
  std::vector<RegistryChange> seen;
  const int id = r.AddListener([&](const RegistryChange& c) { seen.push_back(c); });
  ASSERT_TRUE(r.Register(MakeSpec("alpha", "set")).ok());
  ASSERT_TRUE(r.Deregister("alpha"));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].generation, 1u);
  EXPECT_EQ(seen[0].added, std::vector<std::string>{"alpha"});
  EXPECT_EQ(seen[1].removed, std::vector<std::string>{"alpha"});
  r.RemoveListener(id);
  ASSERT_TRUE(r.Register(MakeSpec("beta", "set")).ok());
  EXPECT_EQ(seen.size(), 2u);
}

TEST(Registry, ReplaceIsOneChangeAndAllOrNothing) {
  Registry r;
  ASSERT_TRUE(r.Register(MakeSpec("mcp_s_a", "mcp-s")).ok());
  ASSERT_TRUE(r.Register(MakeSpec("builtin", "core")).ok());
  int changes = 0;
  r.AddListener([&](const RegistryChange&) { ++changes; });
  const std::vector<std::string> remove{"mcp_s_a"};
  std::vector<ToolSpec> add;
  add.push_back(MakeSpec("mcp_s_b", "mcp-s"));
  add.push_back(MakeSpec("mcp_s_c", "mcp-s"));
  ASSERT_TRUE(r.Replace(remove, std::move(add)).ok());
  EXPECT_EQ(changes, 1);
  EXPECT_EQ(r.ToolsOfToolset("mcp-s"), (std::vector<std::string>{"mcp_s_b", "mcp_s_c"}));

  std::vector<ToolSpec> clashing;
  clashing.push_back(MakeSpec("mcp_s_d", "mcp-s"));
  clashing.push_back(MakeSpec("builtin", "mcp-s"));  // shadows a built-in: refused
  const std::vector<std::string> remove_b{"mcp_s_b"};
  EXPECT_FALSE(r.Replace(remove_b, std::move(clashing)).ok());
  EXPECT_EQ(changes, 1);
  EXPECT_NE(r.GetEntry("mcp_s_b"), nullptr);
  EXPECT_EQ(r.GetEntry("mcp_s_d"), nullptr);
}

TEST(Registry, CheckResultsAreCachedForThirtySeconds) {
  ManualClock clock;
  Registry r(clock);
  int calls = 0;
  bool answer = true;
  ToolSpec spec = MakeSpec("alpha", "set");
  spec.check_fn = [&] {
    ++calls;
    return answer;
  };
  ASSERT_TRUE(r.Register(std::move(spec)).ok());
  EXPECT_TRUE(r.CheckAvailability("alpha").available);
  EXPECT_TRUE(r.CheckAvailability("alpha").available);
  EXPECT_EQ(calls, 1);
  clock.Advance(std::chrono::seconds(31));
  EXPECT_TRUE(r.CheckAvailability("alpha").available);
  EXPECT_EQ(calls, 2);
}

TEST(Registry, AFailureSoonAfterASuccessIsTransient) {
  ManualClock clock;
  Registry r(clock);
  int calls = 0;
  bool answer = true;
  ToolSpec spec = MakeSpec("alpha", "set");
  spec.check_fn = [&] {
    ++calls;
    return answer;
  };
  ASSERT_TRUE(r.Register(std::move(spec)).ok());
  EXPECT_TRUE(r.CheckAvailability("alpha").available);
  answer = false;
  clock.Advance(std::chrono::seconds(31));  // cache expired, 31 s after the success
  EXPECT_TRUE(r.CheckAvailability("alpha").available) << "within the 60 s grace";
  EXPECT_TRUE(r.CheckAvailability("alpha").available);
  EXPECT_EQ(calls, 3) << "a transient failure is not cached";
  clock.Advance(std::chrono::seconds(30));  // 61 s after the success
  EXPECT_FALSE(r.CheckAvailability("alpha").available);
  EXPECT_FALSE(r.CheckAvailability("alpha").available);
  EXPECT_EQ(calls, 4) << "a real failure is cached";
}

TEST(Registry, AThrowingCheckMeansUnavailable) {
  Registry r;
  ToolSpec spec = MakeSpec("alpha", "set");
  spec.check_fn = []() -> bool { throw std::runtime_error("probe exploded"); };
  ASSERT_TRUE(r.Register(std::move(spec)).ok());
  Availability a = r.CheckAvailability("alpha");
  EXPECT_FALSE(a.available);
  EXPECT_FALSE(a.reason.empty());
  EXPECT_FALSE(r.IsToolsetAvailable("set"));
}

TEST(Registry, AFailedCheckIsExplainedByTheToolsOwnReason) {
  Registry r;
  ToolSpec spec = MakeSpec("alpha", "set");
  spec.check_fn = [] { return false; };
  spec.unavailable_reason = [] { return std::string("set ALPHA_KEY in the environment"); };
  ASSERT_TRUE(r.Register(std::move(spec)).ok());
  ToolSpec silent = MakeSpec("beta", "set");
  silent.check_fn = [] { return false; };
  silent.unavailable_reason = []() -> std::string { throw std::runtime_error("no words"); };
  ASSERT_TRUE(r.Register(std::move(silent)).ok());

  EXPECT_EQ(r.CheckAvailability("alpha").reason, "set ALPHA_KEY in the environment");
  Availability beta = r.CheckAvailability("beta");
  EXPECT_FALSE(beta.available) << "a throwing explanation leaves the tool unavailable";
  EXPECT_EQ(beta.reason, "availability check failed");
}

TEST(Registry, RequiresEnvMakesAToolUnavailableWhileUnset) {
  Registry r;
  ToolSpec spec = MakeSpec("alpha", "set");
  spec.requires_env = {"TALARIA_TEST_REQUIRED_VAR"};
  ASSERT_TRUE(r.Register(std::move(spec)).ok());
  ASSERT_TRUE(r.Register(MakeSpec("beta", "set")).ok());
  ::unsetenv("TALARIA_TEST_REQUIRED_VAR");
  Availability a = r.CheckAvailability("alpha");
  EXPECT_FALSE(a.available);
  EXPECT_NE(a.reason.find("TALARIA_TEST_REQUIRED_VAR"), std::string::npos);
  EXPECT_TRUE(r.IsToolsetAvailable("set")) << "beta is available";
  ::setenv("TALARIA_TEST_REQUIRED_VAR", "1", 1);
  EXPECT_TRUE(r.CheckAvailability("alpha").available);
  ::unsetenv("TALARIA_TEST_REQUIRED_VAR");
}

TEST(Registry, DefinitionsAreSortedSkipUnknownAndUnavailable) {
  Registry r;
  for (const char* name : {"tool_10", "tool_2", "tool_1"})
    ASSERT_TRUE(r.Register(MakeSpec(name, "set")).ok());
  ToolSpec hidden = MakeSpec("hidden", "set");
  hidden.check_fn = [] { return false; };
  ASSERT_TRUE(r.Register(std::move(hidden)).ok());
  const std::vector<std::string> names{"tool_2", "nosuch", "tool_10", "hidden", "tool_1", "tool_2"};
  auto defs = ParseJson(*r.GetDefinitions(names));
  ASSERT_TRUE(defs);
  ASSERT_EQ(defs->size(), 3u);
  EXPECT_EQ((*defs)[0]["function"]["name"], "tool_1");
  EXPECT_EQ((*defs)[1]["function"]["name"], "tool_10");
  EXPECT_EQ((*defs)[2]["function"]["name"], "tool_2");
  EXPECT_EQ((*defs)[0]["type"], "function");
  EXPECT_EQ((*defs)[0]["function"]["parameters"]["type"], "object");
}

// GetDefinitions remembers the last list of names and its text per snapshot: a different list, a
// change of availability and a new registration must all show.
TEST(Registry, RepeatedDefinitionQueriesFollowNamesAvailabilityAndRegistrations) {
  Registry r;
  bool visible = true;
  ToolSpec flaky = MakeSpec("flaky", "other");
  flaky.check_fn = [&visible] { return visible; };
  ASSERT_TRUE(r.Register(std::move(flaky)).ok());
  ASSERT_TRUE(r.Register(MakeSpec("a", "set")).ok());
  ASSERT_TRUE(r.Register(MakeSpec("b", "set")).ok());
  auto names_of = [&](const std::vector<std::string>& query) {
    std::vector<std::string> out;
    const auto defs = ParseJson(*r.GetDefinitions(query));
    for (const auto& d : *defs) out.push_back(d["function"]["name"]);
    return out;
  };
  const std::vector<std::string> ab{"a", "b"};
  EXPECT_EQ(names_of(ab), ab);
  EXPECT_EQ(names_of(ab), ab);
  EXPECT_EQ(names_of({"b"}), std::vector<std::string>{"b"});
  EXPECT_EQ(names_of({"b", "c"}), std::vector<std::string>{"b"});
  ASSERT_TRUE(r.Register(MakeSpec("c", "set")).ok());
  EXPECT_EQ(names_of({"b", "c"}), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(names_of({"flaky", "a"}), (std::vector<std::string>{"a", "flaky"}));
  visible = false;
  r.InvalidateAvailabilityCache();
  EXPECT_EQ(names_of({"flaky", "a"}), std::vector<std::string>{"a"});
}

std::vector<std::string> DefinitionNames(const std::string& text) {
  std::vector<std::string> out;
  const auto parsed = ParseJson(text);  // named: *ParseJson(text) in the loop would dangle
  for (const auto& d : *parsed) out.push_back(d["function"]["name"]);
  return out;
}

// The text is shared while nothing changes, and a new one as soon as something does.
TEST(Registry, DefinitionsTextIsSharedUntilTheRegistryChanges) {
  Registry r;
  ASSERT_TRUE(r.Register(MakeSpec("a", "set")).ok());
  ASSERT_TRUE(r.Register(MakeSpec("b", "set")).ok());
  const std::vector<std::string> names{"a", "b", "c"};
  const auto first = r.GetDefinitions(names);
  EXPECT_EQ(r.GetDefinitions(names), first) << "same generation, same availability: same text";
  ASSERT_TRUE(r.Register(MakeSpec("c", "set")).ok());
  const auto after_register = r.GetDefinitions(names);
  EXPECT_NE(after_register, first);
  EXPECT_EQ(DefinitionNames(*after_register), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(DefinitionNames(*first), (std::vector<std::string>{"a", "b"})) << "old text unchanged";
  ASSERT_TRUE(r.Deregister("a"));
  EXPECT_EQ(DefinitionNames(*r.GetDefinitions(names)), (std::vector<std::string>{"b", "c"}));
  r.RegisterToolsetAlias("s", "set");  // a new generation that changes no tool
  EXPECT_EQ(DefinitionNames(*r.GetDefinitions(names)), (std::vector<std::string>{"b", "c"}));
}

TEST(Registry, DefinitionsFollowAvailabilityOnEveryCall) {
  Registry r;
  std::atomic<bool> visible{true};
  ToolSpec checked = MakeSpec("checked", "set");
  checked.check_fn = [&visible] { return visible.load(); };
  ASSERT_TRUE(r.Register(std::move(checked)).ok());
  ToolSpec needs_env = MakeSpec("needs_env", "set");
  needs_env.requires_env = {"TALARIA_TEST_DEFS_VAR"};
  ASSERT_TRUE(r.Register(std::move(needs_env)).ok());
  ASSERT_TRUE(r.Register(MakeSpec("plain", "set")).ok());
  const std::vector<std::string> names{"plain", "needs_env", "checked"};
  ::unsetenv("TALARIA_TEST_DEFS_VAR");
  const auto without_env = r.GetDefinitions(names);
  EXPECT_EQ(DefinitionNames(*without_env), (std::vector<std::string>{"checked", "plain"}));
  EXPECT_EQ(r.GetDefinitions(names), without_env);
  ::setenv("TALARIA_TEST_DEFS_VAR", "1", 1);
  EXPECT_EQ(DefinitionNames(*r.GetDefinitions(names)),
            (std::vector<std::string>{"checked", "needs_env", "plain"}))
      << "an environment variable set later shows on the next call";
  ::setenv("TALARIA_TEST_DEFS_VAR", "", 1);
  EXPECT_EQ(DefinitionNames(*r.GetDefinitions(names)),
            (std::vector<std::string>{"checked", "plain"}))
      << "an empty variable counts as unset";
  visible = false;
  r.InvalidateAvailabilityCache();
  EXPECT_EQ(DefinitionNames(*r.GetDefinitions(names)), std::vector<std::string>{"plain"})
      << "a tool whose check fails drops out immediately";
  visible = true;
  r.InvalidateAvailabilityCache();
  EXPECT_EQ(DefinitionNames(*r.GetDefinitions(names)),
            (std::vector<std::string>{"checked", "plain"}));
  ::unsetenv("TALARIA_TEST_DEFS_VAR");
}

// Many threads asking for different lists against a churning registry each get the text of
// their own list (run under TSan to check the cache's publication).
TEST(Registry, ConcurrentDefinitionQueriesGetTheirOwnText) {
  Registry r;
  for (int i = 0; i < 50; ++i)
    ASSERT_TRUE(r.Register(MakeSpec("tool_" + std::to_string(i), "bench")).ok());
  constexpr int kReaders = 4;
  std::atomic<bool> done{false};
  std::atomic<int> wrong{0};
  std::barrier start(kReaders + 1);
  std::vector<std::jthread> threads;
  for (int t = 0; t < kReaders; ++t) {
    threads.emplace_back([&, t] {
      // Reader t asks for the tools i with i % kReaders == t, alternating with all of them.
      std::vector<std::string> mine;
      std::vector<std::string> all;
      for (int i = 0; i < 50; ++i) {
        all.push_back("tool_" + std::to_string(i));
        if (i % kReaders == t) mine.push_back(all.back());
      }
      std::sort(mine.begin(), mine.end());
      std::vector<std::string> all_sorted = all;
      std::sort(all_sorted.begin(), all_sorted.end());
      start.arrive_and_wait();
      for (int k = 0; k < 300; ++k) {
        const bool ask_mine = k % 2 == 0;
        const auto text = r.GetDefinitions(ask_mine ? mine : all);
        if (DefinitionNames(*text) != (ask_mine ? mine : all_sorted)) ++wrong;
      }
    });
  }
  std::jthread writer([&] {
    start.arrive_and_wait();
    while (!done) {
      ASSERT_TRUE(r.Register(MakeSpec("churn_tool", "bench")).ok());
      ASSERT_TRUE(r.Deregister("churn_tool"));
    }
  });
  for (auto& t : threads) t.join();
  done = true;
  writer.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Registry, ReadersNeverMissEntriesWhileAWriterChurns) {
  Registry r;
  for (int i = 0; i < 200; ++i)
    ASSERT_TRUE(r.Register(MakeSpec("tool_" + std::to_string(i), "bench")).ok());
  constexpr int kReaders = 4;
  std::atomic<bool> done{false};
  std::atomic<int> misses{0};
  std::barrier start(kReaders + 1);
  std::vector<std::jthread> threads;
  for (int t = 0; t < kReaders; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < 20'000; ++i) {
        auto e = r.GetEntry("tool_" + std::to_string((i + t * 25) % 200));
        if (!e) ++misses;
      }
    });
  }
  std::jthread writer([&] {
    start.arrive_and_wait();
    while (!done) {
      ASSERT_TRUE(r.Register(MakeSpec("churn_tool", "bench")).ok());
      ASSERT_TRUE(r.Deregister("churn_tool"));
    }
  });
  for (auto& t : threads) t.join();
  done = true;
  writer.join();
  EXPECT_EQ(misses.load(), 0);
  EXPECT_EQ(r.Snapshot()->size, 200u);
}

}  // namespace
}  // namespace talaria
