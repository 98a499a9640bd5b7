// talaria sessions list|show ID|usage [ID]|delete ID: the session store, for people (tables)
// and programs (--json).
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/agent_commands.h"
#include "cli/agent_events.h"
#include "cli/table.h"
#include "talaria/base/json.h"
#include "talaria/store/session_store.h"

namespace talaria::cli {
namespace {

std::string LocalTimeOfMs(int64_t ms) {
  if (ms <= 0) return "-";
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

std::string Money(double usd) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "$%.4f", usd);
  return buf;
}

Json TotalsJson(const store::TokenTotals& t) {
  return Json{{"input_tokens", t.input_tokens},
              {"cached_tokens", t.cached_tokens},
              {"output_tokens", t.output_tokens},
              {"reasoning_tokens", t.reasoning_tokens},
              {"cost_usd", t.cost_usd}};
}

Json SessionJson(const store::SessionRow& s) {
  return Json{{"id", s.id},
              {"parent_id", s.parent_id},
              {"cwd", s.cwd},
              {"model", s.model},
              {"title", s.title},
              {"source", s.source},
              {"started_at_ms", s.started_at_ms},
              {"updated_at_ms", s.updated_at_ms},
              {"ended_at_ms", s.ended_at_ms},
              {"end_reason", s.end_reason},
              {"message_count", s.message_count},
              {"usage", TotalsJson(s.totals)}};
}

Json MessageJson(const store::StoredMessage& m) {
  Json out{{"seq", m.seq}, {"role", m.role}, {"content", m.content}};
  if (!m.reasoning.empty()) out["reasoning"] = m.reasoning;
  if (m.tool_calls.is_array() && !m.tool_calls.empty()) out["tool_calls"] = m.tool_calls;
  if (!m.tool_call_id.empty()) out["tool_call_id"] = m.tool_call_id;
  if (!m.name.empty()) out["name"] = m.name;
  if (m.role == "assistant") out["usage"] = TotalsJson(m.usage);
  out["created_at_ms"] = m.created_at_ms;
  return out;
}

int FailSessions(const std::string& message, int code = kExitToolError) {
  std::fprintf(stderr, "talaria sessions: %s\n", message.c_str());
  return code;
}

std::string Excerpt(std::string_view text, size_t width) {
  std::string line;
  for (char c : text) {
    if (line.size() >= width) {
      line += "…";
      break;
    }
    line += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  }
  return line;
}

// A delegated child's row names its parent, so a list of sessions reads as the tree it is.
std::string TitleCell(const store::SessionRow& s) {
  std::string cell = Excerpt(s.title.empty() ? s.cwd : s.title, 40);
  if (s.parent_id.empty()) return cell;
  return "\u21B3 " + s.parent_id + ": " + cell;  // "↳ <parent>: title"
}

int List(store::SessionStore& db, const SessionsOptions& options) {
  store::ListOptions list{.cwd = {}, .limit = options.limit};
  if (options.here) {
    std::error_code ec;
    list.cwd = std::filesystem::current_path(ec).string();
  }
  auto sessions = db.ListSessions(list);
  if (!sessions) return FailSessions(sessions.error().message());
  if (options.json) {
    Json out = Json::array();
    for (const auto& s : *sessions) out.push_back(SessionJson(s));
    std::printf("%s\n", DumpJson(out).c_str());
    return kExitOk;
  }
  if (sessions->empty()) {
    std::printf("No sessions yet. Start one with: talaria chat\n");
    return kExitOk;
  }
  Table table({"id", "started", "model", "msgs", "tokens in/out", "cost", "title"});
  for (const auto& s : *sessions) {
    table.AddRow(
        {s.id, LocalTimeOfMs(s.started_at_ms), s.model, std::to_string(s.message_count),
         std::to_string(s.totals.input_tokens) + "/" + std::to_string(s.totals.output_tokens),
         Money(s.totals.cost_usd), TitleCell(s)});
  }
  table.Print(stdout);
  return kExitOk;
}

int ShowSessions(store::SessionStore& db, const SessionsOptions& options) {
  auto session = db.GetSession(options.id);
  if (!session) return FailSessions(session.error().message());
  if (!session->has_value()) return FailSessions("no session " + options.id, kExitUsage);
  auto messages = db.LoadTranscript(options.id);
  if (!messages) return FailSessions(messages.error().message());
  if (options.json) {
    Json out = SessionJson(**session);
    out["messages"] = Json::array();
    for (const auto& m : *messages) out["messages"].push_back(MessageJson(m));
    std::printf("%s\n", DumpJson(out).c_str());
    return kExitOk;
  }
  const store::SessionRow& s = **session;
  std::printf("session %s  (%s, %s)\n  cwd: %s\n", s.id.c_str(), s.model.c_str(),
              LocalTimeOfMs(s.started_at_ms).c_str(), s.cwd.c_str());
  if (!s.end_reason.empty()) std::printf("  ended: %s\n", s.end_reason.c_str());
  for (const auto& m : *messages) {
    if (m.role == "system") continue;
    if (m.role == "tool") {
      std::printf("    ↳ %s: %s\n", m.name.c_str(), Excerpt(m.content, 200).c_str());
      continue;
    }
    if (!m.content.empty()) std::printf("\n[%s] %s\n", m.role.c_str(), m.content.c_str());
    if (m.tool_calls.is_array()) {
      for (const auto& call : m.tool_calls) {
        const Json& fn = call.value("function", Json::object());
        std::printf("  → %s %s\n", fn.value("name", std::string()).c_str(),
                    ArgumentPreview(fn.value("arguments", std::string()), 80).c_str());
      }
    }
  }
  return kExitOk;
}

int SessionsUsage(store::SessionStore& db, const SessionsOptions& options) {
  if (options.id.empty()) {
    auto sessions = db.ListSessions(store::ListOptions{.cwd = {}, .limit = options.limit});
    if (!sessions) return FailSessions(sessions.error().message());
    store::TokenTotals all;
    Json rows = Json::array();
    Table table({"session", "model", "input", "cached", "output", "reasoning", "cost"});
    for (const auto& s : *sessions) {
      // A subagent's usage is already in its parent's totals.
      if (s.source == "delegate" && !s.parent_id.empty()) continue;
      all.input_tokens += s.totals.input_tokens;
      all.cached_tokens += s.totals.cached_tokens;
      all.output_tokens += s.totals.output_tokens;
      all.reasoning_tokens += s.totals.reasoning_tokens;
      all.cost_usd += s.totals.cost_usd;
      rows.push_back(
          Json{{"session_id", s.id}, {"model", s.model}, {"usage", TotalsJson(s.totals)}});
      table.AddRow({s.id, s.model, std::to_string(s.totals.input_tokens),
                    std::to_string(s.totals.cached_tokens), std::to_string(s.totals.output_tokens),
                    std::to_string(s.totals.reasoning_tokens), Money(s.totals.cost_usd)});
    }
    if (options.json) {
      std::printf("%s\n", DumpJson(Json{{"sessions", rows}, {"total", TotalsJson(all)}}).c_str());
      return kExitOk;
    }
    table.AddRow({"total", "", std::to_string(all.input_tokens), std::to_string(all.cached_tokens),
                  std::to_string(all.output_tokens), std::to_string(all.reasoning_tokens),
                  Money(all.cost_usd)});
    table.Print(stdout);
    return kExitOk;
  }
  auto session = db.GetSession(options.id);
  if (!session) return FailSessions(session.error().message());
  if (!session->has_value()) return FailSessions("no session " + options.id, kExitUsage);
  auto messages = db.LoadTranscript(options.id);
  if (!messages) return FailSessions(messages.error().message());
  // One row per model request: each assistant message carries its request's usage.
  Json turns = Json::array();
  Table table({"request", "input", "cached", "output", "reasoning", "cost"});
  int request = 0;
  for (const auto& m : *messages) {
    if (m.role != "assistant") continue;
    ++request;
    turns.push_back(Json{{"request", request}, {"seq", m.seq}, {"usage", TotalsJson(m.usage)}});
    table.AddRow({std::to_string(request), std::to_string(m.usage.input_tokens),
                  std::to_string(m.usage.cached_tokens), std::to_string(m.usage.output_tokens),
                  std::to_string(m.usage.reasoning_tokens), Money(m.usage.cost_usd)});
  }
  const store::TokenTotals& t = (*session)->totals;
  if (options.json) {
    std::printf(
        "%s\n",
        DumpJson(Json{{"session_id", options.id}, {"requests", turns}, {"total", TotalsJson(t)}})
            .c_str());
    return kExitOk;
  }
  table.AddRow({"total", std::to_string(t.input_tokens), std::to_string(t.cached_tokens),
                std::to_string(t.output_tokens), std::to_string(t.reasoning_tokens),
                Money(t.cost_usd)});
  table.Print(stdout);
  return kExitOk;
}

}  // namespace

int RunSessions(const SessionsOptions& options) {
  auto db = store::SessionStore::Open(store::DefaultSessionsPath());
  if (!db) return FailSessions(db.error().message());
  if (options.action == "list") return List(**db, options);
  if (options.action == "show") return ShowSessions(**db, options);
  if (options.action == "usage") return SessionsUsage(**db, options);
  if (options.action == "delete") {
    if (Status s = (*db)->DeleteSession(options.id); !s.ok()) {
      return FailSessions(s.message(),
                          s.code() == StatusCode::kNotFound ? kExitUsage : kExitToolError);
    }
    if (!options.json) std::printf("deleted %s\n", options.id.c_str());
    return kExitOk;
  }
  return FailSessions("unknown action '" + options.action + "'", kExitUsage);
}

}  // namespace talaria::cli
