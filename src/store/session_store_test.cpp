// StoredMessage holds a Json by value: the full header before the store's.
#include <nlohmann/json.hpp>

#include "talaria/store/session_store.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "store/store_test_util.h"
#include "support/temp_dir.h"

namespace talaria::store {
namespace {

using talaria::test_support::TempDir;
using testing::AssistantCalls;
using testing::Call;
using testing::HistoryProblem;
using testing::Msg;
using testing::OpenOrDie;
using testing::QueryText;
using testing::ToolResult;

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return st.st_mode & 0777;
}

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

TEST(SessionStore, CreatesDirectoryAndFilesPrivately) {
  TempDir tmp;
  const std::string path = tmp / "home/deeper/sessions.db";
  auto store = OpenOrDie(path);
  ASSERT_TRUE(store);
  auto s = store->CreateSession({.cwd = "/p"});
  ASSERT_TRUE(s);
  StoredMessage m = Msg("user", "hi");
  ASSERT_TRUE(store->AppendMessage(s->id, m).ok());
  EXPECT_EQ(ModeOf(tmp / "home"), 0700u);
  EXPECT_EQ(ModeOf(tmp / "home/deeper"), 0700u);
  EXPECT_EQ(ModeOf(path), 0600u);
  EXPECT_EQ(ModeOf(path + "-wal"), 0600u);
  EXPECT_EQ(QueryText(path, "PRAGMA journal_mode"), "wal");
}

TEST(SessionStore, DefaultPathIsInTalariaHome) {
  TempDir tmp;
  ::setenv("TALARIA_HOME", tmp.path().c_str(), 1);
  EXPECT_EQ(DefaultSessionsPath(), tmp / "sessions.db");
  ::unsetenv("TALARIA_HOME");
}

TEST(SessionStore, CreatesSessionsWithReadableIds) {
  TempDir tmp;
  auto store = OpenOrDie(tmp / "s.db");
  ASSERT_TRUE(store);
  auto s =
      store->CreateSession({.cwd = "/srv/p", .model = "gpt-4o", .title = "first", .source = "cli"});
  ASSERT_TRUE(s) << s.error().ToString();
  // YYYYMMDD_HHMMSS_xxxxxx
  ASSERT_EQ(s->id.size(), 22u) << s->id;
  for (size_t i : {0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 9u, 10u, 11u, 12u, 13u, 14u})
    EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(s->id[i]))) << s->id;
  EXPECT_EQ(s->id[8], '_');
  EXPECT_EQ(s->id[15], '_');
  for (size_t i = 16; i < 22; ++i) EXPECT_TRUE(IsHex(s->id[i])) << s->id;
  EXPECT_GT(s->started_at_ms, 0);

  auto got = store->GetSession(s->id);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->cwd, "/srv/p");
  EXPECT_EQ((*got)->model, "gpt-4o");
  EXPECT_EQ((*got)->title, "first");
  EXPECT_EQ((*got)->source, "cli");
  EXPECT_EQ((*got)->ended_at_ms, 0);
  auto other = store->CreateSession({});
  ASSERT_TRUE(other);
  EXPECT_NE(other->id, s->id);

  auto none = store->GetSession("20990101_000000_abcdef");
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
}

TEST(SessionStore, ParentMustExistAndOutlivesNothing) {
  TempDir tmp;
  auto store = OpenOrDie(tmp / "s.db");
  ASSERT_TRUE(store);
  auto bad = store->CreateSession({.parent_id = "nope"});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), StatusCode::kNotFound);
  auto parent = store->CreateSession({});
  auto child = store->CreateSession({.parent_id = parent->id, .source = "delegate"});
  ASSERT_TRUE(child);
  EXPECT_EQ(child->parent_id, parent->id);
  ASSERT_TRUE(store->DeleteSession(parent->id).ok());
  auto got = store->GetSession(child->id);
  ASSERT_TRUE(got && *got);  // the child stays, without its parent
  EXPECT_EQ((*got)->parent_id, "");
}

TEST(SessionStore, ListsNewestFirstAndFindsTheLatestInADirectory) {
  TempDir tmp;
  auto store = OpenOrDie(tmp / "s.db");
  ASSERT_TRUE(store);
  auto a = store->CreateSession({.cwd = "/a"});
  auto b = store->CreateSession({.cwd = "/b"});
  auto a2 = store->CreateSession({.cwd = "/a"});
  ASSERT_TRUE(a && b && a2);
  // Touch `a` last: an append makes it the most recently updated.
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  StoredMessage m = Msg("user", "again");
  ASSERT_TRUE(store->AppendMessage(a->id, m).ok());

  auto all = store->ListSessions({});
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].id, a->id);
  EXPECT_EQ((*all)[0].message_count, 1);
  auto in_a = store->ListSessions({.cwd = "/a", .limit = 10});
  ASSERT_TRUE(in_a);
  EXPECT_EQ(in_a->size(), 2u);
  auto one = store->ListSessions({.limit = 1});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->size(), 1u);

  auto latest = store->LatestSession("/a");
  ASSERT_TRUE(latest && *latest);
  EXPECT_EQ((*latest)->id, a->id);
  auto none = store->LatestSession("/nowhere");
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
}

TEST(SessionStore, SetsTitleAndEnds) {
  TempDir tmp;
  auto store = OpenOrDie(tmp / "s.db");
  ASSERT_TRUE(store);
  auto s = store->CreateSession({});
  ASSERT_TRUE(store->SetTitle(s->id, "Fix the parser").ok());
  ASSERT_TRUE(store->EndSession(s->id, "completed").ok());
  auto got = store->GetSession(s->id);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->title, "Fix the parser");
  EXPECT_EQ((*got)->end_reason, "completed");
  EXPECT_GT((*got)->ended_at_ms, 0);
  EXPECT_EQ(store->SetTitle("missing", "x").code(), StatusCode::kNotFound);
  EXPECT_EQ(store->EndSession("missing", "x").code(), StatusCode::kNotFound);
}

TEST(SessionStore, AppendNumbersMessagesAndAddsUsage) {
  TempDir tmp;
  auto store = OpenOrDie(tmp / "s.db");
  ASSERT_TRUE(store);
  auto s = store->CreateSession({});
  StoredMessage u = Msg("user", "list files");
  ASSERT_TRUE(store->AppendMessage(s->id, u).ok());
  EXPECT_EQ(u.seq, 1);
  EXPECT_GT(u.created_at_ms, 0);
  StoredMessage a = AssistantCalls({Call("c1", "terminal", R"({"command":"ls"})")}, "looking");
  a.reasoning = "the user wants a listing";
  a.usage = {.input_tokens = 100,
             .cached_tokens = 40,
             .output_tokens = 20,
             .reasoning_tokens = 5,
             .cost_usd = 0.25};
  ASSERT_TRUE(store->AppendMessage(s->id, a).ok());
  EXPECT_EQ(a.seq, 2);
  StoredMessage t = ToolResult("c1", "terminal", "a.txt\nb.txt");
  ASSERT_TRUE(store->AppendMessage(s->id, t).ok());
  StoredMessage a2 = Msg("assistant", "two files");
  a2.usage = {.input_tokens = 150, .cached_tokens = 100, .output_tokens = 4, .cost_usd = 0.5};
  ASSERT_TRUE(store->AppendMessage(s->id, a2).ok());

  auto got = store->GetSession(s->id);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->message_count, 4);
  EXPECT_EQ((*got)->totals.input_tokens, 250);
  EXPECT_EQ((*got)->totals.cached_tokens, 140);
  EXPECT_EQ((*got)->totals.output_tokens, 24);
  EXPECT_EQ((*got)->totals.reasoning_tokens, 5);
  EXPECT_DOUBLE_EQ((*got)->totals.cost_usd, 0.75);

  auto transcript = store->LoadTranscript(s->id);
  ASSERT_TRUE(transcript);
  ASSERT_EQ(transcript->size(), 4u);
  const StoredMessage& back = (*transcript)[1];
  EXPECT_EQ(back.seq, 2);
  EXPECT_EQ(back.role, "assistant");
  EXPECT_EQ(back.content, "looking");
  EXPECT_EQ(back.reasoning, "the user wants a listing");
  EXPECT_EQ(back.tool_calls, a.tool_calls);
  EXPECT_EQ(back.usage.input_tokens, 100);
  EXPECT_EQ(back.usage.cached_tokens, 40);
  EXPECT_EQ(back.usage.output_tokens, 20);
  EXPECT_EQ(back.usage.reasoning_tokens, 5);
  EXPECT_DOUBLE_EQ(back.usage.cost_usd, 0.25);
  EXPECT_EQ(back.created_at_ms, a.created_at_ms);
  EXPECT_EQ((*transcript)[2].tool_call_id, "c1");
  EXPECT_EQ((*transcript)[2].name, "terminal");
  EXPECT_TRUE((*transcript)[0].tool_calls.is_null());

  auto sum = store->SumUsage("");
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->input_tokens, 250);
  EXPECT_DOUBLE_EQ(sum->cost_usd, 0.75);
  auto elsewhere = store->SumUsage("/elsewhere");
  ASSERT_TRUE(elsewhere);
  EXPECT_EQ(elsewhere->input_tokens, 0);
}

TEST(SessionStore, KeepsAnyBytesAModelSent) {
  TempDir tmp;
  auto store = OpenOrDie(tmp / "s.db");
  ASSERT_TRUE(store);
  auto s = store->CreateSession({});
  constexpr char kOdd[] = "nul\0inside, broken \xff\xfe utf-8, quote ' \" ;";
  const std::string odd(kOdd, sizeof(kOdd) - 1);
  StoredMessage m = Msg("assistant", odd);
  m.reasoning = odd;
  m.tool_calls = Json::array({Call("c\xff", "terminal", odd)});
  ASSERT_TRUE(store->AppendMessage(s->id, m).ok());
  StoredMessage t = ToolResult("c\xff", "terminal", odd);
  ASSERT_TRUE(store->AppendMessage(s->id, t).ok());
  auto transcript = store->LoadTranscript(s->id);
  ASSERT_TRUE(transcript) << transcript.error().ToString();
  EXPECT_EQ((*transcript)[0].content, odd);
  EXPECT_EQ((*transcript)[0].reasoning, odd);
  EXPECT_EQ((*transcript)[1].content, odd);
  EXPECT_EQ((*transcript)[1].tool_call_id, "c\xff");
  // Tool calls are JSON: invalid UTF-8 in them is replaced on the way in, never a failure.
  EXPECT_TRUE((*transcript)[0].tool_calls.is_array());
  auto reopened = SessionStore::Open(tmp / "s.db");  // indexes what is pending; must not fail
  ASSERT_TRUE(reopened) << reopened.error().ToString();
  auto hits = store->Search("broken", {});
  ASSERT_TRUE(hits);
  EXPECT_EQ(hits->size(), 2u);
}

TEST(SessionStore, AppendRefusesUnknownSessionsAndRoles) {
  TempDir tmp;
  auto store = OpenOrDie(tmp / "s.db");
  ASSERT_TRUE(store);
  StoredMessage m = Msg("user", "x");
  EXPECT_EQ(store->AppendMessage("nope", m).code(), StatusCode::kNotFound);
  auto s = store->CreateSession({});
  StoredMessage bad = Msg("wizard", "x");
  EXPECT_EQ(store->AppendMessage(s->id, bad).code(), StatusCode::kInvalidArgument);
  auto got = store->GetSession(s->id);
  EXPECT_EQ((*got)->message_count, 0);  // the failed append left nothing behind
}

TEST(SessionStore, AppendMessagesIsAllOrNothing) {
  TempDir tmp;
  auto store = OpenOrDie(tmp / "s.db");
  ASSERT_TRUE(store);
  auto s = store->CreateSession({});
  std::vector<StoredMessage> good = {Msg("user", "a"), Msg("assistant", "b")};
  ASSERT_TRUE(store->AppendMessages(s->id, good).ok());
  EXPECT_EQ(good[1].seq, 2);
  std::vector<StoredMessage> bad = {Msg("user", "c"), Msg("nonsense", "d")};
  EXPECT_FALSE(store->AppendMessages(s->id, bad).ok());
  EXPECT_EQ(bad[0].seq, 0);
  auto transcript = store->LoadTranscript(s->id);
  ASSERT_TRUE(transcript);
  EXPECT_EQ(transcript->size(), 2u);
}

TEST(SessionStore, LoadHistoryIsTheLatestCompactionThenLaterMessages) {
  TempDir tmp;
  auto store = OpenOrDie(tmp / "s.db");
  ASSERT_TRUE(store);
  auto s = store->CreateSession({});
  for (int i = 0; i < 4; ++i) {
    StoredMessage m = Msg(i % 2 == 0 ? "user" : "assistant", "m" + std::to_string(i));
    ASSERT_TRUE(store->AppendMessage(s->id, m).ok());
  }
  ASSERT_TRUE(store->AppendCompaction(s->id, "first summary", {Msg("user", "summary 1")}).ok());
  StoredMessage after1 = Msg("user", "after first");
  ASSERT_TRUE(store->AppendMessage(s->id, after1).ok());
  ASSERT_TRUE(
      store->AppendCompaction(s->id, "second", {Msg("system", "sys"), Msg("user", "summary 2")})
          .ok());
  StoredMessage after2 = Msg("assistant", "after second");
  ASSERT_TRUE(store->AppendMessage(s->id, after2).ok());

  auto history = store->LoadHistory(s->id);
  ASSERT_TRUE(history) << history.error().ToString();
  ASSERT_EQ(history->size(), 3u);
  EXPECT_EQ((*history)[0].content, "sys");
  EXPECT_EQ((*history)[1].content, "summary 2");
  EXPECT_EQ((*history)[2].content, "after second");
  EXPECT_EQ((*history)[2].seq, 6);
  auto transcript = store->LoadTranscript(s->id);
  ASSERT_TRUE(transcript);
  EXPECT_EQ(transcript->size(), 6u);  // nothing pruned
  EXPECT_EQ(store->AppendCompaction("nope", "x", {}).code(), StatusCode::kNotFound);
  EXPECT_EQ(store->LoadHistory("nope").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store->LoadTranscript("nope").error().code(), StatusCode::kNotFound);
}

TEST(SessionStore, RepairAnswersEveryOpenCallOnce) {
  TempDir tmp;
  auto store = OpenOrDie(tmp / "s.db");
  ASSERT_TRUE(store);
  auto s = store->CreateSession({});
  StoredMessage u = Msg("user", "do things");
  StoredMessage a = AssistantCalls({Call("c1", "read_file", R"({"path":"a"})"),
                                    Call("c2", "terminal", R"({"command":"make"})"),
                                    Call("c3", "write_file", R"({"path":"b"})")});
  StoredMessage r1 = ToolResult("c1", "read_file", "content");
  for (StoredMessage* m : {&u, &a, &r1}) ASSERT_TRUE(store->AppendMessage(s->id, *m).ok());
  auto before = store->LoadHistory(s->id);
  ASSERT_TRUE(before);
  EXPECT_NE(HistoryProblem(*before), "");

  auto added = store->RepairInterrupted(s->id);
  ASSERT_TRUE(added) << added.error().ToString();
  EXPECT_EQ(*added, 2u);
  auto history = store->LoadHistory(s->id);
  ASSERT_TRUE(history);
  EXPECT_EQ(HistoryProblem(*history), "");
  ASSERT_EQ(history->size(), 5u);
  EXPECT_EQ((*history)[3].tool_call_id, "c2");
  EXPECT_EQ((*history)[3].name, "terminal");
  EXPECT_NE((*history)[3].content.find("interrupted"), std::string::npos);
  EXPECT_EQ((*history)[4].tool_call_id, "c3");
  // Repaired once: a second repair finds nothing.
  auto again = store->RepairInterrupted(s->id);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, 0u);
  EXPECT_EQ(store->RepairInterrupted("nope").error().code(), StatusCode::kNotFound);
}

TEST(SessionStore, RepairSeesCallsInsideACompaction) {
  TempDir tmp;
  auto store = OpenOrDie(tmp / "s.db");
  ASSERT_TRUE(store);
  auto s = store->CreateSession({});
  StoredMessage m = Msg("user", "x");
  ASSERT_TRUE(store->AppendMessage(s->id, m).ok());
  ASSERT_TRUE(store
                  ->AppendCompaction(
                      s->id, "sum",
                      {Msg("user", "summary"), AssistantCalls({Call("k1", "terminal", "{}")})})
                  .ok());
  auto added = store->RepairInterrupted(s->id);
  ASSERT_TRUE(added);
  EXPECT_EQ(*added, 1u);
  auto history = store->LoadHistory(s->id);
  ASSERT_TRUE(history);
  EXPECT_EQ(HistoryProblem(*history), "");
}

TEST(SessionStore, KeepsStatePerSessionAndKey) {
  TempDir tmp;
  auto store = OpenOrDie(tmp / "s.db");
  ASSERT_TRUE(store);
  auto s = store->CreateSession({});
  auto other = store->CreateSession({});
  Json todos = Json::array({Json{{"id", "1"}, {"content", "write tests"}, {"status", "pending"}}});
  ASSERT_TRUE(store->PutState(s->id, "todo", todos).ok());
  auto got = store->GetState(s->id, "todo");
  ASSERT_TRUE(got && *got);
  EXPECT_EQ(**got, todos);
  ASSERT_TRUE(store->PutState(s->id, "todo", Json::array()).ok());  // replaced whole
  got = store->GetState(s->id, "todo");
  EXPECT_EQ(**got, Json::array());
  auto missing = store->GetState(other->id, "todo");
  ASSERT_TRUE(missing);
  EXPECT_FALSE(*missing);
  EXPECT_EQ(store->PutState("nope", "todo", Json(1)).code(), StatusCode::kNotFound);
}

TEST(SessionStore, DeleteRemovesEverythingOfTheSession) {
  TempDir tmp;
  const std::string path = tmp / "s.db";
  auto store = OpenOrDie(path);
  ASSERT_TRUE(store);
  auto doomed = store->CreateSession({});
  auto kept = store->CreateSession({});
  for (const auto& id : {doomed->id, kept->id}) {
    StoredMessage u = Msg("user", "zebra crossing 斑马线路口 in " + id);
    StoredMessage a = AssistantCalls({Call("c", "search_files", R"({"pattern":"zebra"})")});
    ASSERT_TRUE(store->AppendMessage(id, u).ok());
    ASSERT_TRUE(store->AppendMessage(id, a).ok());
    ASSERT_TRUE(store->AppendCompaction(id, "s", {Msg("user", "sum")}).ok());
    ASSERT_TRUE(store->PutState(id, "todo", Json::array()).ok());
  }
  ASSERT_TRUE(store->DeleteSession(doomed->id).ok());
  EXPECT_EQ(store->DeleteSession(doomed->id).code(), StatusCode::kNotFound);
  auto gone = store->GetSession(doomed->id);
  EXPECT_FALSE(*gone);
  EXPECT_EQ(QueryText(path, "SELECT count(*) FROM messages"), "2");
  EXPECT_EQ(QueryText(path, "SELECT count(*) FROM compactions"), "1");
  EXPECT_EQ(QueryText(path, "SELECT count(*) FROM session_state"), "1");
  for (const char* query : {"zebra", "斑马线", "search_files"}) {
    auto hits = store->Search(query, {});
    ASSERT_TRUE(hits);
    ASSERT_FALSE(hits->empty()) << query;
    for (const SearchHit& h : *hits) EXPECT_EQ(h.session_id, kept->id) << query;
  }
  // The FTS indexes agree with the messages they index (the original's drift, #114169).
  EXPECT_EQ(testing::FtsDriftProblem(path), "");
  // The text and the call's arguments of the kept session; nothing of the deleted one.
  EXPECT_EQ(QueryText(path, "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'zebra'"),
            "2");
}

TEST(SessionStore, PersistsAcrossReopen) {
  TempDir tmp;
  const std::string path = tmp / "s.db";
  std::string id;
  {
    auto store = OpenOrDie(path);
    ASSERT_TRUE(store);
    auto s = store->CreateSession({.cwd = "/p"});
    id = s->id;
    StoredMessage m = Msg("user", "remember me");
    ASSERT_TRUE(store->AppendMessage(id, m).ok());
  }
  auto store = OpenOrDie(path);
  ASSERT_TRUE(store);
  auto history = store->LoadHistory(id);
  ASSERT_TRUE(history);
  ASSERT_EQ(history->size(), 1u);
  EXPECT_EQ((*history)[0].content, "remember me");
  EXPECT_EQ(QueryText(path, "PRAGMA user_version"), "2");
}

TEST(SessionStore, RefusesANewerSchema) {
  TempDir tmp;
  const std::string path = tmp / "s.db";
  { ASSERT_TRUE(OpenOrDie(path)); }
  EXPECT_EQ(QueryText(path, "PRAGMA user_version = 7"), "");
  auto store = SessionStore::Open(path);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.error().message().find("schema version 7"), std::string::npos)
      << store.error().message();
  EXPECT_NE(store.error().message().find("newer"), std::string::npos);
}

TEST(SessionStore, ReportsACorruptFileClearly) {
  TempDir tmp;
  const std::string path = tmp / "s.db";
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 2000; ++i) out << "garbage bytes \x01\xff\x7f not sqlite ";
  }
  auto store = SessionStore::Open(path);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code(), StatusCode::kInternal);
  EXPECT_NE(store.error().message().find(path), std::string::npos) << store.error().message();
  EXPECT_NE(store.error().message().find("corrupt"), std::string::npos);
}

TEST(SessionStore, ReportsADamagedDatabasePageClearly) {
  TempDir tmp;
  const std::string path = tmp / "s.db";
  std::string id;
  {
    auto store = OpenOrDie(path);
    ASSERT_TRUE(store);
    auto s = store->CreateSession({});
    id = s->id;
    for (int i = 0; i < 300; ++i) {
      StoredMessage m = Msg("user", std::string(500, static_cast<char>('a' + i % 26)));
      ASSERT_TRUE(store->AppendMessage(id, m).ok());
    }
  }  // closed: checkpointed into the main file
  {
    // Overwrite a stretch of pages past the header and schema with garbage.
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096 * 6);
    for (int i = 0; i < 4096 * 8; ++i) f.put(static_cast<char>((i * 131) & 0xff));
  }
  auto store = SessionStore::Open(path);
  if (!store) {
    EXPECT_EQ(store.error().code(), StatusCode::kInternal) << store.error().ToString();
    return;
  }
  auto history = (*store)->LoadTranscript(id);
  ASSERT_FALSE(history);  // never silently wrong
  EXPECT_EQ(history.error().code(), StatusCode::kInternal) << history.error().ToString();
  EXPECT_NE(history.error().message().find("corrupt"), std::string::npos);
}

TEST(SessionStore, ThreadsAppendToDifferentSessionsAtOnce) {
  TempDir tmp;
  auto store = OpenOrDie(tmp / "s.db");
  ASSERT_TRUE(store);
  constexpr int kThreads = 4, kEach = 100;
  std::vector<std::string> ids;
  for (int t = 0; t < kThreads; ++t) ids.push_back(store->CreateSession({})->id);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kEach; ++i) {
          StoredMessage m = Msg("user", "t" + std::to_string(t) + " m" + std::to_string(i));
          EXPECT_TRUE(store->AppendMessage(ids[static_cast<size_t>(t)], m).ok());
        }
      });
    }
  }
  for (int t = 0; t < kThreads; ++t) {
    auto transcript = store->LoadTranscript(ids[static_cast<size_t>(t)]);
    ASSERT_TRUE(transcript);
    ASSERT_EQ(transcript->size(), static_cast<size_t>(kEach));
    for (int i = 0; i < kEach; ++i) {
      EXPECT_EQ((*transcript)[static_cast<size_t>(i)].seq, i + 1);
      EXPECT_EQ((*transcript)[static_cast<size_t>(i)].content,
                "t" + std::to_string(t) + " m" + std::to_string(i));
    }
  }
}

}  // namespace
}  // namespace talaria::store

namespace talaria::store {
namespace {

// A batch of search indexing that fails loses no message and is said once on stderr, not at
// every append after it.
TEST(SessionStore, AFailingSearchIndexIsReportedOnceAndLosesNothing) {
  TempDir dir;
  const std::string path = dir / "sessions.db";
  auto store = testing::OpenOrDie(path);
  const std::string id = store->CreateSession({.cwd = "/p"})->id;
  {
    // Another connection takes the word index away from under the store.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "DROP TABLE messages_fts", nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 600; ++i) {
    StoredMessage m = testing::Msg("user", "message " + std::to_string(i));
    ASSERT_TRUE(store->AppendMessage(id, m).ok()) << i;
  }
  // Indexing runs behind the appends; each search tries again, and fails again.
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(store->Search("message", {}).has_value());
  for (int i = 0; i < 600; ++i) {
    StoredMessage m = testing::Msg("user", "more " + std::to_string(i));
    ASSERT_TRUE(store->AppendMessage(id, m).ok()) << i;
  }
  EXPECT_FALSE(store->Search("more", {}).has_value());
  const std::string err = ::testing::internal::GetCapturedStderr();
  size_t warnings = 0;
  for (size_t at = err.find("indexing messages for search failed"); at != std::string::npos;
       at = err.find("indexing messages for search failed", at + 1)) {
    ++warnings;
  }
  EXPECT_EQ(warnings, 1u) << err;
  auto history = store->LoadHistory(id);
  ASSERT_TRUE(history);
  EXPECT_EQ(history->size(), 1200u);
}

}  // namespace
}  // namespace talaria::store
