// Helpers the store's tests share: messages of each kind, raw SQL on the file, history checks.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/sqlite_db.h"
#include "talaria/store/session_store.h"

namespace talaria::store::testing {

inline std::unique_ptr<SessionStore> OpenOrDie(const std::string& path) {
  auto store = SessionStore::Open(path);
  if (!store) {
    ADD_FAILURE() << store.error().ToString();
    return nullptr;
  }
  return std::move(*store);
}

inline StoredMessage Msg(std::string role, std::string content) {
  StoredMessage m;
  m.role = std::move(role);
  m.content = std::move(content);
  return m;
}

inline Json Call(const std::string& id, const std::string& name, const std::string& args) {
  return Json{
      {"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", args}}}};
}

inline StoredMessage AssistantCalls(std::vector<Json> calls, std::string content = "") {
  StoredMessage m = Msg("assistant", std::move(content));
  m.tool_calls = Json::array();
  for (Json& c : calls) m.tool_calls.push_back(std::move(c));
  return m;
}

inline StoredMessage ToolResult(std::string id, std::string name, std::string content) {
  StoredMessage m = Msg("tool", std::move(content));
  m.tool_call_id = std::move(id);
  m.name = std::move(name);
  return m;
}

// The first column of the first row of `sql`, as text, run on a connection of its own.
inline std::string QueryText(const std::string& path, const char* sql) {
  auto db = SqliteDb::Open(path);
  if (!db) return "open failed: " + db.error().ToString();
  auto stmt = (*db)->Prepare(sql);
  if (!stmt) return "prepare failed: " + stmt.error().ToString();
  auto row = stmt->Step();
  if (!row) return "step failed: " + row.error().ToString();
  return *row ? stmt->Text(0) : "";
}

// "" when both FTS indexes hold exactly what indexing the messages up to the watermark afresh
// gives (every term at every position of every row), else what differs. FTS5's own
// 'integrity-check' with rank 1 cannot read a view that calls json_each (FTS5 reads content tables
// with virtual tables disabled), so a fresh index is built from the same views in temp and compared
// term by term.
inline std::string FtsDriftProblem(const std::string& path) {
  auto db = SqliteDb::Open(path);
  if (!db) return db.error().ToString();
  // 'integrity-check' writes: wait out a store's indexer holding the write lock (a loaded
  // machine stretches its chunk past SQLite's default of no wait).
  sqlite3_busy_timeout((*db)->handle(), 10000);
  struct Index {
    const char* live;
    const char* source;
    const char* tokenize;
  };
  for (Index ix : {Index{"messages_fts", "messages_fts_source", "unicode61 remove_diacritics 2"},
                   Index{"messages_cjk", "messages_cjk_source", "trigram"}}) {
    const std::string live = ix.live;
    std::string sql = "INSERT INTO " + live + "(" + live + ", rank) VALUES ('integrity-check', 0);";
    sql += "CREATE VIRTUAL TABLE temp.fresh USING fts5(body, tools, tokenize='" +
           std::string(ix.tokenize) + "');";
    sql += "INSERT INTO temp.fresh(rowid, body, tools) SELECT id, body, tools FROM " +
           std::string(ix.source) +
           " WHERE id <= (SELECT indexed_through FROM search_index_state);";
    sql += "CREATE VIRTUAL TABLE temp.live_terms USING fts5vocab(main, " + live + ", 'instance');";
    sql += "CREATE VIRTUAL TABLE temp.fresh_terms USING fts5vocab(temp, fresh, 'instance');";
    sql +=
        "CREATE TEMP TABLE diff AS SELECT (SELECT count(*) FROM (SELECT * FROM live_terms "
        "EXCEPT SELECT * FROM fresh_terms)) + (SELECT count(*) FROM (SELECT * FROM "
        "fresh_terms EXCEPT SELECT * FROM live_terms)) AS n, (SELECT count(*) FROM "
        "fresh_terms) AS total;";
    if (Status s = (*db)->Exec(sql); !s.ok()) return live + ": " + s.ToString();
    {
      auto stmt = (*db)->Prepare("SELECT n, total FROM temp.diff");
      if (!stmt) return stmt.error().ToString();
      auto row = stmt->Step();
      if (!row || !*row) return "no diff row";
      if (stmt->Int(0) != 0) {
        return live + ": " + std::to_string(stmt->Int(0)) + " of " + std::to_string(stmt->Int(1)) +
               " term instances differ from a fresh index";
      }
    }  // reset before dropping the tables it reads
    if (Status s = (*db)->Exec("DROP TABLE temp.diff; DROP TABLE temp.live_terms; "
                               "DROP TABLE temp.fresh_terms; DROP TABLE temp.fresh;");
        !s.ok()) {
      return s.ToString();
    }
  }
  return "";
}

// What a provider demands of a history: each assistant message's calls are answered by the tool
// messages right after it, each exactly once, and no tool message answers anything else.
// Returns "" when valid, else what is wrong.
inline std::string HistoryProblem(const std::vector<StoredMessage>& history) {
  std::map<std::string, int> open;  // call ids of the last assistant message, times answered
  auto close_turn = [&]() -> std::string {
    for (const auto& [id, n] : open)
      if (n != 1) return "call " + id + " answered " + std::to_string(n) + " times";
    open.clear();
    return "";
  };
  for (size_t i = 0; i < history.size(); ++i) {
    const StoredMessage& m = history[i];
    if (m.role == "tool") {
      auto it = open.find(m.tool_call_id);
      if (it == open.end()) return "tool message " + std::to_string(i) + " answers no open call";
      ++it->second;
      continue;
    }
    if (std::string p = close_turn(); !p.empty()) return p;
    if (m.role == "assistant" && m.tool_calls.is_array()) {
      for (const Json& c : m.tool_calls) open[c.value("id", "")] = 0;
    }
  }
  return close_turn();
}

}  // namespace talaria::store::testing
