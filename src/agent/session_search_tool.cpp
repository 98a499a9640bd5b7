// session_search's four modes over SessionStore's recall members. Limits follow the original:
// limit 3 (1-10), window 5 (1-20), discover's role filter user,assistant, its bookends the
// first and last 3 user/assistant messages, read's first 20 and last 10.
#include "talaria/agent/session_search.h"

#include <time.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "talaria/base/strings.h"
#include "talaria/store/session_store.h"

namespace talaria::agent {
namespace {

constexpr int64_t kDefaultLimit = 3, kMaxLimit = 10;
constexpr int64_t kDefaultWindow = 5, kMaxWindow = 20;
constexpr size_t kBookend = 3;
constexpr size_t kReadHead = 20, kReadTail = 10;
// A message's content beyond this is cut to its head and tail: a result holds up to ten
// sessions' windows, and one tool output can be megabytes.
constexpr size_t kMaxContentBytes = 2'000, kContentTailBytes = 400;
constexpr size_t kMaxArgumentBytes = 500;

Json SearchFailure(std::string message) {
  return Json{{"success", false}, {"error", std::move(message)}};
}

std::string FormatUtc(int64_t ms, const char* format) {
  const time_t secs = static_cast<time_t>(ms / 1000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[40];
  size_t n = strftime(buf, sizeof buf, format, &tm);
  return std::string(buf, n);
}
std::string IsoTime(int64_t ms) { return FormatUtc(ms, "%Y-%m-%dT%H:%M:%SZ"); }
std::string When(int64_t ms) { return FormatUtc(ms, "%Y-%m-%d %H:%M UTC"); }

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// `text` cut to at most `bytes` at a character boundary.
std::string_view Head(std::string_view text, size_t bytes) {
  if (text.size() <= bytes) return text;
  while (bytes > 0 && IsContinuation(text[bytes])) --bytes;
  return text.substr(0, bytes);
}

std::string Shorten(std::string_view text, size_t max_bytes, size_t tail_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::string_view head = Head(text, max_bytes - tail_bytes);
  size_t tail_from = text.size() - tail_bytes;
  while (tail_from < text.size() && IsContinuation(text[tail_from])) ++tail_from;
  std::string out(head);
  out += "\n[... " + std::to_string(tail_from - head.size()) + " bytes left out ...]\n";
  out.append(text.substr(tail_from));
  return out;
}

// The original's message shape: {id, role, content, timestamp, tool_name?, tool_calls?,
// tool_call_id?, anchor?}; empty fields left out, content always present.
Json MessageJson(const store::RecallMessage& m, int64_t anchor_id) {
  Json j = {{"id", m.id},
            {"role", m.role},
            {"content", Shorten(m.content, kMaxContentBytes, kContentTailBytes)},
            {"timestamp", IsoTime(m.created_at_ms)}};
  if (!m.name.empty()) j["tool_name"] = m.name;
  if (m.tool_calls.is_array() && !m.tool_calls.empty()) {
    Json calls = Json::array();
    for (const Json& c : m.tool_calls) {
      const Json* fn = c.is_object() && c.contains("function") && c["function"].is_object()
                           ? &c["function"]
                           : nullptr;
      std::string name, arguments;
      if (fn != nullptr && (*fn).contains("name") && (*fn)["name"].is_string()) {
        name = (*fn)["name"].get<std::string>();
      }
      if (fn != nullptr && (*fn).contains("arguments")) {
        const Json& a = (*fn)["arguments"];
        arguments = a.is_string() ? a.get<std::string>() : DumpJson(a);
      }
      calls.push_back({{"name", name}, {"arguments", Shorten(arguments, kMaxArgumentBytes, 100)}});
    }
    j["tool_calls"] = std::move(calls);
  } else if (!m.tool_calls.is_null() && !m.tool_calls.is_array()) {
    j["tool_calls"] = Shorten(DumpJson(m.tool_calls), kMaxArgumentBytes, 100);
  }
  if (!m.tool_call_id.empty()) j["tool_call_id"] = m.tool_call_id;
  if (m.id == anchor_id) j["anchor"] = true;
  return j;
}

Json MessagesJson(const std::vector<store::RecallMessage>& messages, int64_t anchor_id = 0) {
  Json out = Json::array();
  for (const store::RecallMessage& m : messages) out.push_back(MessageJson(m, anchor_id));
  return out;
}

Json SessionMeta(const store::SessionRow& s) {
  return Json{{"when", When(s.started_at_ms)},
              {"source", s.source},
              {"model", s.model},
              {"title", s.title}};
}

// "@session:<profile>/<id>" (the original's links) or a plain id.
std::string SessionIdArg(std::string_view raw) {
  std::string_view id = Trim(raw);
  if (id.starts_with("@session:")) id.remove_prefix(9);
  if (size_t slash = id.rfind('/'); slash != std::string_view::npos) id.remove_prefix(slash + 1);
  return std::string(id);
}

struct Args {
  std::string query, session_id, sort, detail = "adaptive", scope = "all";
  int64_t around = 0;
  bool has_around = false;
  int64_t limit = kDefaultLimit, window = kDefaultWindow;
  std::vector<std::string> roles;  // empty: the mode's default
};

// Hostile-proof reading: the dispatcher validates against the schema, but an MCP client or a
// bad model may still send anything; a wrong type is an error naming the argument.
Result<Args> ParseArgs(const Json& args) {
  Args a;
  if (args.is_null()) return a;
  if (!args.is_object()) return Err(InvalidArgumentError("arguments must be an object"));
  auto text = [&](const char* key, std::string& out) -> Status {
    if (!args.contains(key) || args[key].is_null()) return Status::Ok();
    if (!args[key].is_string()) return InvalidArgumentError(std::string(key) + " must be a string");
    out = args[key].get<std::string>();
    return Status::Ok();
  };
  auto integer = [&](const char* key, int64_t& out, bool* present) -> Status {
    if (!args.contains(key) || args[key].is_null()) return Status::Ok();
    const Json& v = args[key];
    if (v.is_number_integer()) {
      out = v.get<int64_t>();
    } else if (v.is_number_float() &&
               v.get<double>() == static_cast<double>(static_cast<int64_t>(v.get<double>()))) {
      out = static_cast<int64_t>(v.get<double>());
    } else if (v.is_string() && !v.get<std::string>().empty() &&
               v.get<std::string>().find_first_not_of("0123456789") == std::string::npos &&
               v.get<std::string>().size() < 18) {
      out = std::stoll(v.get<std::string>());
    } else {
      return InvalidArgumentError(std::string(key) + " must be an integer");
    }
    if (present != nullptr) *present = true;
    return Status::Ok();
  };
  std::string roles;
  TALARIA_RETURN_IF_ERROR(text("query", a.query));
  TALARIA_RETURN_IF_ERROR(text("session_id", a.session_id));
  TALARIA_RETURN_IF_ERROR(text("sort", a.sort));
  TALARIA_RETURN_IF_ERROR(text("detail", a.detail));
  TALARIA_RETURN_IF_ERROR(text("scope", a.scope));
  TALARIA_RETURN_IF_ERROR(text("role_filter", roles));
  TALARIA_RETURN_IF_ERROR(integer("around_message_id", a.around, &a.has_around));
  TALARIA_RETURN_IF_ERROR(integer("limit", a.limit, nullptr));
  TALARIA_RETURN_IF_ERROR(integer("window", a.window, nullptr));
  a.limit = std::clamp<int64_t>(a.limit, 1, kMaxLimit);
  a.window = std::clamp<int64_t>(a.window, 1, kMaxWindow);
  a.session_id = SessionIdArg(a.session_id);
  if (!a.sort.empty() && a.sort != "newest" && a.sort != "oldest") {
    return Err(InvalidArgumentError("sort must be 'newest' or 'oldest' (or left out)"));
  }
  if (a.detail != "adaptive" && a.detail != "full") {
    return Err(InvalidArgumentError("detail must be 'adaptive' or 'full'"));
  }
  if (a.scope != "all" && a.scope != "current") {
    return Err(InvalidArgumentError("scope must be 'current' or 'all'"));
  }
  if (!Trim(roles).empty()) {
    std::set<std::string> seen;
    for (std::string_view rest = roles; !rest.empty();) {
      const size_t comma = rest.find(',');
      std::string role(Trim(rest.substr(0, comma)));
      std::transform(role.begin(), role.end(), role.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (role == "user" || role == "assistant" || role == "tool" || role == "system") {
        if (seen.insert(role).second) a.roles.push_back(role);
      }
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    if (a.roles.empty()) {
      return Err(InvalidArgumentError(
          "role_filter names no known role; use user, assistant and tool, comma-separated"));
    }
  }
  return a;
}

// The lineages met so far: a session's root and its lineage's rows, one store read per
// lineage.
class Lineages {
 public:
  explicit Lineages(store::SessionStore& store) : store_(store) {}

  // The session's lineage (root first); empty for an unknown session.
  Result<const std::vector<store::SessionRow>*> Of(const std::string& session_id) {
    auto it = root_of_.find(session_id);
    if (it == root_of_.end()) {
      std::vector<store::SessionRow> rows = TALARIA_TRY(store_.Lineage(session_id));
      if (rows.empty()) return &empty_;
      const std::string root = rows.front().id;
      for (const store::SessionRow& r : rows) root_of_[r.id] = root;
      it = root_of_.emplace(session_id, root).first;  // (already there unless detached)
      rows_[root] = std::move(rows);
    }
    return &rows_[it->second];
  }
  Result<const store::SessionRow*> Row(const std::string& session_id) {
    const std::vector<store::SessionRow>* rows = TALARIA_TRY(Of(session_id));
    for (const store::SessionRow& r : *rows) {
      if (r.id == session_id) return &r;
    }
    return static_cast<const store::SessionRow*>(nullptr);
  }

 private:
  store::SessionStore& store_;
  std::unordered_map<std::string, std::string> root_of_;
  std::map<std::string, std::vector<store::SessionRow>> rows_;
  const std::vector<store::SessionRow> empty_;
};

std::string JoinRoles(const std::vector<std::string>& roles) {
  return Join(std::span<const std::string>(roles), ",");
}

Json Discover(store::SessionStore& store, const Args& a, const std::vector<std::string>& current,
              Lineages& lineages) {
  store::RecallSearchOptions opts;
  opts.limit = static_cast<size_t>(a.limit);
  opts.one_per_lineage = true;
  opts.roles = a.roles.empty() ? std::vector<std::string>{"user", "assistant"} : a.roles;
  opts.order = a.sort == "newest"   ? store::RecallOrder::kNewest
               : a.sort == "oldest" ? store::RecallOrder::kOldest
                                    : store::RecallOrder::kRank;
  if (a.scope == "current") {
    opts.only_sessions = current;
    if (current.empty()) opts.only_sessions = {std::string()};  // no current session: nothing
  } else {
    opts.exclude_sessions = current;
  }
  auto found = store.RecallSearch(a.query, opts);
  if (!found) return SearchFailure("session search failed: " + found.error().message());

  Json out = {{"success", true}, {"mode", "discover"}, {"query", a.query}};
  if (!found->note.empty()) out["note"] = found->note;
  // One entry per lineage (the store keeps the best hit of each).
  std::vector<const store::RecallHit*> best;
  for (const store::RecallHit& hit : found->hits) best.push_back(&hit);
  Json results = Json::array();
  for (size_t i = 0; i < best.size(); ++i) {
    const store::RecallHit& hit = *best[i];
    const bool expand = a.detail == "full" || i == 0;
    store::MessageWindowOptions around;
    around.roles = opts.roles;
    around.around_id = hit.message_id;
    around.window = expand ? static_cast<size_t>(a.window) : 0;
    auto w = store.ReadWindow(hit.session_id, around);
    if (!w)
      return SearchFailure("reading session " + hit.session_id + " failed: " + w.error().message());
    Json bookend_start = Json::array(), bookend_end = Json::array();
    if (expand && !w->messages.empty()) {
      store::MessageWindowOptions ends;
      ends.roles = {"user", "assistant"};
      ends.head = kBookend;
      ends.tail = kBookend;
      auto e = store.ReadWindow(hit.session_id, ends);
      if (!e)
        return SearchFailure("reading session " + hit.session_id +
                             " failed: " + e.error().message());
      const int64_t first = w->messages.front().id, last = w->messages.back().id;
      for (size_t k = 0; k < e->messages.size(); ++k) {
        const store::RecallMessage& m = e->messages[k];
        if (k < kBookend && m.id < first) bookend_start.push_back(MessageJson(m, 0));
        if (k >= e->messages.size() - std::min(e->messages.size(), kBookend) && m.id > last) {
          bookend_end.push_back(MessageJson(m, 0));
        }
      }
    }
    Json entry = {{"session_id", hit.session_id}};
    auto row = lineages.Row(hit.session_id);
    const store::SessionRow* s = row ? *row : nullptr;
    if (s != nullptr) {
      Json meta = SessionMeta(*s);
      entry.update(meta);
    }
    entry["matched_role"] = hit.role;
    entry["match_message_id"] = hit.message_id;
    entry["snippet"] = hit.snippet;
    entry["bookend_start"] = std::move(bookend_start);
    entry["messages"] = MessagesJson(w->messages, hit.message_id);
    entry["bookend_end"] = std::move(bookend_end);
    entry["messages_before"] = w->before;
    entry["messages_after"] = w->after;
    if (!hit.parent_session_id.empty()) {
      entry["parent_session_id"] = hit.parent_session_id;
      entry["root_session_id"] = hit.root_session_id;
    }
    results.push_back(std::move(entry));
  }
  out["count"] = results.size();
  out["sessions_searched"] = found->lineages;
  out["results"] = std::move(results);
  if (!found->hits.empty()) return out;

  // Why nothing: the original answered an empty list and left the model guessing.
  std::string why;
  if (found->empty_reason == "no_terms") {
    why =
        "The query has no searchable words. Pass words to look for, or leave query out to "
        "browse recent sessions.";
  } else if (found->empty_reason == "syntax") {
    why = "The search expression could not be parsed (" + found->detail +
          "). Use plain words, \"quoted phrases\", OR or NOT between words, or a trailing * for "
          "a prefix.";
    out["hint"] = "syntax";
  } else if (found->empty_reason == "roles") {
    std::vector<std::string> all = opts.roles;
    for (const std::string& r : found->matched_roles) all.push_back(r);
    why = "Only " + JoinRoles(found->matched_roles) + " messages matched; role_filter '" +
          JoinRoles(opts.roles) + "' excludes them. Pass role_filter '" + JoinRoles(all) +
          "' to include them.";
  } else if (found->empty_reason == "excluded") {
    why = a.scope == "current"
              ? "Only other conversations matched; scope 'current' leaves them out (scope 'all' "
                "searches them)."
              : "Only the current conversation matched, which discover leaves out (it is "
                "already in your context; scope 'current' searches it).";
  } else {
    why =
        "No earlier session has a message matching every word of the query (words are "
        "ANDed). Try fewer or other words, OR between alternatives, or a prefix like deploy*.";
  }
  out["message"] = why;
  out["empty_reason"] = found->empty_reason;
  return out;
}

Json Scroll(store::SessionStore& store, const Args& a, const std::set<std::string>& current,
            Lineages& lineages) {
  auto anchor = store.GetMessage(a.around);
  if (!anchor) return SearchFailure("session search failed: " + anchor.error().message());
  if (!*anchor) {
    return SearchFailure("no message " + std::to_string(a.around) +
                         "; use an id from a discover result or an earlier window");
  }
  const std::string& holder = (*anchor)->session_id;
  if (current.contains(holder)) {
    return SearchFailure("message " + std::to_string(a.around) +
                         " is in the current conversation, which is already in your context");
  }
  std::string warning;
  if (holder != a.session_id) {
    auto rows = lineages.Of(a.session_id);
    if (!rows) return SearchFailure("session search failed: " + rows.error().message());
    if ((*rows)->empty()) return SearchFailure("no session " + a.session_id);
    const bool same_lineage =
        std::any_of((*rows)->begin(), (*rows)->end(),
                    [&](const store::SessionRow& r) { return r.id == holder; });
    if (!same_lineage) {
      return SearchFailure("message " + std::to_string(a.around) + " is not in session " +
                           a.session_id + " or its conversation");
    }
    warning = "message " + std::to_string(a.around) + " is in session " + holder +
              " of the same conversation; showing it there";
  }
  store::MessageWindowOptions o;
  o.roles = a.roles;
  o.around_id = a.around;
  o.window = static_cast<size_t>(a.window);
  auto w = store.ReadWindow(holder, o);
  if (!w) return SearchFailure("session search failed: " + w.error().message());
  Json out = {{"success", true},
              {"mode", "scroll"},
              {"session_id", holder},
              {"around_message_id", a.around}};
  auto row = lineages.Row(holder);
  if (row && *row != nullptr) out["session_meta"] = SessionMeta(**row);
  out["window"] = a.window;
  out["messages"] = MessagesJson(w->messages, a.around);
  out["messages_before"] = w->before;
  out["messages_after"] = w->after;
  if (!warning.empty()) out["warning"] = warning;
  return out;
}

Json Read(store::SessionStore& store, const Args& a, Lineages& lineages) {
  auto row = lineages.Row(a.session_id);
  if (!row) return SearchFailure("session search failed: " + row.error().message());
  if (*row == nullptr) return SearchFailure("no session " + a.session_id);
  store::MessageWindowOptions o;
  o.roles = a.roles;
  o.head = kReadHead;
  o.tail = kReadTail;
  auto w = store.ReadWindow(a.session_id, o);
  if (!w) return SearchFailure("session search failed: " + w.error().message());
  Json out = {{"success", true},
              {"mode", "read"},
              {"session_id", a.session_id},
              {"session_meta", SessionMeta(**row)},
              {"message_count", w->total},
              {"truncated", w->truncated},
              {"messages", MessagesJson(w->messages)}};
  if (w->truncated) {
    out["message"] = "Showing the first " + std::to_string(kReadHead) + " and last " +
                     std::to_string(kReadTail) + " of " + std::to_string(w->total) +
                     " messages; scroll (session_id + around_message_id) for the middle.";
  }
  return out;
}

Json Browse(store::SessionStore& store, const Args& a, const std::vector<std::string>& current) {
  store::BrowseOptions o;
  o.limit = static_cast<size_t>(a.limit);
  o.exclude_sessions = current;
  auto rows = store.Browse(o);
  if (!rows) return SearchFailure("session search failed: " + rows.error().message());
  Json results = Json::array();
  for (const store::SessionPreview& p : *rows) {
    results.push_back({{"session_id", p.session.id},
                       {"title", p.session.title},
                       {"source", p.session.source},
                       {"started_at", IsoTime(p.session.started_at_ms)},
                       {"last_active", IsoTime(p.session.updated_at_ms)},
                       {"message_count", p.session.message_count},
                       {"preview", p.preview}});
  }
  const size_t n = results.size();
  return Json{{"success", true},
              {"mode", "browse"},
              {"results", std::move(results)},
              {"count", n},
              {"message", n == 0 ? "No earlier sessions."
                                 : "The most recently active sessions. Pass query to search "
                                   "them, or session_id to read one."}};
}

}  // namespace

Json RunSessionSearch(store::SessionStore& store, std::string_view current_session_id,
                      const Json& args) {
  auto parsed = ParseArgs(args);
  if (!parsed) return SearchFailure(parsed.error().message());
  const Args& a = *parsed;
  Lineages lineages(store);
  std::vector<std::string> current;
  if (!current_session_id.empty()) {
    auto rows = lineages.Of(std::string(current_session_id));
    if (!rows) return SearchFailure("session search failed: " + rows.error().message());
    for (const store::SessionRow& r : **rows) current.push_back(r.id);
    if (current.empty()) current.emplace_back(current_session_id);
  }
  const std::set<std::string> current_set(current.begin(), current.end());

  if (!a.session_id.empty() && a.has_around) return Scroll(store, a, current_set, lineages);
  if (!a.session_id.empty()) return Read(store, a, lineages);
  if (!IsBlank(a.query)) return Discover(store, a, current, lineages);
  return Browse(store, a, current);
}

ToolResult SessionSearchToolResult(store::SessionStore& store, std::string_view current_session_id,
                                   const Json& args) {
  // {"success": false, "error": ...} becomes an error result through its "error" key.
  ToolResult result = ToolResult::FromJson(RunSessionSearch(store, current_session_id, args));
  if (result.ok()) result.untrusted_source = "session_search";
  return result;
}

}  // namespace talaria::agent
