#include "agent/todo_store.h"

#include <gtest/gtest.h>

#include <string>

namespace talaria::agent {
namespace {

Json J(std::string_view text) { return *ParseJson(text); }

std::string Ids(const TodoStore& store) {
  std::string out;
  for (const auto& item : store.items()) out += item.id + ":" + item.status + " ";
  return out;
}

TEST(TodoStore, NoArgumentsReadsTheList) {
  TodoStore store;
  Json r = store.Apply(J("{}"));
  EXPECT_EQ(r["todos"], J("[]"));
  EXPECT_EQ(r["summary"]["total"], 0);
}

TEST(TodoStore, ReplaceWritesTheWholeListAndSummarizes) {
  TodoStore store;
  Json r = store.Apply(J(R"({"todos": [
      {"id": "1", "content": "read", "status": "completed"},
      {"id": "2", "content": "patch", "status": "in_progress"},
      {"id": "3", "content": "test", "status": "pending", "parent": "2"}]})"));
  EXPECT_EQ(Ids(store), "1:completed 2:in_progress 3:pending ");
  EXPECT_EQ(r["summary"],
            J(R"({"total":3,"pending":1,"in_progress":1,"completed":1,"cancelled":0})"));
  EXPECT_EQ(r["todos"][2]["parent"], "2");
  EXPECT_FALSE(r.contains("note"));
  store.Apply(J(R"({"todos": [{"id": "9", "content": "only", "status": "pending"}]})"));
  EXPECT_EQ(Ids(store), "9:pending ");
}

TEST(TodoStore, ReplaceNormalizesBadItems) {
  TodoStore store;
  store.Apply(J(R"({"todos": [{"content": "", "status": "DONE"},
                              {"id": "a", "content": "x", "status": "In_Progress"}]})"));
  ASSERT_EQ(store.items().size(), 2u);
  EXPECT_EQ(store.items()[0].id, "?");
  EXPECT_EQ(store.items()[0].content, "(no description)");
  EXPECT_EQ(store.items()[0].status, "pending");
  EXPECT_EQ(store.items()[1].status, "in_progress");
}

TEST(TodoStore, DuplicateIdsCollapseToTheLastAtItsPosition) {
  TodoStore store;
  store.Apply(J(R"({"todos": [{"id": "a", "content": "1", "status": "pending"},
                              {"id": "b", "content": "2", "status": "pending"},
                              {"id": "a", "content": "3", "status": "completed"}]})"));
  EXPECT_EQ(Ids(store), "b:pending a:completed ");
  EXPECT_EQ(store.items()[1].content, "3");
}

TEST(TodoStore, MergeUpdatesByIdAndAppends) {
  TodoStore store;
  store.Apply(J(R"({"todos": [{"id": "1", "content": "a", "status": "in_progress"},
                              {"id": "2", "content": "b", "status": "pending"}]})"));
  store.Apply(J(R"({"merge": true, "todos": [{"id": "1", "status": "completed"},
                                             {"id": "3", "content": "c", "status": "pending"},
                                             {"content": "no id"}]})"));
  EXPECT_EQ(Ids(store), "1:completed 2:pending 3:pending ");
  EXPECT_EQ(store.items()[0].content, "a") << "fields not given are kept";
}

TEST(TodoStore, BoundsContentAndItems) {
  TodoStore store;
  Json todos = Json::array();
  for (int i = 0; i < 300; ++i) {
    todos.push_back(
        {{"id", std::to_string(i)}, {"content", std::string(5000, 'x')}, {"status", "pending"}});
  }
  store.Apply(Json{{"todos", todos}});
  EXPECT_EQ(store.items().size(), kMaxTodoItems);
  EXPECT_EQ(store.items()[0].id, "0") << "the head is kept";
  EXPECT_LT(store.items()[0].content.size(), kMaxTodoContentChars + 32);
}

TEST(TodoStore, NotesMoreThanOneInProgress) {
  TodoStore store;
  Json r = store.Apply(J(R"({"todos": [{"id": "1", "content": "a", "status": "in_progress"},
                                       {"id": "2", "content": "b", "status": "in_progress"}]})"));
  EXPECT_NE(r.value("note", "").find("exactly one in_progress"), std::string::npos);
}

TEST(TodoStore, SnapshotRoundTripsAndInjectionShowsActiveItems) {
  TodoStore store;
  store.Apply(J(R"({"todos": [{"id": "1", "content": "done", "status": "completed"},
                              {"id": "2", "content": "doing", "status": "in_progress"},
                              {"id": "3", "content": "later", "status": "pending"},
                              {"id": "4", "content": "dropped", "status": "cancelled"}]})"));
  TodoStore copy;
  copy.Restore(store.Snapshot());
  EXPECT_EQ(Ids(copy), Ids(store));
  EXPECT_EQ(copy.FormatForInjection(),
            "[Your active task list was preserved across context compression]\n"
            "- [>] 2. doing (in_progress)\n"
            "- [ ] 3. later (pending)\n");
  TodoStore empty;
  empty.Restore(J(R"({"todos": "junk"})"));
  EXPECT_EQ(empty.FormatForInjection(), "");
}

}  // namespace
}  // namespace talaria::agent
