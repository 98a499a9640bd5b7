// SessionStore: the agent's sessions and their messages in SQLite ($TALARIA_HOME/sessions.db),
// committed as each message happens so a crash loses nothing that was shown.
//
//   auto store = talaria::store::SessionStore::Open(talaria::store::DefaultSessionsPath());
//   auto session = (*store)->CreateSession({.cwd = "/srv/project", .model = "gpt-4o"});
//   (*store)->AppendMessage(session->id, message);
//   auto history = (*store)->LoadHistory(session->id);  // what the next request sends
//
// - WAL journal, a versioned schema migrated forward on open (a newer schema is refused).
// - Compaction records: a summary plus the history that replaces everything before it, so a
//   resumed session sees exactly the history the live one had, without summarizing again.
// - RepairInterrupted: after a crash, every tool call without a result gets a synthetic one
//   (persisted) saying it was interrupted, so the next request is valid for any provider.
// - Full-text search (FTS5: unicode61 for words, trigram for CJK and substrings) over message
//   text and tool names/arguments.
// The store knows messages as rows (roles and tool calls as the wire spells them), not the
// agent's types, so it depends on base only.
// Thread-safety: thread-safe (one connection behind a mutex); several processes may open the
// same file (WAL, busy timeout).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>  // StoredMessage holds a Json by value

#include "talaria/base/json.h"
#include "talaria/base/status.h"

namespace talaria::store {

// $TALARIA_HOME/sessions.db
std::string DefaultSessionsPath();

// Every member has a default initializer, so designated initializers may name only some
// ({.cwd = ...}) under -Wextra.
struct TokenTotals {
  int64_t input_tokens = 0;
  int64_t cached_tokens = 0;
  int64_t output_tokens = 0;
  int64_t reasoning_tokens = 0;
  double cost_usd = 0;
};

struct NewSession {
  std::string parent_id{};  // a compacted or delegated session's origin; empty: none
  std::string cwd{};
  std::string model{};
  std::string title{};
  std::string source = "cli";  // cli | mcp | delegate | ...
};

struct SessionRow {
  std::string id{};  // YYYYMMDD_HHMMSS_<6 hex>
  std::string parent_id{};
  std::string cwd{};
  std::string model{};
  std::string title{};
  std::string source{};
  int64_t started_at_ms = 0;
  int64_t updated_at_ms = 0;
  int64_t ended_at_ms = 0;   // 0: not ended
  std::string end_reason{};  // "completed", "interrupted", "budget", "error", ...
  TokenTotals totals;
  int64_t message_count = 0;
};

struct StoredMessage {
  int64_t seq = 0;     // assigned by AppendMessage: 1, 2, ... per session
  std::string role{};  // system | user | assistant | tool
  std::string content{};
  std::string reasoning{};
  Json tool_calls{};  // assistant: [{"id", "type": "function", "function": {...}}]; or null
  std::string tool_call_id{};  // tool
  std::string name{};          // tool: the tool's name
  TokenTotals usage;           // assistant: the usage of the request that produced it
  int64_t created_at_ms = 0;
};

struct ListOptions {
  std::string cwd{};  // empty: every directory
  size_t limit = 50;
};

struct SearchOptions {
  size_t limit = 20;
  std::string exclude_session{};  // e.g. the current one
};

struct SearchHit {
  std::string session_id{};
  int64_t seq = 0;
  std::string role{};
  std::string snippet{};  // the matching text around the hit, matches marked >>>like this<<<
  double rank = 0;        // lower is better (bm25; 0 for a CJK substring match)
};

// ---- Recall (session_search): reads on a read-only connection of their own (WAL: a reader
// never waits for the writer, nor the writer for it). Messages are named by their `id`, which
// is unique across sessions (messages.id), so an id alone says which session holds it.

struct RecallMessage {
  int64_t id = 0;  // unique across every session; increases with time
  std::string session_id{};
  int64_t seq = 0;  // within its session
  std::string role{};
  std::string content{};
  Json tool_calls{};  // assistant: the calls as stored; or null
  std::string tool_call_id{};
  std::string name{};  // tool: the tool's name
  int64_t created_at_ms = 0;
};

enum class RecallOrder { kRank, kNewest, kOldest };

struct RecallSearchOptions {
  size_t limit = 50;                 // hits, best first
  std::vector<std::string> roles{};  // empty: every role
  // The sessions whose messages never count (e.g. the current conversation's).
  std::vector<std::string> exclude_sessions{};
  // Non-empty: only these sessions' messages count (scope "current").
  std::vector<std::string> only_sessions{};
  RecallOrder order = RecallOrder::kRank;
  // At most one hit per lineage (the sessions sharing a root, following parent_id): the best
  // of each. Snippets are built only for the hits returned.
  bool one_per_lineage = false;
};

struct RecallHit {
  int64_t message_id = 0;
  std::string session_id{};
  std::string role{};
  std::string snippet{};  // matches marked >>>like this<<<
  double rank = 0;        // bm25, lower is better; 0 for CJK hits (newest first)
  int64_t created_at_ms = 0;
  std::string parent_session_id{};  // the hit's session's parent; empty: none
  std::string root_session_id{};    // its lineage's root (the session itself when no parent)
};

struct RecallSearchResult {
  std::vector<RecallHit> hits;
  // Why there are no hits, when there are none: "no_terms" (nothing searchable in the query),
  // "syntax" (FTS5 refused the expression), "no_match", "roles" (matches only in roles
  // role_filter leaves out), "excluded" (matches only in excluded sessions).
  std::string empty_reason{};
  std::vector<std::string> matched_roles{};  // "roles": the roles that did match
  std::string detail{};                      // "syntax": SQLite's message
  std::string note{};                        // how the query was read, when not as typed
  // How many lineages the matches examined (after the filters) came from.
  size_t lineages = 0;
};

// Where a scroll or read looks. Messages of the roles listed (empty: every role but system).
struct MessageWindowOptions {
  std::vector<std::string> roles{};
  int64_t around_id = 0;  // > 0: up to `window` messages each side of this one (kept whatever
                          // its role), else the first `head` and last `tail`
  size_t window = 5;
  size_t head = 20;
  size_t tail = 10;
};

struct MessageWindow {
  std::vector<RecallMessage> messages;  // in order
  int64_t before = 0;  // messages of those roles before the first returned / not returned
  int64_t after = 0;
  int64_t total = 0;       // messages of those roles in the session
  bool truncated = false;  // head/tail: the middle was left out
};

struct BrowseOptions {
  size_t limit = 10;
  std::vector<std::string> exclude_sessions{};
  bool skip_children = true;  // sessions with a parent_id (delegated, continued)
};

struct SessionPreview {
  SessionRow session;
  std::string preview{};  // the start of its first user message
};

class SessionStore {
 public:
  // Creates the file and its directory (0700) when missing, migrates an older schema.
  // Errors: FailedPrecondition (a schema newer than this build), Unavailable (cannot open),
  // Internal (corrupt file: the message says so and names the path).
  static Result<std::unique_ptr<SessionStore>> Open(const std::string& path);
  // The recall members only, over a read-only connection: nothing is created, migrated or
  // written (every other member fails with FailedPrecondition). What `talaria mcp` serves
  // session_search from. NotFound when the file does not exist.
  static Result<std::unique_ptr<SessionStore>> OpenReadOnly(const std::string& path);
  virtual ~SessionStore() = default;

  virtual Result<SessionRow> CreateSession(const NewSession& session) = 0;
  virtual Result<std::optional<SessionRow>> GetSession(std::string_view id) = 0;
  // Newest first.
  virtual Result<std::vector<SessionRow>> ListSessions(const ListOptions& options) = 0;
  // The session most recently updated in `cwd`; nullopt when there is none.
  virtual Result<std::optional<SessionRow>> LatestSession(std::string_view cwd) = 0;
  virtual Status SetTitle(std::string_view id, std::string_view title) = 0;
  virtual Status EndSession(std::string_view id, std::string_view reason) = 0;
  // The session, its messages, compactions and state. NotFound when there is no such session.
  virtual Status DeleteSession(std::string_view id) = 0;

  // Appends and commits one message; sets message.seq and created_at_ms, adds message.usage
  // to the session's totals. NotFound for an unknown session.
  virtual Status AppendMessage(std::string_view session_id, StoredMessage& message) = 0;
  // Appends and commits `messages` in one transaction, as AppendMessage does each (an import,
  // a fork). All or none.
  virtual Status AppendMessages(std::string_view session_id,
                                std::vector<StoredMessage>& messages) = 0;
  // The history the next request is built from: the latest compaction's replacement history,
  // then every message appended after it. Every message, with nothing pruned.
  virtual Result<std::vector<StoredMessage>> LoadHistory(std::string_view session_id) = 0;
  // Every message ever appended (compactions aside), in order: what `sessions show` prints.
  virtual Result<std::vector<StoredMessage>> LoadTranscript(std::string_view session_id) = 0;
  // Records a compaction in one transaction: from now on LoadHistory returns `replacement`
  // followed by what is appended later.
  virtual Status AppendCompaction(std::string_view session_id, std::string_view summary,
                                  const std::vector<StoredMessage>& replacement) = 0;
  // Appends a synthetic tool result for each tool call of the history that has none ("the
  // call was interrupted before it finished; check its side effects before relying on them").
  // Returns how many were added. Call it on resuming, before appending anything: the results
  // go at the end, where providers expect them only when the interrupted turn is the last one.
  virtual Result<size_t> RepairInterrupted(std::string_view session_id) = 0;

  // Small per-session state the agent keeps (the todo list, ...), replaced whole.
  virtual Status PutState(std::string_view session_id, std::string_view key, const Json& value) = 0;
  virtual Result<std::optional<Json>> GetState(std::string_view session_id,
                                               std::string_view key) = 0;

  // Sums the totals of every session (in `cwd` when not empty): `sessions usage` without an id.
  // Subagents' sessions (source "delegate" with a parent) are left out: their usage is in
  // their parent's totals.
  // Per-turn usage is each assistant message's `usage` in LoadTranscript.
  virtual Result<TokenTotals> SumUsage(std::string_view cwd) = 0;

  // Messages matching `query`, best first. Any text is a valid query: terms are matched as
  // words (ANDed; "quoted phrases" and a trailing * after 3+ characters for a prefix are
  // honoured; FTS5 operators are plain words), CJK text as substrings (newest first). bm25
  // ranks the newest 2,000 matches, which keeps a query for a word in every message fast.
  // Empty for a query without searchable text.
  virtual Result<std::vector<SearchHit>> Search(std::string_view query,
                                                const SearchOptions& options) = 0;

  // ---- Recall (session_search). Each runs on the store's read-only connection (opened on
  // first use), so it never waits for this or any process's writes; it sees what is committed
  // and, for search, what is indexed (indexing runs at most a few hundred messages behind a
  // live writer, and catches up on every open and close).

  // Messages matching `query` for session_search: FTS5 over message text, tool names and
  // call arguments, with AND/OR/NOT kept as operators (BuildFtsQuery's operator mode), CJK
  // through the trigram index. A query FTS5 still refuses is an empty result with
  // empty_reason "syntax", never an error.
  virtual Result<RecallSearchResult> RecallSearch(std::string_view query,
                                                  const RecallSearchOptions& options);
  // The session's conversation: its root (following parent_id) first, then every session
  // descending from that root, oldest first. Empty for an unknown session.
  virtual Result<std::vector<SessionRow>> Lineage(std::string_view session_id);
  // The message with this id, wherever it is; nullopt when there is none.
  virtual Result<std::optional<RecallMessage>> GetMessage(int64_t message_id);
  // A window of one session's messages (see MessageWindowOptions). NotFound for an unknown
  // session or an anchor not in it.
  virtual Result<MessageWindow> ReadWindow(std::string_view session_id,
                                           const MessageWindowOptions& options);
  // Sessions by last activity, newest first, with a preview.
  virtual Result<std::vector<SessionPreview>> Browse(const BrowseOptions& options);
};

}  // namespace talaria::store
