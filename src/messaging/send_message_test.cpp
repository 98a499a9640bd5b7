// send_message against a local fake of each platform's API (its real paths, auth and fields
// checked on arrival) and a fake SMTP server: what counts as sent, splitting at each platform's
// limit, rate-limit retries as each API says, targets and home channels from config, and the
// refusal for delegated subagents.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "messaging/chunker.h"
#include "messaging/send_message_fixture.h"
#include "support/fake_smtp_server.h"
#include "support/loopback_http.h"
#include "support/temp_dir.h"
#include "talaria/base/base64.h"
#include "talaria/confinement/workspace.h"
#include "talaria/core/registry.h"
#include "talaria/core/tool_context.h"
#include "talaria/tools/session_services.h"

namespace talaria::messaging {
namespace {

using talaria_test::FakeSmtpServer;
using talaria_test::LoopbackHttpServer;

TEST_F(SendMessageTest, IsUnavailableUntilAPlatformIsConfigured) {
  auto entry = Registry::Global().GetEntry("send_message");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->toolset(), "messaging");
  EXPECT_FALSE((*entry->check_fn())());
  const std::string why = entry->unavailable_reason()();
  EXPECT_NE(why.find("SLACK_BOT_TOKEN"), std::string::npos) << why;
  EXPECT_NE(why.find("TELEGRAM_BOT_TOKEN"), std::string::npos) << why;
  bool ok = true;
  const Json r = Call({{"target", "slack:C0123"}, {"message", "hi"}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(Error(r).find("SLACK_BOT_TOKEN"), std::string::npos) << r.dump();
  ::setenv("SLACK_BOT_TOKEN", "xoxb-test", 1);
  EXPECT_TRUE((*entry->check_fn())());
}

TEST_F(SendMessageTest, RefusesDelegatedSubagentsBeforeAnyRequest) {
  LoopbackHttpServer fake([](httplib::Server& s) {
    s.Post("/chat.postMessage", [](const httplib::Request&, httplib::Response& res) {
      Reply(res, {{"ok", true}, {"ts", "1.1"}});
    });
  });
  ::setenv("SLACK_BOT_TOKEN", "xoxb-test", 1);
  WriteConfig("messaging:\n  slack:\n    base_url: " + fake.url() + "\n");
  ctx_.unattended = true;  // how the agent marks a subagent's calls
  bool ok = true;
  const Json r = Call({{"target", "slack:C0123"}, {"message", "hi"}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(Error(r).find("subagents"), std::string::npos) << r.dump();
  EXPECT_EQ(fake.requests(), 0);
}

TEST_F(SendMessageTest, SlackPostsWithTheBearerTokenToANamedChannel) {
  Json seen;
  std::string auth;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post("/chat.postMessage", [&](const httplib::Request& req, httplib::Response& res) {
      auth = req.get_header_value("Authorization");
      seen = Body(req);
      Reply(res, {{"ok", true}, {"channel", "C0ENG"}, {"ts", "1700000000.000100"}});
    });
  });
  ::setenv("SLACK_BOT_TOKEN", "xoxb-test", 1);
  WriteConfig("messaging:\n  slack:\n    base_url: " + fake.url() +
              "\n    channels: {eng: C0ENG}\n");
  const Json r = Call({{"target", "slack:#eng"}, {"message", "deploy done"}});
  EXPECT_EQ(auth, "Bearer xoxb-test");
  EXPECT_EQ(seen["channel"], "C0ENG");
  EXPECT_EQ(seen["text"], "deploy done");
  EXPECT_EQ(seen["mrkdwn"], true);
  EXPECT_FALSE(seen.contains("thread_ts"));
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(r["platform"], "slack");
  EXPECT_EQ(r["chat_id"], "C0ENG");
  EXPECT_EQ(r["message_id"], "1700000000.000100");

  Call({{"target", "slack:C0ENG:1699999999.000200"}, {"message", "in thread"}});
  EXPECT_EQ(seen["thread_ts"], "1699999999.000200");
}

TEST_F(SendMessageTest, SlackOkFalseIsNotSent) {
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post("/chat.postMessage", [&](const httplib::Request&, httplib::Response& res) {
      Reply(res, {{"ok", false}, {"error", "channel_not_found"}});
    });
  });
  ::setenv("SLACK_BOT_TOKEN", "xoxb-test", 1);
  WriteConfig("messaging:\n  slack:\n    base_url: " + fake.url() + "\n");
  bool ok = true;
  const Json r = Call({{"target", "slack:C0NOPE"}, {"message", "x"}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_FALSE(r.contains("success"));
  EXPECT_NE(Error(r).find("channel_not_found"), std::string::npos) << r.dump();
}

TEST_F(SendMessageTest, SlackRetriesAfterRetryAfterAndOpensDmsForUsers) {
  int posts = 0;
  Json opened;
  Json seen;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post("/conversations.open", [&](const httplib::Request& req, httplib::Response& res) {
      opened = Body(req);
      Reply(res, {{"ok", true}, {"channel", {{"id", "D0DM"}}}});
    });
    s.Post("/chat.postMessage", [&](const httplib::Request& req, httplib::Response& res) {
      if (++posts == 1) {
        res.set_header("Retry-After", "0");
        Reply(res, {{"ok", false}, {"error", "ratelimited"}}, 429);
        return;
      }
      seen = Body(req);
      Reply(res, {{"ok", true}, {"ts", "5.5"}});
    });
  });
  ::setenv("SLACK_BOT_TOKEN", "xoxb-test", 1);
  WriteConfig("messaging:\n  slack:\n    base_url: " + fake.url() + "\n");
  const Json r = Call({{"target", "slack:U0ALICE"}, {"message", "hello"}});
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(posts, 2);
  EXPECT_EQ(opened["users"], "U0ALICE");
  EXPECT_EQ(seen["channel"], "D0DM");
  EXPECT_EQ(r["chat_id"], "D0DM");
}

TEST_F(SendMessageTest, TelegramSplitsByUtf16AndPostsToTheTopic) {
  std::vector<Json> sent;
  std::string path_seen;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post(R"(/bot([^/]+)/sendMessage)", [&](const httplib::Request& req, httplib::Response& res) {
      path_seen = req.matches[1];
      sent.push_back(Body(req));
      Reply(res, {{"ok", true}, {"result", {{"message_id", 100 + static_cast<int>(sent.size())}}}});
    });
  });
  ::setenv("TELEGRAM_BOT_TOKEN", "123:ABC", 1);
  WriteConfig("messaging:\n  telegram:\n    base_url: " + fake.url() + "\n");
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "\xF0\x9F\x98\x80";  // 😀: 2 UTF-16 units each
  const Json r = Call({{"target", "telegram:-1001234567890:17585"}, {"message", text}});
  ASSERT_EQ(r.value("success", false), true) << r.dump().substr(0, 300);
  EXPECT_EQ(path_seen, "123:ABC");
  ASSERT_EQ(sent.size(), 2U);
  for (const Json& m : sent) {
    EXPECT_EQ(m["chat_id"], "-1001234567890");
    EXPECT_EQ(m["message_thread_id"], 17585);
    EXPECT_LE(MeasureLength(m["text"].get<std::string>(), LengthUnit::kUtf16), 4096U);
  }
  EXPECT_EQ(r["message_id"], "101");
  EXPECT_EQ(r["message_ids"], Json::array({"101", "102"}));
  EXPECT_EQ(r["thread_id"], "17585");
}

TEST_F(SendMessageTest, TelegramWaitsAsItsBodySaysAndRefusesLongWaits) {
  int calls = 0;
  int wait_seconds = 0;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post(R"(/bot([^/]+)/sendMessage)", [&](const httplib::Request&, httplib::Response& res) {
      if (++calls == 1 || wait_seconds > 0) {
        // The header says wait long; Telegram's body is what counts.
        res.set_header("Retry-After", "3600");
        Reply(res,
              {{"ok", false},
               {"error_code", 429},
               {"description", "Too Many Requests: retry after " + std::to_string(wait_seconds)},
               {"parameters", {{"retry_after", wait_seconds}}}},
              429);
        return;
      }
      Reply(res, {{"ok", true}, {"result", {{"message_id", 7}}}});
    });
  });
  ::setenv("TELEGRAM_BOT_TOKEN", "123:ABC", 1);
  ::setenv("TELEGRAM_HOME_CHANNEL", "-100777", 1);
  WriteConfig("messaging:\n  telegram:\n    base_url: " + fake.url() + "\n");
  const Json r = Call({{"target", "telegram"}, {"message", "hi"}});
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(r["chat_id"], "-100777");

  calls = 0;
  wait_seconds = 3600;
  bool ok = true;
  const Json refused = Call({{"target", "telegram"}, {"message", "hi"}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(calls, 1);
  EXPECT_NE(Error(refused).find("asks to wait 3600"), std::string::npos) << refused.dump();
}

TEST_F(SendMessageTest, TelegramAttachesMediaFromTheWorkspace) {
  std::vector<std::string> order;
  std::string document;
  std::string file_name;
  std::string chat;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post(R"(/bot([^/]+)/sendMessage)", [&](const httplib::Request& req, httplib::Response& res) {
      order.push_back("text:" + Body(req)["text"].get<std::string>());
      Reply(res, {{"ok", true}, {"result", {{"message_id", 1}}}});
    });
    s.Post(R"(/bot([^/]+)/sendDocument)", [&](const httplib::Request& req, httplib::Response& res) {
      order.push_back("document");
      const auto file = req.get_file_value("document");
      document = file.content;
      file_name = file.filename;
      chat = req.get_file_value("chat_id").content;
      Reply(res, {{"ok", true}, {"result", {{"message_id", 2}}}});
    });
  });
  ::setenv("TELEGRAM_BOT_TOKEN", "123:ABC", 1);
  WriteConfig("messaging:\n  telegram:\n    base_url: " + fake.url() + "\n");
  talaria::test_support::TempDir work;
  std::ofstream(work.path() + "/report.csv") << "a,b\n1,2\n";
  safety::WorkspaceOptions options;
  options.roots = {work.path()};
  auto ws = safety::Workspace::Open(options);
  ASSERT_TRUE(ws.has_value()) << ws.error().message();
  tools::EnsureServices(ctx_).workspace = *ws;
  const Json r = Call({{"target", "telegram:42"}, {"message", "Weekly report MEDIA:report.csv"}});
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(order, (std::vector<std::string>{"text:Weekly report", "document"}));
  EXPECT_EQ(document, "a,b\n1,2\n");
  EXPECT_EQ(file_name, "report.csv");
  EXPECT_EQ(chat, "42");

  // A path outside the workspace sends nothing.
  order.clear();
  bool ok = true;
  const Json bad = Call({{"target", "telegram:42"}, {"message", "x MEDIA:/etc/passwd"}}, &ok);
  EXPECT_FALSE(ok) << bad.dump();
  EXPECT_TRUE(order.empty());
}

TEST_F(SendMessageTest, DiscordSplitsAt2000AndRetriesAfterItsRetryAfter) {
  std::vector<std::string> contents;
  std::string auth;
  int limited = 0;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post(R"(/channels/(\d+)/messages)", [&](const httplib::Request& req, httplib::Response& res) {
      auth = req.get_header_value("Authorization");
      if (req.matches[1] != "123456") {
        Reply(res, {{"message", "Unknown Channel"}, {"code", 10003}}, 404);
        return;
      }
      if (limited++ == 0) {
        Reply(
            res,
            {{"message", "You are being rate limited."}, {"retry_after", 0.05}, {"global", false}},
            429);
        return;
      }
      contents.push_back(Body(req)["content"].get<std::string>());
      Reply(res, {{"id", "9" + std::to_string(contents.size())}});
    });
  });
  ::setenv("DISCORD_BOT_TOKEN", "disc-token", 1);
  WriteConfig("messaging:\n  discord:\n    base_url: " + fake.url() +
              "\n    channels: {bot-home: \"123456\"}\n");
  std::string text;
  for (int i = 0; i < 900; ++i) text += "word ";  // 4,500 characters
  const Json r = Call({{"target", "discord:#bot-home"}, {"message", text}});
  ASSERT_EQ(r.value("success", false), true) << r.dump().substr(0, 300);
  EXPECT_EQ(auth, "Bot disc-token");
  ASSERT_EQ(contents.size(), 3U);
  std::string joined;
  for (const std::string& c : contents) {
    EXPECT_LE(MeasureLength(c, LengthUnit::kCodePoints), 2000U);
    joined += c;
  }
  EXPECT_NE(contents[0].find("(1/3)"), std::string::npos);
  EXPECT_EQ(r["message_ids"].size(), 3U);
}

TEST_F(SendMessageTest, DiscordFailureMidwaySaysWhatWasSent) {
  int posts = 0;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post(R"(/channels/(\d+)/messages)", [&](const httplib::Request&, httplib::Response& res) {
      if (++posts == 2) {
        Reply(res, {{"message", "Missing Permissions"}, {"code", 50013}}, 403);
        return;
      }
      Reply(res, {{"id", "m" + std::to_string(posts)}});
    });
  });
  ::setenv("DISCORD_BOT_TOKEN", "disc-token", 1);
  WriteConfig("messaging:\n  discord:\n    base_url: " + fake.url() + "\n");
  bool ok = true;
  const Json r = Call({{"target", "discord:42"}, {"message", std::string(3000, 'x')}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(Error(r).find("HTTP 403"), std::string::npos) << r.dump();
  EXPECT_NE(Error(r).find("1 of 2 parts were sent"), std::string::npos) << r.dump();
}

TEST_F(SendMessageTest, DiscordReactsAndUnreacts) {
  std::vector<std::string> seen;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    auto handler = [&](const httplib::Request& req, httplib::Response& res) {
      seen.push_back(req.method + " " + req.path);
      res.status = 204;
    };
    s.Put(R"(/channels/42/messages/555/reactions/(.+)/@me)", handler);
    s.Delete(R"(/channels/42/messages/555/reactions/(.+)/@me)", handler);
  });
  ::setenv("DISCORD_BOT_TOKEN", "disc-token", 1);
  WriteConfig("messaging:\n  discord:\n    base_url: " + fake.url() + "\n");
  const Json r = Call({{"action", "react"},
                       {"target", "discord:42"},
                       {"message_id", "555"},
                       {"emoji", "\xF0\x9F\x91\x8D"}});
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(r["action"], "react");
  Call({{"action", "unreact"},
        {"target", "discord:42"},
        {"message_id", "555"},
        {"emoji", "\xF0\x9F\x91\x8D"}});
  ASSERT_EQ(seen.size(), 2U);
  EXPECT_EQ(seen[0].substr(0, 4), "PUT ");
  EXPECT_EQ(seen[1].substr(0, 7), "DELETE ");
}

TEST_F(SendMessageTest, MatrixKeepsItsTransactionIdAcrossARateLimit) {
  std::vector<std::string> txns;
  std::string room;
  std::string auth;
  Json content;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Put(R"(/_matrix/client/v3/rooms/([^/]+)/send/m\.room\.message/([^/]+))",
          [&](const httplib::Request& req, httplib::Response& res) {
            room = req.matches[1];
            txns.push_back(req.matches[2]);
            auth = req.get_header_value("Authorization");
            if (txns.size() == 1) {
              Reply(res, {{"errcode", "M_LIMIT_EXCEEDED"}, {"retry_after_ms", 20}}, 429);
              return;
            }
            content = Body(req);
            Reply(res, {{"event_id", "$ev1"}});
          });
  });
  ::setenv("MATRIX_ACCESS_TOKEN", "syt_token", 1);
  ::setenv("MATRIX_HOMESERVER", fake.url().c_str(), 1);
  const Json r = Call({{"target", "matrix:!abc:example.org"}, {"message", "hello room"}});
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(room, "!abc:example.org");
  EXPECT_EQ(auth, "Bearer syt_token");
  ASSERT_EQ(txns.size(), 2U);
  EXPECT_EQ(txns[0], txns[1]);
  EXPECT_EQ(content["msgtype"], "m.text");
  EXPECT_EQ(content["body"], "hello room");
  EXPECT_EQ(r["message_id"], "$ev1");
}

TEST_F(SendMessageTest, SignalSendsJsonRpcAndChecksEachRecipient) {
  Json request;
  std::string type = "SUCCESS";
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post("/api/v1/rpc", [&](const httplib::Request& req, httplib::Response& res) {
      request = Body(req);
      Reply(res,
            {{"jsonrpc", "2.0"},
             {"id", request["id"]},
             {"result",
              {{"timestamp", 1700000000123LL}, {"results", Json::array({{{"type", type}}})}}}});
    });
  });
  ::setenv("SIGNAL_HTTP_URL", fake.url().c_str(), 1);
  ::setenv("SIGNAL_ACCOUNT", "+15550001111", 1);
  const Json r = Call({{"target", "signal:+15552223333"}, {"message", "ping"}});
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(request["jsonrpc"], "2.0");
  EXPECT_EQ(request["method"], "send");
  EXPECT_EQ(request["params"]["account"], "+15550001111");
  EXPECT_EQ(request["params"]["recipient"], Json::array({"+15552223333"}));
  EXPECT_EQ(request["params"]["message"], "ping");
  EXPECT_EQ(r["message_id"], "1700000000123");

  type = "UNREGISTERED_FAILURE";
  bool ok = true;
  const Json failed = Call({{"target", "signal:+15552223333"}, {"message", "ping"}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(Error(failed).find("UNREGISTERED_FAILURE"), std::string::npos) << failed.dump();
}

TEST_F(SendMessageTest, EmailGoesThroughSmtpWithLoginAndSubject) {
  FakeSmtpServer smtp("bot@example.org", "app-password", "nobody@example.org");
  ::setenv("EMAIL_ADDRESS", "bot@example.org", 1);
  ::setenv("EMAIL_PASSWORD", "app-password", 1);
  WriteConfig("messaging:\n  email:\n    smtp_url: " + smtp.url() +
              "\n    allow_plaintext: true\n");
  const Json r = Call({{"target", "email:alice@example.org"},
                       {"message", "Build finished\nAll 120 tests passed.\n.leading dot"}});
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  const auto mails = smtp.mails();
  ASSERT_EQ(mails.size(), 1U);
  EXPECT_EQ(mails[0].from, "bot@example.org");
  EXPECT_EQ(mails[0].to, std::vector<std::string>{"alice@example.org"});
  EXPECT_NE(mails[0].data.find("Subject: Build finished\r\n"), std::string::npos);
  EXPECT_NE(mails[0].data.find("To: alice@example.org\r\n"), std::string::npos);
  EXPECT_NE(mails[0].data.find(
                Base64Encode("Build finished\nAll 120 tests passed.\n.leading dot").substr(0, 60)),
            std::string::npos);
  EXPECT_NE(mails[0].data.find("Message-ID: " + r["message_id"].get<std::string>()),
            std::string::npos);

  bool ok = true;
  const Json refused = Call({{"target", "email:nobody@example.org"}, {"message", "x"}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(Error(refused).find("550"), std::string::npos) << refused.dump();
  EXPECT_EQ(smtp.mails().size(), 1U);
}

TEST_F(SendMessageTest, SmsUsesTwilioFormAndBasicAuthWithoutMarkdown) {
  std::string auth;
  std::string from;
  std::string to;
  std::string body;
  std::string status = "queued";
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post("/2010-04-01/Accounts/AC123/Messages.json",
           [&](const httplib::Request& req, httplib::Response& res) {
             auth = req.get_header_value("Authorization");
             from = req.get_param_value("From");
             to = req.get_param_value("To");
             body = req.get_param_value("Body");
             Reply(res, {{"sid", "SM0001"}, {"status", status}}, 201);
           });
  });
  ::setenv("TWILIO_ACCOUNT_SID", "AC123", 1);
  ::setenv("TWILIO_AUTH_TOKEN", "twilio-secret", 1);
  ::setenv("TWILIO_PHONE_NUMBER", "+15550009999", 1);
  WriteConfig("messaging:\n  sms:\n    base_url: " + fake.url() + "\n");
  const Json r =
      Call({{"target", "sms:+15551112222"}, {"message", "**Alert**: see [dash](http://d/x)"}});
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(auth, "Basic " + Base64Encode("AC123:twilio-secret"));
  EXPECT_EQ(from, "+15550009999");
  EXPECT_EQ(to, "+15551112222");
  EXPECT_EQ(body, "Alert: see dash (http://d/x)");
  EXPECT_EQ(r["message_id"], "SM0001");

  status = "failed";
  bool ok = true;
  Call({{"target", "sms:+15551112222"}, {"message", "x"}}, &ok);
  EXPECT_FALSE(ok);
}

TEST_F(SendMessageTest, NtfyPublishesToTheTopicWithItsToken) {
  std::string topic;
  std::string auth;
  std::string body;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post(R"(/([^/]+))", [&](const httplib::Request& req, httplib::Response& res) {
      topic = req.matches[1];
      auth = req.get_header_value("Authorization");
      body = req.body;
      Reply(res, {{"id", "hwQ2YpKdmg"}, {"event", "message"}, {"topic", topic}});
    });
  });
  ::setenv("NTFY_TOKEN", "tk_ntfy", 1);
  WriteConfig("messaging:\n  ntfy:\n    server: " + fake.url() + "\n    home_channel: alerts\n");
  const Json r = Call({{"target", "ntfy"}, {"message", "disk 91% full"}});
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(topic, "alerts");
  EXPECT_EQ(auth, "Bearer tk_ntfy");
  EXPECT_EQ(body, "disk 91% full");
  EXPECT_EQ(r["message_id"], "hwQ2YpKdmg");
}

TEST_F(SendMessageTest, WebhookNeedsA2xxToCountAsSent) {
  int status = 200;
  Json seen;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post("/hook", [&](const httplib::Request& req, httplib::Response& res) {
      seen = Body(req);
      Reply(res, {{"id", 77}}, status);
    });
  });
  ::setenv("MESSAGING_WEBHOOK_URL", fake.url("/hook").c_str(), 1);
  const Json r = Call({{"target", "webhook:ops"}, {"message", "hello"}});
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(seen["text"], "hello");
  EXPECT_EQ(seen["target"], "ops");
  EXPECT_EQ(r["message_id"], "77");

  status = 500;
  bool ok = true;
  const Json failed = Call({{"target", "webhook:ops"}, {"message", "hello"}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(Error(failed).find("not sent"), std::string::npos) << failed.dump();
}

TEST_F(SendMessageTest, ListShowsConfiguredTargetsAndUnknownNamesPointThere) {
  ::setenv("SLACK_BOT_TOKEN", "xoxb-test", 1);
  WriteConfig("messaging:\n  slack:\n    home_channel: C0HOME\n    channels: {eng: C0ENG}\n");
  const Json list = Call({{"action", "list"}});
  const std::string targets = list.value("targets", std::string());
  EXPECT_NE(targets.find("slack:#eng -> C0ENG"), std::string::npos) << targets;
  EXPECT_NE(targets.find("home: slack -> C0HOME"), std::string::npos) << targets;
  EXPECT_NE(targets.find("TELEGRAM_BOT_TOKEN"), std::string::npos) << targets;

  bool ok = true;
  const Json r = Call({{"target", "slack:#nowhere"}, {"message", "x"}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(Error(r).find("Could not resolve"), std::string::npos) << r.dump();
  EXPECT_NE(Error(r).find("action='list'"), std::string::npos) << r.dump();

  const Json no_home = Call({{"target", "telegram"}, {"message", "x"}}, &ok);
  EXPECT_NE(Error(no_home).find("telegram is not configured"), std::string::npos);
  ::setenv("TELEGRAM_BOT_TOKEN", "1:x", 1);
  const Json no_home2 = Call({{"target", "telegram"}, {"message", "x"}}, &ok);
  EXPECT_NE(Error(no_home2).find("TELEGRAM_HOME_CHANNEL"), std::string::npos) << no_home2.dump();
}

TEST_F(SendMessageTest, BadConfigIsAClearError) {
  ::setenv("SLACK_BOT_TOKEN", "xoxb-test", 1);
  WriteConfig("messaging:\n  slak: {}\n");
  bool ok = true;
  const Json r = Call({{"target", "slack:C0123"}, {"message", "x"}}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(Error(r).find("messaging.slak"), std::string::npos) << r.dump();
}

}  // namespace
}  // namespace talaria::messaging
