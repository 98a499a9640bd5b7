// web_search against local fakes of each backend (their real paths, auth and fields, checked
// on arrival), and web_extract end to end through the registry against local pages opened with
// the allow list.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/loopback_http.h"
#include "support/minimal_pdf.h"
#include "support/temp_dir.h"
#include "talaria/core/registry.h"
#include "talaria/core/tool_context.h"

namespace talaria::web {
namespace {

using talaria_test::LoopbackHttpServer;
using talaria_test::RawReplyServer;

const std::vector<const char*> kBackendVars = {"SEARXNG_URL",
                                               "BRAVE_SEARCH_API_KEY",
                                               "BRAVE_SEARCH_BASE_URL",
                                               "TAVILY_API_KEY",
                                               "TAVILY_BASE_URL",
                                               "EXA_API_KEY",
                                               "EXA_BASE_URL",
                                               "PARALLEL_API_KEY",
                                               "PARALLEL_BASE_URL",
                                               "PARALLEL_SEARCH_MODE",
                                               "FIRECRAWL_API_KEY",
                                               "FIRECRAWL_API_URL",
                                               "TOOL_GATEWAY_USER_TOKEN",
                                               "FIRECRAWL_GATEWAY_URL",
                                               "FIRECRAWL_USE_GATEWAY"};

// A $TALARIA_HOME of its own with `config` as config.yaml, and no backend variables.
class WebToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kBackendVars) ::unsetenv(v);
    ::setenv("TALARIA_HOME", home_.path().c_str(), 1);
    WriteConfig("");
  }
  void TearDown() override {
    for (const char* v : kBackendVars) ::unsetenv(v);
  }
  void WriteConfig(const std::string& yaml) {
    std::ofstream(home_.path() + "/config.yaml") << yaml;
  }
  static Json Call(const std::string& tool, const Json& args, bool* ok = nullptr) {
    auto entry = Registry::Global().GetEntry(tool);
    EXPECT_NE(entry, nullptr);
    ToolContext ctx;
    ToolResult r = entry->handler()(args, ctx);
    if (ok != nullptr) *ok = r.ok();
    auto j = ParseJson(r.text);
    EXPECT_TRUE(j.has_value()) << r.text;
    return j.has_value() ? *j : Json();
  }
  talaria::test_support::TempDir home_;
};

TEST_F(WebToolsTest, SearchIsUnavailableUntilABackendIsSet) {
  auto entry = Registry::Global().GetEntry("web_search");
  ASSERT_NE(entry, nullptr);
  EXPECT_FALSE((*entry->check_fn())());
  bool ok = true;
  Json r = Call("web_search", {{"query", "x"}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(r["success"], false);
  EXPECT_NE(r["error"].get<std::string>().find("SEARXNG_URL"), std::string::npos);
  ::setenv("SEARXNG_URL", "http://127.0.0.1:1", 1);
  EXPECT_TRUE((*entry->check_fn())());
}

TEST_F(WebToolsTest, SearxngSortsByScoreAndCutsToTheLimit) {
  std::string seen;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Get("/search", [&](const httplib::Request& req, httplib::Response& res) {
      seen = req.get_param_value("q") + "|" + req.get_param_value("format") + "|" +
             req.get_param_value("pageno") + "|" + req.get_header_value("Accept");
      res.set_content(R"({"results":[
        {"title":"low","url":"https://l","content":"d1","score":0.5},
        {"title":"high","url":"https://h","content":"d2","score":3},
        {"title":"mid","url":"https://m","content":"d3","score":1}]})",
                      "application/json");
    });
  });
  ::setenv("SEARXNG_URL", fake.url().c_str(), 1);
  Json r = Call("web_search", {{"query", "a b&c"}, {"limit", 2}});
  EXPECT_EQ(seen, "a b&c|json|1|application/json");
  ASSERT_EQ(r["success"], true) << r.dump();
  const Json& web = r["data"]["web"];
  ASSERT_EQ(web.size(), 2U);
  EXPECT_EQ(web[0]["title"], "high");
  EXPECT_EQ(web[0]["description"], "d2");
  EXPECT_EQ(web[0]["position"], 1);
  EXPECT_EQ(web[1]["title"], "mid");
}

TEST_F(WebToolsTest, BraveSendsTheTokenHeaderAndClampsCount) {
  std::string seen;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Get("/res/v1/web/search", [&](const httplib::Request& req, httplib::Response& res) {
      seen = req.get_param_value("q") + "|" + req.get_param_value("count") + "|" +
             req.get_header_value("X-Subscription-Token");
      res.set_content(R"({"web":{"results":[{"title":"B","url":"https://b","description":"bd"}]}})",
                      "application/json");
    });
  });
  ::setenv("BRAVE_SEARCH_API_KEY", "brave-key", 1);
  ::setenv("BRAVE_SEARCH_BASE_URL", fake.url().c_str(), 1);
  Json r = Call("web_search", {{"query", "q"}, {"limit", 50}});
  EXPECT_EQ(seen, "q|20|brave-key");
  ASSERT_EQ(r["success"], true) << r.dump();
  EXPECT_EQ(r["data"]["web"][0]["description"], "bd");
}

TEST_F(WebToolsTest, TavilyPutsTheKeyInTheBody) {
  Json body;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post("/search", [&](const httplib::Request& req, httplib::Response& res) {
      body = Json::parse(req.body, nullptr, false);
      res.set_content(R"({"results":[{"title":"T","url":"https://t","content":"tc","score":0.9}]})",
                      "application/json");
    });
  });
  ::setenv("TAVILY_API_KEY", "tvly-test", 1);
  ::setenv("TAVILY_BASE_URL", fake.url().c_str(), 1);
  Json r = Call("web_search", {{"query", "q"}, {"limit", 30}});
  EXPECT_EQ(body["api_key"], "tvly-test");
  EXPECT_EQ(body["query"], "q");
  EXPECT_EQ(body["max_results"], 20);
  EXPECT_EQ(body["include_raw_content"], false);
  EXPECT_EQ(body["include_images"], false);
  ASSERT_EQ(r["success"], true) << r.dump();
  EXPECT_EQ(r["data"]["web"][0]["description"], "tc");
}

TEST_F(WebToolsTest, ExaSendsTheKeyHeaderAndJoinsHighlights) {
  Json body;
  std::string key;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post("/search", [&](const httplib::Request& req, httplib::Response& res) {
      body = Json::parse(req.body, nullptr, false);
      key = req.get_header_value("x-api-key");
      res.set_content(R"({"results":[{"title":"E","url":"https://e","highlights":["h1","h2"]}]})",
                      "application/json");
    });
  });
  ::setenv("EXA_API_KEY", "exa-key", 1);
  ::setenv("EXA_BASE_URL", fake.url().c_str(), 1);
  Json r = Call("web_search", {{"query", "q"}, {"limit", 3}});
  EXPECT_EQ(key, "exa-key");
  EXPECT_EQ(body["numResults"], 3);
  EXPECT_EQ(body["contents"]["highlights"], true);
  ASSERT_EQ(r["success"], true) << r.dump();
  EXPECT_EQ(r["data"]["web"][0]["description"], "h1 ... h2");
}

TEST_F(WebToolsTest, ParallelSendsObjectiveQueriesAndMode) {
  Json body;
  std::string key;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post("/v1beta/search", [&](const httplib::Request& req, httplib::Response& res) {
      body = Json::parse(req.body, nullptr, false);
      key = req.get_header_value("x-api-key");
      res.set_content(R"({"results":[{"title":"P","url":"https://p","excerpts":["e1"]}]})",
                      "application/json");
    });
  });
  ::setenv("PARALLEL_API_KEY", "par-key", 1);
  ::setenv("PARALLEL_BASE_URL", fake.url().c_str(), 1);
  ::setenv("PARALLEL_SEARCH_MODE", "fast", 1);
  Json r = Call("web_search", {{"query", "q"}});
  EXPECT_EQ(key, "par-key");
  EXPECT_EQ(body["objective"], "q");
  EXPECT_EQ(body["search_queries"], Json::array({"q"}));
  EXPECT_EQ(body["mode"], "fast");
  EXPECT_EQ(body["max_results"], 5);
  ASSERT_EQ(r["success"], true) << r.dump();
  EXPECT_EQ(r["data"]["web"][0]["description"], "e1");
}

TEST_F(WebToolsTest, FirecrawlSendsBearerAndReadsDataWeb) {
  Json body;
  std::string auth;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post("/v2/search", [&](const httplib::Request& req, httplib::Response& res) {
      body = Json::parse(req.body, nullptr, false);
      auth = req.get_header_value("Authorization");
      res.set_content(
          R"({"success":true,"data":{"web":[{"url":"https://f","title":"F","description":"fd","position":1}]}})",
          "application/json");
    });
  });
  ::setenv("FIRECRAWL_API_KEY", "fc-key", 1);
  ::setenv("FIRECRAWL_API_URL", fake.url().c_str(), 1);
  Json r = Call("web_search", {{"query", "q"}, {"limit", 7}});
  EXPECT_EQ(auth, "Bearer fc-key");
  EXPECT_EQ(body["query"], "q");
  EXPECT_EQ(body["limit"], 7);
  ASSERT_EQ(r["success"], true) << r.dump();
  EXPECT_EQ(r["data"]["web"][0]["title"], "F");
}

// The managed tool gateway in front of Firecrawl: with no Firecrawl key, search and extract go
// to the gateway with the user's token, in Firecrawl's own protocol.
TEST_F(WebToolsTest, FirecrawlThroughTheToolGatewayUsesTheUserToken) {
  std::vector<std::string> seen;
  LoopbackHttpServer gateway([&](httplib::Server& s) {
    s.Post("/v2/search", [&](const httplib::Request& req, httplib::Response& res) {
      seen.push_back("search|" + req.get_header_value("Authorization"));
      res.set_content(R"({"success":true,"data":{"web":[{"url":"https://g","title":"G"}]}})",
                      "application/json");
    });
    s.Post("/v2/scrape", [&](const httplib::Request& req, httplib::Response& res) {
      seen.push_back("scrape|" + req.get_header_value("Authorization"));
      res.set_content(R"({"success":true,"data":{"markdown":"# Hi","metadata":{"title":"T"}}})",
                      "application/json");
    });
  });
  auto search = Registry::Global().GetEntry("web_search");
  ASSERT_NE(search, nullptr);
  EXPECT_FALSE((*search->check_fn())());
  ::setenv("TOOL_GATEWAY_USER_TOKEN", "user-token", 1);
  ::setenv("FIRECRAWL_GATEWAY_URL", gateway.url().c_str(), 1);
  EXPECT_TRUE((*search->check_fn())()) << "a gateway token makes firecrawl available";
  Json r = Call("web_search", {{"query", "q"}});
  ASSERT_EQ(r["success"], true) << r.dump();
  EXPECT_EQ(r["data"]["web"][0]["title"], "G");
  WriteConfig("web:\n  extract_backend: firecrawl\n");
  r = Call("web_extract", {{"urls", {"https://example.org/a"}}});
  ASSERT_EQ(seen.size(), 2U) << r.dump();
  EXPECT_EQ(seen[0], "search|Bearer user-token");
  EXPECT_EQ(seen[1], "scrape|Bearer user-token");
  // A direct key wins over the gateway, and is kept.
  ::setenv("FIRECRAWL_API_KEY", "fc-key", 1);
  ::setenv("FIRECRAWL_API_URL", gateway.url().c_str(), 1);
  r = Call("web_search", {{"query", "q"}});
  ASSERT_EQ(seen.size(), 3U);
  EXPECT_EQ(seen[2], "search|Bearer fc-key");
}

// web.use_gateway (the original's prefers_gateway("web")): the gateway first even with a direct
// key, and the key still used when the gateway has no token (#79628).
TEST_F(WebToolsTest, TheWebSectionCanPreferTheGatewayAndStillKeepsTheKey) {
  std::vector<std::string> seen;
  auto server = [&seen](const std::string& name) {
    return [&seen, name](httplib::Server& s) {
      s.Post("/v2/search", [&seen, name](const httplib::Request& req, httplib::Response& res) {
        seen.push_back(name + "|" + req.get_header_value("Authorization"));
        res.set_content(R"({"success":true,"data":{"web":[{"url":"https://x","title":"X"}]}})",
                        "application/json");
      });
    };
  };
  LoopbackHttpServer direct(server("direct"));
  LoopbackHttpServer gateway(server("gateway"));
  ::setenv("FIRECRAWL_API_KEY", "fc-key", 1);
  ::setenv("FIRECRAWL_API_URL", direct.url().c_str(), 1);
  ::setenv("FIRECRAWL_GATEWAY_URL", gateway.url().c_str(), 1);
  ::setenv("TOOL_GATEWAY_USER_TOKEN", "user-token", 1);
  WriteConfig("web:\n  search_backend: firecrawl\n");
  ASSERT_EQ(Call("web_search", {{"query", "q"}})["success"], true);
  WriteConfig("web:\n  search_backend: firecrawl\n  use_gateway: true\n");
  ASSERT_EQ(Call("web_search", {{"query", "q"}})["success"], true);
  ::unsetenv("TOOL_GATEWAY_USER_TOKEN");  // preferred, but not usable: the key is kept
  ASSERT_EQ(Call("web_search", {{"query", "q"}})["success"], true);
  EXPECT_EQ(seen, (std::vector<std::string>{"direct|Bearer fc-key", "gateway|Bearer user-token",
                                            "direct|Bearer fc-key"}));
}

TEST_F(WebToolsTest, AFailingBackendGivesItsError) {
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Get("/search", [](const httplib::Request&, httplib::Response& res) {
      res.status = 429;
      res.set_content("rate limited", "text/plain");
    });
  });
  ::setenv("SEARXNG_URL", fake.url().c_str(), 1);
  bool ok = true;
  Json r = Call("web_search", {{"query", "q"}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(r["success"], false);
  EXPECT_NE(r["error"].get<std::string>().find("HTTP 429: rate limited"), std::string::npos);
}

TEST_F(WebToolsTest, ConfiguredBackendWinsOverAutoDetectOrder) {
  LoopbackHttpServer searx([&](httplib::Server& s) {
    s.Get("/search", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"results":[{"title":"S","url":"https://s","content":""}]})",
                      "application/json");
    });
  });
  ::setenv("SEARXNG_URL", searx.url().c_str(), 1);
  ::setenv("TAVILY_API_KEY", "k", 1);
  ::setenv("TAVILY_BASE_URL", "http://127.0.0.1:1", 1);  // would fail if chosen
  WriteConfig("web:\n  search_backend: searxng\n");
  Json r = Call("web_search", {{"query", "q"}});
  ASSERT_EQ(r["success"], true) << r.dump();
  EXPECT_EQ(r["data"]["web"][0]["title"], "S");
}

TEST_F(WebToolsTest, ExtractReturnsPagesInTheOriginalShape) {
  LoopbackHttpServer site([](httplib::Server& s) {
    s.set_keep_alive_timeout(1);  // the fetcher's pool keeps the connection; stop sooner
    s.Get("/a", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(
          "<html><head><title>Page A</title></head><body><p>Alpha text</p></body></html>",
          "text/html");
    });
    s.Get("/latin1", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string("caf\xE9 au lait"), "text/plain; charset=iso-8859-1");
    });
    s.Get("/json", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"k":1})", "application/json");
    });
    s.Get("/pdf", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("%PDF-1.4 ...", "application/pdf");  // damaged: a reason, not a crash
    });
    s.Get("/missing", [](const httplib::Request&, httplib::Response& res) { res.status = 404; });
  });
  WriteConfig("web:\n  allow_private: [\"127.0.0.1:" + std::to_string(site.port()) + "\"]\n");
  Json r = Call("web_extract", {{"urls",
                                 {site.url("/a"), site.url("/latin1"), site.url("/json"),
                                  site.url("/pdf"), site.url("/missing")}}});
  ASSERT_TRUE(r.contains("results")) << r.dump();
  const Json& res = r["results"];
  ASSERT_EQ(res.size(), 5U);
  EXPECT_EQ(res[0]["title"], "Page A");
  EXPECT_NE(res[0]["content"].get<std::string>().find("Alpha text"), std::string::npos);
  EXPECT_TRUE(res[0]["error"].is_null());
  EXPECT_EQ(res[1]["content"], "caf\xC3\xA9 au lait");
  EXPECT_EQ(res[2]["content"], R"({"k":1})");
  EXPECT_NE(res[3]["error"].get<std::string>().find("PDF"), std::string::npos) << res[3].dump();
  EXPECT_EQ(res[4]["error"], "HTTP 404");
}

TEST_F(WebToolsTest, ExtractReadsAPdfsText) {
  const std::string pdf =
      test_support::BuildPdf({"Minutes of the meeting", "Budget approved"}, "Board Minutes");
  LoopbackHttpServer site([&](httplib::Server& s) {
    s.set_keep_alive_timeout(1);
    s.Get("/minutes.pdf", [&](const httplib::Request&, httplib::Response& res) {
      res.set_content(pdf, "application/pdf");
    });
    s.Get("/untyped", [&](const httplib::Request&, httplib::Response& res) {
      res.set_content(pdf, "application/octet-stream");  // known by its first bytes
    });
  });
  WriteConfig("web:\n  allow_private: [\"127.0.0.1:" + std::to_string(site.port()) + "\"]\n");
  Json r = Call("web_extract", {{"urls", {site.url("/minutes.pdf"), site.url("/untyped")}}});
  ASSERT_TRUE(r.contains("results")) << r.dump();
  for (const Json& one : r["results"]) {
    EXPECT_TRUE(one["error"].is_null()) << one.dump();
    EXPECT_EQ(one["title"], "Board Minutes");
    const std::string content = one["content"].get<std::string>();
    EXPECT_NE(content.find("Minutes of the meeting"), std::string::npos) << content;
    EXPECT_NE(content.find("Budget approved"), std::string::npos) << content;
  }
}

TEST_F(WebToolsTest, ExtractRefusesPrivateAddressesPerUrl) {
  RawReplyServer canary([](int) { return std::string("HTTP/1.1 200 OK\r\n\r\n"); });
  bool ok = true;
  Json r = Call("web_extract",
                {{"urls", {"http://127.0.0.1:" + std::to_string(canary.port()) + "/"}}}, &ok);
  EXPECT_FALSE(ok);
  ASSERT_TRUE(r.contains("results")) << r.dump();
  const Json& one = r["results"][0];
  EXPECT_EQ(one["blocked_by_policy"]["rule"], "loopback");
  EXPECT_EQ(one["blocked_by_policy"]["host"], "127.0.0.1");
  EXPECT_EQ(one["blocked_by_policy"]["source"], "network_guard");
  EXPECT_EQ(canary.connections(), 0);
}

TEST_F(WebToolsTest, ExtractRefusesAUrlWithAKeyBeforeConnecting) {
  RawReplyServer canary([](int) { return std::string("HTTP/1.1 200 OK\r\n\r\n"); });
  WriteConfig("web:\n  allow_private: [\"127.0.0.1:" + std::to_string(canary.port()) + "\"]\n");
  bool ok = true;
  Json r = Call("web_extract",
                {{"urls",
                  {"http://127.0.0.1:" + std::to_string(canary.port()) +
                   "/?k=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"}}},
                &ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(r["success"], false);
  EXPECT_NE(r["error"].get<std::string>().find("API key"), std::string::npos);
  EXPECT_EQ(canary.connections(), 0);
}

TEST_F(WebToolsTest, ExtractStoresALongPageAndShowsItsEnds) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "line " + std::to_string(i) + " of the long page\n";
  LoopbackHttpServer site([&](httplib::Server& s) {
    s.set_keep_alive_timeout(1);  // the fetcher's pool keeps the connection; stop sooner
    s.Get("/long", [&](const httplib::Request&, httplib::Response& res) {
      res.set_content(text, "text/plain");
    });
  });
  WriteConfig("web:\n  extract_char_limit: 2000\n  allow_private: [\"127.0.0.1:" +
              std::to_string(site.port()) + "\"]\n");
  Json r = Call("web_extract", {{"urls", {site.url("/long")}}});
  const std::string content = r["results"][0]["content"];
  EXPECT_LT(content.size(), 2600U);
  EXPECT_NE(content.find("line 0 of"), std::string::npos);
  EXPECT_NE(content.find("line 1999 of"), std::string::npos);
  EXPECT_EQ(content.find("line 1000 of"), std::string::npos);
  const size_t at = content.find("read_file path=\"");
  ASSERT_NE(at, std::string::npos) << content;
  const size_t start = at + 16;
  const std::string path = content.substr(start, content.find('"', start) - start);
  std::ifstream stored(path);
  const std::string full((std::istreambuf_iterator<char>(stored)),
                         std::istreambuf_iterator<char>());
  EXPECT_EQ(full, text.substr(0, text.size()));
}

TEST_F(WebToolsTest, FirecrawlScrapesEachUrlAndTheFinalUrlIsJudgedAgain) {
  std::vector<Json> bodies;
  std::string auth;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post("/v2/scrape", [&](const httplib::Request& req, httplib::Response& res) {
      Json body = Json::parse(req.body, nullptr, false);
      auth = req.get_header_value("Authorization");
      const std::string url = body.value("url", "");
      // The second page "redirected" to a metadata address on the service's side.
      const std::string source =
          url == "https://example.org/b" ? "http://169.254.169.254/latest" : url;
      bodies.push_back(std::move(body));
      res.set_content(Json{{"success", true},
                           {"data",
                            {{"markdown", "# Page\nfrom " + url},
                             {"metadata", {{"title", "FC"}, {"sourceURL", source}}}}}}
                          .dump(),
                      "application/json");
    });
  });
  ::setenv("FIRECRAWL_API_KEY", "fc-key", 1);
  ::setenv("FIRECRAWL_API_URL", fake.url().c_str(), 1);
  WriteConfig("web:\n  extract_backend: firecrawl\n");
  Json r = Call("web_extract",
                {{"urls", {"https://example.org/a", "https://example.org/b", "http://10.0.0.1/"}}});
  ASSERT_TRUE(r.contains("results")) << r.dump();
  EXPECT_EQ(auth, "Bearer fc-key");
  ASSERT_EQ(bodies.size(), 2U);  // the private URL never went to the service
  EXPECT_EQ(bodies[0]["formats"], Json::array({"markdown"}));
  EXPECT_EQ(bodies[0]["onlyMainContent"], true);
  const Json& res = r["results"];
  EXPECT_EQ(res[0]["title"], "FC");
  EXPECT_EQ(res[0]["content"], "# Page\nfrom https://example.org/a");
  EXPECT_EQ(res[1]["blocked_by_policy"]["rule"], "cloud-metadata");
  EXPECT_EQ(res[2]["blocked_by_policy"]["rule"], "private");
}

TEST_F(WebToolsTest, TavilyExtractReadsResultsAndFailures) {
  Json body;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post("/extract", [&](const httplib::Request& req, httplib::Response& res) {
      body = Json::parse(req.body, nullptr, false);
      res.set_content(
          R"({"results":[{"url":"https://example.org/a","raw_content":"raw A"}],
              "failed_results":[{"url":"https://example.org/b","error":"timeout"}],
              "failed_urls":["https://example.org/b"]})",
          "application/json");
    });
  });
  ::setenv("TAVILY_API_KEY", "tvly-x", 1);
  ::setenv("TAVILY_BASE_URL", fake.url().c_str(), 1);
  WriteConfig("web:\n  extract_backend: tavily\n");
  Json r = Call("web_extract", {{"urls", {"https://example.org/a", "https://example.org/b"}}});
  EXPECT_EQ(body["api_key"], "tvly-x");
  EXPECT_EQ(body["urls"], Json::array({"https://example.org/a", "https://example.org/b"}));
  EXPECT_EQ(body["include_images"], false);
  ASSERT_TRUE(r.contains("results")) << r.dump();
  EXPECT_EQ(r["results"][0]["content"], "raw A");
  EXPECT_EQ(r["results"][1]["error"], "tavily: timeout");
}

TEST_F(WebToolsTest, ExaAndParallelExtractSpeakTheirFormats) {
  Json exa_body;
  Json par_body;
  std::string exa_key;
  std::string par_key;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post("/contents", [&](const httplib::Request& req, httplib::Response& res) {
      exa_body = Json::parse(req.body, nullptr, false);
      exa_key = req.get_header_value("x-api-key");
      res.set_content(
          R"({"results":[{"url":"https://example.org/a","title":"E","text":"exa text"}]})",
          "application/json");
    });
    s.Post("/v1beta/extract", [&](const httplib::Request& req, httplib::Response& res) {
      par_body = Json::parse(req.body, nullptr, false);
      par_key = req.get_header_value("x-api-key");
      res.set_content(
          R"({"results":[{"url":"https://example.org/a","title":"P","full_content":"","excerpts":["x1","x2"]}]})",
          "application/json");
    });
  });
  ::setenv("EXA_API_KEY", "exa-key", 1);
  ::setenv("EXA_BASE_URL", fake.url().c_str(), 1);
  ::setenv("PARALLEL_API_KEY", "par-key", 1);
  ::setenv("PARALLEL_BASE_URL", fake.url().c_str(), 1);
  WriteConfig("web:\n  extract_backend: exa\n");
  Json e = Call("web_extract", {{"urls", {"https://example.org/a"}}});
  EXPECT_EQ(exa_key, "exa-key");
  EXPECT_EQ(exa_body["text"], true);
  EXPECT_EQ(e["results"][0]["content"], "exa text");
  WriteConfig("web:\n  extract_backend: parallel\n");
  Json p = Call("web_extract", {{"urls", {"https://example.org/a"}}});
  EXPECT_EQ(par_key, "par-key");
  EXPECT_EQ(par_body["full_content"], true);
  EXPECT_EQ(p["results"][0]["content"], "x1 ... x2");
}

TEST_F(WebToolsTest, ASearchOnlyExtractBackendIsATypedError) {
  WriteConfig("web:\n  extract_backend: searxng\n");
  bool ok = true;
  Json r = Call("web_extract", {{"urls", {"https://example.org/"}}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(r["error"].get<std::string>().find("search-only"), std::string::npos) << r.dump();
}

}  // namespace
}  // namespace talaria::web
