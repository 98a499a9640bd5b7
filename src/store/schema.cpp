#include "store/schema.h"

#include <string>
#include <string_view>

namespace talaria::store {
namespace {

// The text FTS indexes for a message's tool side: the tool name of a tool result, then each call
// of an assistant message as "name arguments" (the calls' JSON wrapper, ids and "type" keys would
// only add the same noise tokens to every row). It appears in the FTS views and in the delete
// trigger (`@TOOLS(row)@` below): an external-content FTS5 table can only delete a row when given
// exactly the tokens it indexed, so all of them must compute the same text.
//
// Version 1 walked the calls with json_each. FTS5 reads an external content table with virtual
// tables disabled, so its 'integrity-check' and 'rebuild' failed on that view, and json_extract
// over an array element that is a bare string raised "malformed JSON" (one such row stopped all
// indexing). Version 2 walks the array by index with a recursive CTE: the same tokens for every
// row version 1 could index, no virtual table, no error for any stored text.
std::string ToolsTextV1(std::string_view row) {
  std::string r(row);
  return "(" + r + ".name || ' ' || coalesce((SELECT group_concat(" +
         "coalesce(json_extract(value, '$.function.name'), '') || ' ' || " +
         "coalesce(json_extract(value, '$.function.arguments'), ''), ' ') FROM json_each(" +
         "CASE WHEN json_valid(" + r + ".tool_calls) AND json_type(" + r +
         ".tool_calls) = 'array' THEN " + r + ".tool_calls ELSE '[]' END)), ''))";
}

std::string ToolsTextV2(std::string_view row) {
  std::string r(row);
  const std::string calls = r + ".tool_calls";
  const std::string at = "'$[' || i || '].function.";
  return "(" + r + ".name || ' ' || CASE WHEN json_valid(" + calls + ") AND json_type(" + calls +
         ") = 'array' THEN coalesce((WITH RECURSIVE c(i, t) AS (SELECT 0, NULL UNION ALL " +
         "SELECT i + 1, coalesce(json_extract(" + calls + ", " + at + "name'), '') || ' ' || " +
         "coalesce(json_extract(" + calls + ", " + at + "arguments'), '') FROM c WHERE i < " +
         "json_array_length(" + calls + ")) SELECT group_concat(t, ' ') FROM c WHERE t IS NOT " +
         "NULL), '') ELSE '' END)";
}

// Version 1. Timestamps are Unix milliseconds. messages.id is the FTS rowid; seq numbers a
// session's messages 1, 2, ... (sessions.message_count is the last one). has_cjk marks the rows
// the trigram index holds.
constexpr std::string_view kVersion1 = R"sql(
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  parent_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
  cwd TEXT NOT NULL DEFAULT '',
  model TEXT NOT NULL DEFAULT '',
  title TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL DEFAULT '',
  started_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  ended_at_ms INTEGER NOT NULL DEFAULT 0,
  end_reason TEXT NOT NULL DEFAULT '',
  input_tokens INTEGER NOT NULL DEFAULT 0,
  cached_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  reasoning_tokens INTEGER NOT NULL DEFAULT 0,
  cost_usd REAL NOT NULL DEFAULT 0,
  message_count INTEGER NOT NULL DEFAULT 0
);
-- No index on updated_at_ms: every append changes it, and moving index entries was a fifth of
-- an append's cost; listing sorts the sessions (thousands of rows) instead.
CREATE INDEX sessions_by_cwd ON sessions(cwd);
CREATE INDEX sessions_by_parent ON sessions(parent_id) WHERE parent_id IS NOT NULL;

CREATE TABLE messages (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  role TEXT NOT NULL,
  content TEXT NOT NULL DEFAULT '',
  reasoning TEXT NOT NULL DEFAULT '',
  tool_calls TEXT,
  tool_call_id TEXT NOT NULL DEFAULT '',
  name TEXT NOT NULL DEFAULT '',
  input_tokens INTEGER NOT NULL DEFAULT 0,
  cached_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  reasoning_tokens INTEGER NOT NULL DEFAULT 0,
  cost_usd REAL NOT NULL DEFAULT 0,
  created_at_ms INTEGER NOT NULL,
  has_cjk INTEGER NOT NULL DEFAULT 0,
  UNIQUE (session_id, seq)
);
CREATE INDEX messages_with_cjk ON messages(id) WHERE has_cjk;

-- A compaction: LoadHistory returns `replacement` (a JSON array of messages) followed by the
-- messages with seq > after_seq.
CREATE TABLE compactions (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  after_seq INTEGER NOT NULL,
  summary TEXT NOT NULL,
  replacement TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL
);
CREATE INDEX compactions_by_session ON compactions(session_id, id);

CREATE TABLE session_state (
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  PRIMARY KEY (session_id, key)
) WITHOUT ROWID;

-- What the FTS tables index, computed from messages: the text is stored once.
CREATE VIEW messages_fts_source AS
  SELECT id, content AS body, @TOOLS(messages)@ AS tools FROM messages;
-- (Not "id IN (SELECT ... WHERE has_cjk)": FTS5 reads a snippet's row through this view by id,
-- and an IN subquery is rebuilt for every such read, 30,000 ids at a million messages.)
CREATE VIEW messages_cjk_source AS
  SELECT id, content AS body, @TOOLS(messages)@ AS tools FROM messages WHERE has_cjk;

-- Words (unicode61, diacritics folded) over every message; full detail for phrases, snippets.
CREATE VIRTUAL TABLE messages_fts USING fts5(body, tools,
  content='messages_fts_source', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
-- Trigrams only over the messages with CJK text, which unicode61 cannot split into words; over
-- every message a trigram index costs several times what the word index does.
CREATE VIRTUAL TABLE messages_cjk USING fts5(body, tools,
  content='messages_cjk_source', content_rowid='id', tokenize='trigram');
-- Merge segments 8 at a time, not 4: indexing a 1 KB message cost ~40 us, much of it merging;
-- with 8, ~30 us, and the million-message build took half the time, with the same query speed
-- (16 saved a little more and made queries ~30 % slower).
INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', 8);

-- The indexes run behind the messages: an append commits the message alone, and the messages
-- after indexed_through are indexed in batches while the store is idle (SqliteSessionStore),
-- because an FTS5 insert in its own transaction costs ~150 us (a new segment and structure
-- record each time) against ~30 us for the message. Both move in one transaction, so the index never drifts;
-- a crash leaves unindexed messages, indexed on the next open.
CREATE TABLE search_index_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  indexed_through INTEGER NOT NULL
);
INSERT INTO search_index_state VALUES (1, 0);
CREATE TRIGGER messages_unindex AFTER DELETE ON messages
WHEN old.id <= (SELECT indexed_through FROM search_index_state) BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, body, tools)
    VALUES ('delete', old.id, old.content, @TOOLS(old)@);
  INSERT INTO messages_cjk(messages_cjk, rowid, body, tools)
    SELECT 'delete', old.id, old.content, @TOOLS(old)@ WHERE old.has_cjk;
END;
-- Messages are append-only: an update would also have to re-index.
CREATE TRIGGER messages_append_only BEFORE UPDATE ON messages BEGIN
  SELECT RAISE(ABORT, 'messages are append-only');
END;
)sql";

// Version 2: the views and the delete trigger compute the tool text without json_each (see
// ToolsTextV2), so FTS5's own integrity-check and rebuild work. The indexed tokens are the
// same, so the indexes stay as they are.
constexpr std::string_view kVersion2 = R"sql(
DROP TRIGGER messages_unindex;
DROP VIEW messages_fts_source;
DROP VIEW messages_cjk_source;
CREATE VIEW messages_fts_source AS
  SELECT id, content AS body, @TOOLS(messages)@ AS tools FROM messages;
CREATE VIEW messages_cjk_source AS
  SELECT id, content AS body, @TOOLS(messages)@ AS tools FROM messages WHERE has_cjk;
CREATE TRIGGER messages_unindex AFTER DELETE ON messages
WHEN old.id <= (SELECT indexed_through FROM search_index_state) BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, body, tools)
    VALUES ('delete', old.id, old.content, @TOOLS(old)@);
  INSERT INTO messages_cjk(messages_cjk, rowid, body, tools)
    SELECT 'delete', old.id, old.content, @TOOLS(old)@ WHERE old.has_cjk;
END;
)sql";

// `sql` with each @TOOLS(row)@ replaced by the tool text of that schema version.
std::string ExpandToolsText(std::string_view sql, std::string (*tools_text)(std::string_view)) {
  std::string out;
  constexpr std::string_view kOpen = "@TOOLS(", kClose = ")@";
  size_t pos = 0;
  for (;;) {
    size_t open = sql.find(kOpen, pos);
    if (open == std::string_view::npos) break;
    size_t close = sql.find(kClose, open);
    out.append(sql.substr(pos, open - pos));
    out += tools_text(sql.substr(open + kOpen.size(), close - open - kOpen.size()));
    pos = close + kClose.size();
  }
  out.append(sql.substr(pos));
  return out;
}

constexpr std::string_view kSteps[] = {kVersion1, kVersion2};

}  // namespace

int CurrentSchemaVersion() { return static_cast<int>(std::size(kSteps)); }

Status MigrateSchema(SqliteDb& db) {
  const int known = CurrentSchemaVersion();
  for (;;) {
    // Read the version inside the write transaction: two processes opening a fresh file at once
    // must not both run step 1.
    bool done = false;
    Status s = WithWriteTransaction(db, [&]() -> Status {
      int64_t version = TALARIA_TRY(db.QueryInt("PRAGMA user_version"));
      if (version > known) {
        return FailedPreconditionError(
            db.path() + " has schema version " + std::to_string(version) +
            ", newer than this talaria understands (" + std::to_string(known) +
            "); use a newer talaria or point TALARIA_HOME elsewhere");
      }
      if (version < 0) {
        return InternalError(db.path() + " has a negative schema version " +
                             std::to_string(version) + "; it is not a talaria sessions database");
      }
      if (version == known) {
        done = true;
        return Status::Ok();
      }
      TALARIA_RETURN_IF_ERROR(
          db.Exec(ExpandToolsText(kSteps[version], version == 0 ? &ToolsTextV1 : &ToolsTextV2)));
      return db.Exec("PRAGMA user_version = " + std::to_string(version + 1));
    });
    if (!s.ok()) return s.WithContext("migrating the sessions schema");
    if (done) return Status::Ok();
  }
}

}  // namespace talaria::store
