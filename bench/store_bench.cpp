// The session store (issue 20): per-message append, reopening a 10,000-message session, and
// FTS5 search over 1,000,000 stored messages with the index size against the raw text.
//
//   talaria_store_bench append              store_append_us (the agent's mean wait per message;
//       p50, p99, CPU), store_append_burst_us (back to back, indexing included),
//       store_reopen_10k_ms (seconds)
//   talaria_store_bench fts [--quick] [--messages N] [--db PATH]
//       store_fts_build_s, store_fts_p50_ms, store_fts_p99_ms, store_fts_index_ratio,
//       store_db_ratio; 1,000,000 messages (about 1 GB of text; minutes), --quick 100,000;
//       --db: build the database at PATH and keep it, or reuse it if it exists (queries only)
//   talaria_store_bench recall [--quick] [--messages N] [--db PATH]
//       session_search_discover_p50_ms, session_search_discover_p99_ms (the whole tool call:
//       search on the read-only connection, lineage folding, the best match's window and
//       bookends), session_search_discover_cpu_p50_ms / _cpu_p99_ms (the same calls' CPU
//       time), session_search_index_ratio; 1,000,000 messages in 10,000 sessions of 100
//       (issue 21), --quick 100,000 in 1,000
//
// Text is generated deterministically (splitmix64, fixed seed): Zipf-distributed words of a
// 30,000-word vocabulary, code-like tool output, tool calls with JSON arguments, and 3 % of the
// messages in Chinese (Zipf over 3,000 Han characters, words of 1-3). Everything is built in a
// temporary directory, removed at the end.
#include <sqlite3.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "talaria/agent/session_search.h"
#include "talaria/base/utf8.h"
#include "talaria/store/session_store.h"

namespace {

using talaria::Json;
using talaria::store::SessionStore;
using talaria::store::StoredMessage;
using talaria_bench::Median;
using talaria_bench::PrintMetric;
using talaria_bench::SplitMix64;
using Clock = std::chrono::steady_clock;

// This thread's CPU time (user + system) in microseconds: on a machine shared with other work
// the wall clock measures the neighbours, CPU time mostly what the store itself spends.
double ThreadCpuUs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

double ProcessCpuUs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// The value at quantile q (0..1) by nearest rank; 0 if empty.
double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(q * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(rank, values.size() - 1)];
}

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "talaria_store_bench: %s\n", what.c_str());
  std::exit(1);
}

class TempDir {
 public:
  TempDir() {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(t != nullptr && *t != '\0' ? t : "/tmp") + "/talaria-store-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) Die("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

// Zipf(s ~ 1.07) over `n` items by inverse CDF on a cumulative table.
class Zipf {
 public:
  explicit Zipf(size_t n) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) {
      sum += 1.0 / std::pow(static_cast<double>(i + 1), 1.07);
      cum_.push_back(sum);
    }
  }
  size_t Draw(SplitMix64& rng) const {
    double u = static_cast<double>(rng.Next() >> 11) * 0x1.0p-53 * cum_.back();
    return static_cast<size_t>(std::lower_bound(cum_.begin(), cum_.end(), u) - cum_.begin());
  }

 private:
  std::vector<double> cum_;
};

class TextGen {
 public:
  TextGen() : rng_(0x5e55105), words_zipf_(kWords), han_zipf_(kHan), cjk_zipf_(kCjkWords) {
    SplitMix64 vocab(42);
    for (size_t i = 0; i < kWords; ++i) {
      size_t len = 2 + vocab.Below(6) + vocab.Below(5);
      std::string w;
      for (size_t k = 0; k < len; ++k) w += static_cast<char>('a' + vocab.Below(26));
      words_.push_back(std::move(w));
    }
    std::vector<char32_t> han;
    for (size_t i = 0; i < kHan; ++i)
      han.push_back(0x4E00 + static_cast<char32_t>(vocab.Below(20000)));
    for (size_t i = 0; i < kCjkWords; ++i) {
      std::string w;
      size_t len = 1 + vocab.Below(3);
      for (size_t k = 0; k < len; ++k) talaria::AppendUtf8(w, han[han_zipf_.Draw(vocab)]);
      cjk_words_.push_back(std::move(w));
    }
  }

  const std::string& Word() { return words_[words_zipf_.Draw(rng_)]; }
  const std::string& WordAt(size_t rank) const { return words_[rank]; }
  const std::string& CjkWord() { return cjk_words_[cjk_zipf_.Draw(rng_)]; }
  SplitMix64& rng() { return rng_; }

  // About `bytes` of English-like prose.
  std::string Prose(size_t bytes) {
    std::string out;
    while (out.size() < bytes) {
      if (!out.empty()) out += rng_.Below(12) == 0 ? ". " : " ";
      out += Word();
    }
    return out;
  }
  // About `bytes` of Chinese with some English identifiers.
  std::string Chinese(size_t bytes) {
    std::string out;
    while (out.size() < bytes) {
      if (rng_.Below(15) == 0) {
        out += " " + Word() + " ";
      } else {
        out += CjkWord();
      }
      if (rng_.Below(12) == 0) out += "，";
    }
    return out;
  }
  // Tool output: code-ish lines.
  std::string Code(size_t bytes) {
    std::string out;
    while (out.size() < bytes) {
      out += "src/" + Word() + "/" + Word() + ".cpp:" + std::to_string(rng_.Below(900) + 1) + ": " +
             Word() + "_" + Word() + "(" + Word() + ", " + std::to_string(rng_.Below(64)) + ");\n";
    }
    return out;
  }
  size_t Length() {  // exponential around 1,600 bytes: messages average about 1 KB
    double u = static_cast<double>(rng_.Next() >> 11) * 0x1.0p-53;
    return 30 + static_cast<size_t>(-std::log(1 - u) * 1600);
  }

  // One message of a plausible agent transcript; `raw` gets the bytes FTS indexes.
  StoredMessage Message(size_t index, size_t& raw) {
    StoredMessage m;
    const bool cjk = rng_.Below(100) < 3;
    switch (index % 5) {
      case 0:
        m.role = "user";
        m.content = cjk ? Chinese(Length() / 2) : Prose(Length() / 2);
        break;
      case 1: {
        m.role = "assistant";
        m.content = cjk ? Chinese(Length() / 3) : Prose(Length() / 3);
        std::string args = DumpArgs();
        m.tool_calls =
            Json::array({Json{{"id", "call_" + std::to_string(index)},
                              {"type", "function"},
                              {"function", {{"name", "search_files"}, {"arguments", args}}}}});
        raw += std::string("search_files").size() + args.size();
        m.usage.input_tokens = 1000;
        m.usage.output_tokens = 50;
        break;
      }
      case 2:
        m.role = "tool";
        m.tool_call_id = "call_" + std::to_string(index - 1);
        m.name = "search_files";
        m.content = cjk ? Chinese(Length()) : Code(Length());
        raw += m.name.size();
        break;
      case 3:
        m.role = "assistant";
        m.content = cjk ? Chinese(Length()) : Prose(Length());
        break;
      default:
        m.role = "user";
        m.content = Prose(Length() / 4);
        break;
    }
    raw += m.content.size();
    return m;
  }

 private:
  std::string DumpArgs() {
    return Json{{"pattern", Word() + "_" + Word()}, {"path", "src/" + Word()}}.dump();
  }

  static constexpr size_t kWords = 30000, kHan = 3000, kCjkWords = 8000;
  SplitMix64 rng_;
  Zipf words_zipf_, han_zipf_, cjk_zipf_;
  std::vector<std::string> words_;
  std::vector<std::string> cjk_words_;
};

std::unique_ptr<SessionStore> OpenStore(const std::string& path) {
  auto store = SessionStore::Open(path);
  if (!store) Die(store.error().ToString());
  return std::move(*store);
}

// 300 queries of the kinds people type, in a fixed mix: rare and mid-frequency words, the most
// common words (which match most messages), two-word ANDs, phrases, prefixes, and Chinese.
std::vector<std::string> MixedQueries(TextGen& gen, uint64_t seed) {
  SplitMix64 q(seed);
  std::vector<std::string> queries;
  for (int i = 0; i < 300; ++i) {
    switch (i % 10) {
      case 0:
      case 1:
      case 2:
        queries.push_back(gen.WordAt(100 + q.Below(29000)));
        break;
      case 3:
        queries.push_back(gen.WordAt(q.Below(100)));
        break;
      case 4:
      case 5:
        queries.push_back(gen.WordAt(q.Below(3000)) + " " + gen.WordAt(q.Below(3000)));
        break;
      case 6:
        queries.push_back("\"" + gen.WordAt(q.Below(50)) + " " + gen.WordAt(q.Below(500)) + "\"");
        break;
      case 7:
        queries.push_back(gen.WordAt(q.Below(5000)).substr(0, 4) + "*");
        break;
      default:
        queries.push_back(gen.CjkWord() + gen.CjkWord());
        break;
    }
  }
  return queries;
}

int RunAppend() {
  TempDir tmp;
  const std::string db = tmp / "sessions.db";
  TextGen gen;
  // The loop's pattern: turns of 8 appends (an assistant message and its tool results), each
  // followed by 30 ms without appends, standing in for the model's next answer (real ones take
  // hundreds of ms). Search indexing runs in those pauses, so this is what the agent waits for.
  {
    auto store = OpenStore(db);
    constexpr int kTurns = 300, kPerTurn = 8;
    std::vector<StoredMessage> msgs;
    size_t raw = 0;
    for (int i = 0; i < kTurns * kPerTurn; ++i) {
      msgs.push_back(gen.Message(static_cast<size_t>(i), raw));
    }
    std::vector<double> latency_us;
    double cpu_us = 0;
    std::string session;
    for (int t = 0; t < kTurns; ++t) {
      if (t % 50 == 0) session = store->CreateSession({.cwd = "/bench"})->id;
      for (int k = 0; k < kPerTurn; ++k) {
        auto t0 = Clock::now();
        const double cpu0 = ThreadCpuUs();
        if (!store->AppendMessage(session, msgs[static_cast<size_t>(t * kPerTurn + k)]).ok()) {
          Die("append failed");
        }
        cpu_us += ThreadCpuUs() - cpu0;
        latency_us.push_back(MsSince(t0) * 1000);
      }
      usleep(30000);
    }
    double total_us = 0;
    for (double us : latency_us) total_us += us;
    PrintMetric("store_append_us", total_us / static_cast<double>(latency_us.size()), "us");
    PrintMetric("store_append_p50_us", Median(latency_us), "us");
    PrintMetric("store_append_p99_us", Percentile(latency_us, 0.99), "us");
    PrintMetric("store_append_cpu_us", cpu_us / static_cast<double>(latency_us.size()), "us");
  }
  // Back to back: 20,000 appends with no pause, into sessions of 500, timed until the store is
  // closed, so every message's indexing is in (the backlog cap makes appends index): the whole
  // cost per message, amortized. CPU time of the process (the indexer thread included).
  {
    constexpr int kMessages = 20000, kSession = 500;
    std::vector<StoredMessage> msgs;
    size_t raw = 0;
    for (int i = 0; i < kMessages; ++i) msgs.push_back(gen.Message(static_cast<size_t>(i), raw));
    auto t0 = Clock::now();
    const double cpu0 = ProcessCpuUs();
    {
      auto store = OpenStore(db);
      std::string session;
      for (int i = 0; i < kMessages; ++i) {
        if (i % kSession == 0) session = store->CreateSession({.cwd = "/bench"})->id;
        if (!store->AppendMessage(session, msgs[static_cast<size_t>(i)]).ok()) Die("append failed");
      }
    }
    PrintMetric("store_append_burst_us", MsSince(t0) * 1000 / kMessages, "us");
    PrintMetric("store_append_burst_cpu_us", (ProcessCpuUs() - cpu0) / kMessages, "us");
  }
  // Reopen: one session of 10,000 messages; open + LoadHistory in a fresh store each time.
  std::string session;
  {
    auto store = OpenStore(db);
    session = store->CreateSession({.cwd = "/bench"})->id;
    std::vector<StoredMessage> msgs;
    size_t raw = 0;
    for (int i = 0; i < 10000; ++i) msgs.push_back(gen.Message(static_cast<size_t>(i), raw));
    if (!store->AppendMessages(session, msgs).ok()) Die("bulk append failed");
  }
  std::vector<double> reopen_ms;
  for (int r = 0; r < 7; ++r) {
    auto t0 = Clock::now();
    auto store = OpenStore(db);
    auto history = store->LoadHistory(session);
    if (!history || history->size() != 10000) Die("reopen lost messages");
    reopen_ms.push_back(MsSince(t0));
  }
  PrintMetric("store_reopen_10k_ms", Median(reopen_ms), "ms");
  return 0;
}

// Bytes of the pages of every table whose name starts with `prefix`.
int64_t PagesBytes(sqlite3* db, const char* prefix) {
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name LIKE ?1 || '%'",
                     -1, &s, nullptr);
  sqlite3_bind_text(s, 1, prefix, -1, SQLITE_STATIC);
  int64_t bytes = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
  sqlite3_finalize(s);
  return bytes;
}

// `keep`: build the database there (and leave it), or reuse it when it exists.
int RunFts(size_t messages, const std::string& keep) {
  TempDir tmp;
  const std::string db = keep.empty() ? tmp / "sessions.db" : keep;
  TextGen gen;
  size_t raw = 0;
  const bool reuse = !keep.empty() && std::filesystem::exists(keep);
  auto t_build = Clock::now();
  if (reuse) {
    // The text the indexes cover, as the build counted it.
    sqlite3* raw_db = nullptr;
    sqlite3_open_v2(db.c_str(), &raw_db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(raw_db,
                       "SELECT sum(length(CAST(body AS BLOB)) + length(CAST(tools AS BLOB)) - 1) "
                       "FROM messages_fts_source",
                       -1, &s, nullptr);
    if (sqlite3_step(s) == SQLITE_ROW) raw = static_cast<size_t>(sqlite3_column_int64(s, 0));
    sqlite3_finalize(s);
    sqlite3_close(raw_db);
  } else {
    auto store = OpenStore(db);
    constexpr size_t kPerSession = 500, kBatch = 2500;
    std::string session;
    std::vector<StoredMessage> batch;
    for (size_t i = 0; i < messages; i += kBatch) {
      batch.clear();
      for (size_t k = i; k < std::min(messages, i + kBatch); ++k) {
        if (k % kPerSession == 0) {
          if (!batch.empty() && !store->AppendMessages(session, batch).ok()) Die("bulk failed");
          batch.clear();
          session = store->CreateSession({.cwd = "/bench/" + std::to_string(k % 7)})->id;
        }
        batch.push_back(gen.Message(k, raw));
      }
      if (!batch.empty() && !store->AppendMessages(session, batch).ok()) Die("bulk failed");
      if ((i / kBatch) % 40 == 0) {
        std::fprintf(stderr, "# %zu messages, %.0f s\n", i, MsSince(t_build) / 1000);
      }
    }
  }
  const double build_s = MsSince(t_build) / 1000;
  if (!reuse) PrintMetric("store_fts_build_s", build_s, "s");

  std::vector<std::string> queries = MixedQueries(gen, 7);
  std::vector<double> latencies;
  std::vector<std::vector<double>> by_kind(10);
  size_t total_hits = 0;
  {
    auto store = OpenStore(db);
    for (int warm = 0; warm < 20; ++warm)
      (void)store->Search(queries[static_cast<size_t>(warm)], {});
    for (size_t i = 0; i < queries.size(); ++i) {
      const std::string& query = queries[i];
      auto t0 = Clock::now();
      auto hits = store->Search(query, {.limit = 20, .exclude_session = ""});
      latencies.push_back(MsSince(t0));
      by_kind[i % 10].push_back(latencies.back());
      if (!hits) Die("search failed: " + hits.error().ToString());
      total_hits += hits->size();
    }
  }
  const char* kinds[] = {"word",      "word",   "word",   "common word", "two words",
                         "two words", "phrase", "prefix", "chinese",     "chinese"};
  for (size_t k : {0u, 3u, 4u, 6u, 7u, 8u}) {
    std::vector<double> v = by_kind[k];
    if (k == 0) v.insert(v.end(), by_kind[1].begin(), by_kind[1].end());
    if (k == 4) v.insert(v.end(), by_kind[5].begin(), by_kind[5].end());
    if (k == 8) v.insert(v.end(), by_kind[9].begin(), by_kind[9].end());
    std::sort(v.begin(), v.end());
    std::fprintf(stderr, "# %-12s p50 %.2f ms, max %.2f ms\n", kinds[k], v[v.size() / 2], v.back());
  }
  std::sort(latencies.begin(), latencies.end());
  PrintMetric("store_fts_p50_ms", latencies[latencies.size() / 2], "ms");
  PrintMetric("store_fts_p99_ms", latencies[latencies.size() * 99 / 100], "ms");
  std::fprintf(stderr, "# %zu queries, %zu hits, max %.1f ms\n", queries.size(), total_hits,
               latencies.back());

  sqlite3* raw_db = nullptr;
  if (sqlite3_open_v2(db.c_str(), &raw_db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) Die("open");
  const int64_t words = PagesBytes(raw_db, "messages_fts");
  const int64_t trigrams = PagesBytes(raw_db, "messages_cjk");
  sqlite3_close(raw_db);
  const auto file_bytes = static_cast<int64_t>(std::filesystem::file_size(db));
  std::fprintf(stderr,
               "# raw text %.1f MB, word index %.1f MB, trigram index %.1f MB, file %.1f MB\n",
               static_cast<double>(raw) / 1e6, static_cast<double>(words) / 1e6,
               static_cast<double>(trigrams) / 1e6, static_cast<double>(file_bytes) / 1e6);
  PrintMetric("store_fts_index_ratio",
              static_cast<double>(words + trigrams) / static_cast<double>(raw), "x");
  PrintMetric("store_db_ratio", static_cast<double>(file_bytes) / static_cast<double>(raw), "x");
  return 0;
}

// session_search's discover mode over sessions of 100 messages (issue 21's shape: 1,000,000
// messages in 10,000 sessions), as the agent calls it: from a current session, default limit
// and detail. The corpus and the query mix are RunFts's.
int RunRecall(size_t messages, const std::string& keep) {
  TempDir tmp;
  const std::string db = keep.empty() ? tmp / "sessions.db" : keep;
  TextGen gen;
  size_t raw = 0;
  const bool reuse = !keep.empty() && std::filesystem::exists(keep);
  auto t_build = Clock::now();
  std::string current;
  if (!reuse) {
    auto store = OpenStore(db);
    constexpr size_t kPerSession = 100;
    std::string session;
    std::vector<StoredMessage> batch;
    for (size_t k = 0; k < messages; ++k) {
      if (k % kPerSession == 0) {
        if (!batch.empty() && !store->AppendMessages(session, batch).ok()) Die("bulk failed");
        batch.clear();
        session = store->CreateSession({.cwd = "/bench/" + std::to_string(k % 7)})->id;
      }
      batch.push_back(gen.Message(k, raw));
      if (k % 100'000 == 0) {
        std::fprintf(stderr, "# %zu messages, %.0f s\n", k, MsSince(t_build) / 1000);
      }
    }
    if (!batch.empty() && !store->AppendMessages(session, batch).ok()) Die("bulk failed");
    PrintMetric("session_search_build_s", MsSince(t_build) / 1000, "s");
  } else {
    sqlite3* raw_db = nullptr;
    sqlite3_open_v2(db.c_str(), &raw_db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(raw_db,
                       "SELECT sum(length(CAST(body AS BLOB)) + length(CAST(tools AS BLOB)) - 1) "
                       "FROM messages_fts_source",
                       -1, &s, nullptr);
    if (sqlite3_step(s) == SQLITE_ROW) raw = static_cast<size_t>(sqlite3_column_int64(s, 0));
    sqlite3_finalize(s);
    sqlite3_close(raw_db);
  }
  std::vector<std::string> queries = MixedQueries(gen, 11);
  std::vector<double> latencies;
  std::vector<double> cpu_ms;  // the calling thread's CPU time per call
  size_t results = 0;
  {
    auto store = OpenStore(db);
    current = store->CreateSession({.cwd = "/bench/current"})->id;
    for (int warm = 0; warm < 20; ++warm) {
      (void)talaria::agent::RunSessionSearch(*store, current,
                                             Json{{"query", queries[static_cast<size_t>(warm)]}});
    }
    for (const std::string& query : queries) {
      auto t0 = Clock::now();
      const double cpu0 = ThreadCpuUs();
      Json r = talaria::agent::RunSessionSearch(*store, current, Json{{"query", query}});
      latencies.push_back(MsSince(t0));
      cpu_ms.push_back((ThreadCpuUs() - cpu0) / 1000);
      if (!r.value("success", false)) Die("session_search failed: " + r.dump());
      results += r.value("count", 0u);
    }
  }
  {
    // The search step alone (what the rest of the call adds is the difference).
    auto store = OpenStore(db);
    std::vector<double> search_only;
    std::vector<std::vector<double>> by_kind(10);
    for (size_t i = 0; i < queries.size(); ++i) {
      auto t0 = Clock::now();
      auto r = store->RecallSearch(
          queries[i], {.limit = 50, .roles = {"user", "assistant"}, .exclude_sessions = {current}});
      search_only.push_back(MsSince(t0));
      by_kind[i % 10].push_back(latencies[i]);
      if (!r) Die("search failed: " + r.error().ToString());
    }
    std::sort(search_only.begin(), search_only.end());
    std::fprintf(stderr, "# search step alone: p50 %.2f ms, p99 %.2f ms\n",
                 search_only[search_only.size() / 2], search_only[search_only.size() * 99 / 100]);
    const char* kinds[] = {"word",      "word",   "word",   "common word", "two words",
                           "two words", "phrase", "prefix", "chinese",     "chinese"};
    for (size_t k : {0u, 3u, 4u, 6u, 7u, 8u}) {
      std::vector<double> v = by_kind[k];
      std::sort(v.begin(), v.end());
      std::fprintf(stderr, "# %-12s whole call p50 %.2f ms, max %.2f ms\n", kinds[k],
                   v[v.size() / 2], v.back());
    }
  }
  std::sort(latencies.begin(), latencies.end());
  PrintMetric("session_search_discover_p50_ms", latencies[latencies.size() / 2], "ms");
  PrintMetric("session_search_discover_p99_ms", latencies[latencies.size() * 99 / 100], "ms");
  // On a shared machine the wall clock also measures the neighbours (and the disk they keep
  // busy); the thread's CPU time is what the search itself spends.
  PrintMetric("session_search_discover_cpu_p50_ms", Percentile(cpu_ms, 0.5), "ms");
  PrintMetric("session_search_discover_cpu_p99_ms", Percentile(cpu_ms, 0.99), "ms");
  std::fprintf(stderr, "# %zu queries, %zu results, max %.1f ms\n", queries.size(), results,
               latencies.back());
  sqlite3* raw_db = nullptr;
  if (sqlite3_open_v2(db.c_str(), &raw_db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) Die("open");
  const int64_t words = PagesBytes(raw_db, "messages_fts");
  const int64_t trigrams = PagesBytes(raw_db, "messages_cjk");
  sqlite3_close(raw_db);
  std::fprintf(stderr, "# raw text %.1f MB, word index %.1f MB, trigram index %.1f MB\n",
               static_cast<double>(raw) / 1e6, static_cast<double>(words) / 1e6,
               static_cast<double>(trigrams) / 1e6);
  PrintMetric("session_search_index_ratio",
              static_cast<double>(words + trigrams) / static_cast<double>(raw), "x");
  return 0;
}

int Usage() {
  std::fprintf(
      stderr,
      "usage: talaria_store_bench append | fts | recall [--quick] [--messages N] [--db PATH]\n");
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  std::string mode = argv[1];
  if (mode == "append") return RunAppend();
  if (mode != "fts" && mode != "recall") return Usage();
  size_t messages = 1'000'000;
  std::string keep;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--db" && i + 1 < argc) {
      keep = argv[++i];
    } else if (arg == "--quick") {
      messages = 100'000;
    } else if (arg == "--messages" && i + 1 < argc) {
      messages = std::strtoull(argv[++i], nullptr, 10);
    } else {
      return Usage();
    }
  }
  return mode == "recall" ? RunRecall(messages, keep) : RunFts(messages, keep);
}
