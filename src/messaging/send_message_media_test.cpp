// send_message's MEDIA: attachments on Matrix (upload, then an m.image or m.file event), Signal
// (data URIs in signal-cli's send), e-mail (one multipart/mixed message), Slack (the external
// upload flow), SMS (Twilio MediaUrl; local files refused), ntfy (PUT with Filename, or Attach)
// and the webhook (base64 in its JSON body), and Matrix unreact
// (the reaction event found among the message's annotations and redacted), each against a local
// fake that checks what arrives.
#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "messaging/send_message_fixture.h"
#include "support/fake_smtp_server.h"
#include "support/loopback_http.h"
#include "support/temp_dir.h"
#include "talaria/base/base64.h"
#include "talaria/confinement/workspace.h"
#include "talaria/tools/session_services.h"

namespace talaria::messaging {
namespace {

using talaria_test::FakeSmtpServer;
using talaria_test::LoopbackHttpServer;

// Every byte value, so a file's round trip through an encoding is checked whole.
std::string AllBytes() {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  return bytes;
}

class SendMessageMediaTest : public SendMessageTest {
 protected:
  void SetUp() override {
    SendMessageTest::SetUp();
    std::ofstream(work_.path() + "/report.csv") << "a,b\n1,2\n";
    std::ofstream(work_.path() + "/chart.png", std::ios::binary) << AllBytes();
    std::ofstream(work_.path() + "/r\xC3\xA9sum\xC3\xA9.pdf", std::ios::binary) << "%PDF-1.4\n";
    safety::WorkspaceOptions options;
    options.roots = {work_.path()};
    auto ws = safety::Workspace::Open(options);
    ASSERT_TRUE(ws.has_value()) << ws.error().message();
    tools::EnsureServices(ctx_).workspace = *ws;
  }

  talaria::test_support::TempDir work_;
};

TEST_F(SendMessageMediaTest, MatrixUploadsThenSendsImageAndFileEvents) {
  struct Upload {
    std::string auth, type, file_name, body;
  };
  std::vector<Upload> uploads;
  std::vector<Json> events;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post("/_matrix/media/v3/upload", [&](const httplib::Request& req, httplib::Response& res) {
      uploads.push_back({req.get_header_value("Authorization"),
                         req.get_header_value("Content-Type"), req.get_param_value("filename"),
                         req.body});
      Reply(res, {{"content_uri", "mxc://example.org/m" + std::to_string(uploads.size())}});
    });
    s.Put(R"(/_matrix/client/v3/rooms/([^/]+)/send/m\.room\.message/([^/]+))",
          [&](const httplib::Request& req, httplib::Response& res) {
            events.push_back(Body(req));
            Reply(res, {{"event_id", "$e" + std::to_string(events.size())}});
          });
  });
  ::setenv("MATRIX_ACCESS_TOKEN", "syt_token", 1);
  ::setenv("MATRIX_HOMESERVER", fake.url().c_str(), 1);
  const Json r = Call({{"target", "matrix:!abc:example.org"},
                       {"message", "See attached MEDIA:chart.png MEDIA:report.csv"}});
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  ASSERT_EQ(uploads.size(), 2U);
  EXPECT_EQ(uploads[0].auth, "Bearer syt_token");
  EXPECT_EQ(uploads[0].type, "image/png");
  EXPECT_EQ(uploads[0].file_name, "chart.png");
  EXPECT_EQ(uploads[0].body, AllBytes());
  EXPECT_EQ(uploads[1].type, "text/csv");
  EXPECT_EQ(uploads[1].body, "a,b\n1,2\n");
  ASSERT_EQ(events.size(), 3U);
  EXPECT_EQ(events[0]["msgtype"], "m.text");
  EXPECT_EQ(events[0]["body"], "See attached");
  EXPECT_EQ(events[1]["msgtype"], "m.image");
  EXPECT_EQ(events[1]["url"], "mxc://example.org/m1");
  EXPECT_EQ(events[1]["body"], "chart.png");
  EXPECT_EQ(events[1]["info"]["mimetype"], "image/png");
  EXPECT_EQ(events[1]["info"]["size"], 256);
  EXPECT_EQ(events[2]["msgtype"], "m.file");
  EXPECT_EQ(events[2]["url"], "mxc://example.org/m2");
  EXPECT_EQ(events[2]["filename"], "report.csv");
  EXPECT_EQ(r["message_ids"], Json::array({"$e1", "$e2", "$e3"}));

  // [[as_document]]: the image goes as a file.
  events.clear();
  const Json doc =
      Call({{"target", "matrix:!abc:example.org"}, {"message", "[[as_document]] MEDIA:chart.png"}});
  ASSERT_EQ(doc.value("success", false), true) << doc.dump();
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0]["msgtype"], "m.file");
}

TEST_F(SendMessageMediaTest, MatrixUploadWithoutAContentUriIsNotSent) {
  int sends = 0;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post("/_matrix/media/v3/upload", [&](const httplib::Request&, httplib::Response& res) {
      Reply(res, {{"content_uri", "https://elsewhere.example/x"}});
    });
    s.Put(R"(/_matrix/client/v3/rooms/([^/]+)/send/m\.room\.message/([^/]+))",
          [&](const httplib::Request&, httplib::Response& res) {
            ++sends;
            Reply(res, {{"event_id", "$e"}});
          });
  });
  ::setenv("MATRIX_ACCESS_TOKEN", "syt_token", 1);
  ::setenv("MATRIX_HOMESERVER", fake.url().c_str(), 1);
  bool ok = true;
  const Json r =
      Call({{"target", "matrix:!abc:example.org"}, {"message", "MEDIA:report.csv"}}, &ok);
  EXPECT_FALSE(ok) << r.dump();
  EXPECT_NE(Error(r).find("mxc://"), std::string::npos) << r.dump();
  EXPECT_EQ(sends, 0);
}

TEST_F(SendMessageMediaTest, MatrixUnreactRedactsOnlyItsOwnReaction) {
  std::vector<std::string> redacted;
  std::vector<std::string> froms;
  std::string relations_path;
  auto reaction = [](const std::string& id, const std::string& sender, const std::string& key) {
    return Json{
        {"event_id", id},
        {"type", "m.reaction"},
        {"sender", sender},
        {"content",
         {{"m.relates_to", {{"rel_type", "m.annotation"}, {"event_id", "$msg1"}, {"key", key}}}}}};
  };
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Get("/_matrix/client/v3/account/whoami",
          [&](const httplib::Request& req, httplib::Response& res) {
            if (req.get_header_value("Authorization") != "Bearer syt_token") {
              Reply(res, {{"errcode", "M_UNKNOWN_TOKEN"}}, 401);
              return;
            }
            Reply(res, {{"user_id", "@bot:example.org"}});
          });
    s.Get(R"(/_matrix/client/v1/rooms/([^/]+)/relations/([^/]+)/m\.annotation/m\.reaction)",
          [&](const httplib::Request& req, httplib::Response& res) {
            relations_path = std::string(req.matches[1]) + " " + std::string(req.matches[2]);
            const std::string from = req.get_param_value("from");
            froms.push_back(from);
            if (from.empty()) {  // page one: someone else's thumbs-up, our party popper
              Reply(res, {{"chunk", Json::array({reaction("$r0", "@alice:example.org", "👍"),
                                                 reaction("$r1", "@bot:example.org", "🎉")})},
                          {"next_batch", "page2"}});
            } else {
              Reply(res, {{"chunk", Json::array({reaction("$r2", "@bot:example.org", "👍")})}});
            }
          });
    s.Put(R"(/_matrix/client/v3/rooms/([^/]+)/redact/([^/]+)/([^/]+))",
          [&](const httplib::Request& req, httplib::Response& res) {
            redacted.push_back(req.matches[2]);
            Reply(res, {{"event_id", "$redaction"}});
          });
  });
  ::setenv("MATRIX_ACCESS_TOKEN", "syt_token", 1);
  ::setenv("MATRIX_HOMESERVER", fake.url().c_str(), 1);
  const Json r = Call({{"action", "unreact"},
                       {"target", "matrix:!abc:example.org"},
                       {"message_id", "$msg1"},
                       {"emoji", "👍"}});
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(r["action"], "unreact");
  EXPECT_EQ(relations_path, "!abc:example.org $msg1");
  EXPECT_EQ(froms, (std::vector<std::string>{"", "page2"}));
  EXPECT_EQ(redacted, std::vector<std::string>{"$r2"});  // never alice's $r0

  // No reaction of ours with that key: an error, and nothing redacted.
  redacted.clear();
  bool ok = true;
  const Json none = Call({{"action", "unreact"},
                          {"target", "matrix:!abc:example.org"},
                          {"message_id", "$msg1"},
                          {"emoji", "🚀"}},
                         &ok);
  EXPECT_FALSE(ok) << none.dump();
  EXPECT_NE(Error(none).find("no 🚀 reaction"), std::string::npos) << none.dump();
  EXPECT_TRUE(redacted.empty());
}

TEST_F(SendMessageMediaTest, SignalSendsFilesAsDataUris) {
  std::vector<Json> params;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post("/api/v1/rpc", [&](const httplib::Request& req, httplib::Response& res) {
      const Json request = Body(req);
      params.push_back(request["params"]);
      Reply(res, {{"jsonrpc", "2.0"},
                  {"id", request["id"]},
                  {"result",
                   {{"timestamp", 1700000000000LL + static_cast<int64_t>(params.size())},
                    {"results", Json::array({{{"type", "SUCCESS"}}})}}}});
    });
  });
  ::setenv("SIGNAL_HTTP_URL", fake.url().c_str(), 1);
  ::setenv("SIGNAL_ACCOUNT", "+15550001111", 1);
  const Json r = Call({{"target", "signal:+15552223333"},
                       {"message", "the chart MEDIA:chart.png MEDIA:report.csv"}});
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  ASSERT_EQ(params.size(), 3U);
  EXPECT_EQ(params[0]["message"], "the chart");
  EXPECT_FALSE(params[0].contains("attachments"));
  const std::string png = params[1]["attachments"][0].get<std::string>();
  const std::string prefix = "data:image/png;filename=chart.png;base64,";
  ASSERT_TRUE(png.starts_with(prefix)) << png;
  EXPECT_EQ(Base64Decode(png.substr(prefix.size())), AllBytes());
  EXPECT_EQ(params[1]["recipient"], Json::array({"+15552223333"}));
  EXPECT_EQ(params[2]["attachments"][0],
            "data:text/csv;filename=report.csv;base64," + Base64Encode("a,b\n1,2\n"));
  EXPECT_EQ(r["message_ids"], Json::array({"1700000000001", "1700000000002", "1700000000003"}));
}

// The MIME part of `mail` whose headers contain `marker`: its headers and decoded body.
struct Part {
  std::string headers;
  std::optional<std::string> body;
};
std::optional<Part> FindPart(const std::string& mail, const std::string& boundary,
                             std::string_view marker) {
  const std::string delimiter = "--" + boundary + "\r\n";
  for (size_t at = mail.find(delimiter); at != std::string::npos;
       at = mail.find(delimiter, at + 1)) {
    const size_t start = at + delimiter.size();
    const size_t blank = mail.find("\r\n\r\n", start);
    const size_t next = mail.find("\r\n--" + boundary, start);
    if (blank == std::string::npos || next == std::string::npos || blank > next) return {};
    Part part{mail.substr(start, blank - start), std::nullopt};
    if (part.headers.find(marker) == std::string::npos) continue;
    auto body = Base64Decode(std::string_view(mail).substr(blank + 4, next - blank - 4));
    if (body) part.body = std::move(*body);
    return part;
  }
  return std::nullopt;
}

TEST_F(SendMessageMediaTest, EmailSendsOneMultipartMessageWithEveryFile) {
  FakeSmtpServer smtp("bot@example.org", "app-password");
  ::setenv("EMAIL_ADDRESS", "bot@example.org", 1);
  ::setenv("EMAIL_PASSWORD", "app-password", 1);
  WriteConfig("messaging:\n  email:\n    smtp_url: " + smtp.url() +
              "\n    allow_plaintext: true\n");
  const Json r = Call({{"target", "email:alice@example.org"},
                       {"message",
                        "Weekly report\nNumbers inside. MEDIA:report.csv MEDIA:chart.png "
                        "MEDIA:r\xC3\xA9sum\xC3\xA9.pdf"}});
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  const auto mails = smtp.mails();
  ASSERT_EQ(mails.size(), 1U);  // one message, not one per file
  const std::string& m = mails[0].data;
  EXPECT_NE(m.find("Subject: Weekly report\r\n"), std::string::npos);
  EXPECT_NE(m.find("Message-ID: " + r["message_id"].get<std::string>()), std::string::npos);
  const std::string type = "Content-Type: multipart/mixed; boundary=\"";
  const size_t at = m.find(type);
  ASSERT_NE(at, std::string::npos) << m.substr(0, 800);
  const std::string boundary =
      m.substr(at + type.size(), m.find('"', at + type.size()) - at - type.size());
  ASSERT_FALSE(boundary.empty());
  EXPECT_NE(m.find("\r\n--" + boundary + "--\r\n"), std::string::npos);

  const auto text = FindPart(m, boundary, "text/plain; charset=utf-8");
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(text->body, "Weekly report\nNumbers inside.");
  const auto csv = FindPart(m, boundary, "filename=\"report.csv\"");
  ASSERT_TRUE(csv.has_value());
  EXPECT_NE(csv->headers.find("Content-Type: text/csv; name=\"report.csv\""), std::string::npos);
  EXPECT_NE(csv->headers.find("Content-Disposition: attachment;"), std::string::npos);
  EXPECT_EQ(csv->body, "a,b\n1,2\n");
  const auto png = FindPart(m, boundary, "filename=\"chart.png\"");
  ASSERT_TRUE(png.has_value());
  EXPECT_EQ(png->body, AllBytes());
  // A name that is not ASCII travels RFC 2231-encoded.
  const auto pdf = FindPart(m, boundary, "filename*=UTF-8''r%C3%A9sum%C3%A9.pdf");
  ASSERT_TRUE(pdf.has_value()) << m;
  EXPECT_EQ(pdf->body, "%PDF-1.4\n");

  // A file alone: its name is the subject, and there is no empty text part.
  const Json alone = Call({{"target", "email:alice@example.org"}, {"message", "MEDIA:report.csv"}});
  ASSERT_EQ(alone.value("success", false), true) << alone.dump();
  ASSERT_EQ(smtp.mails().size(), 2U);
  const std::string second = smtp.mails()[1].data;  // a copy: mails() returns a new vector
  EXPECT_NE(second.find("Subject: report.csv\r\n"), std::string::npos);
  EXPECT_EQ(second.find("text/plain"), std::string::npos);
}

TEST_F(SendMessageMediaTest, SlackUploadsExternallyThenSharesInTheChannel) {
  struct Slot {
    std::string auth, filename, length;
  };
  struct Upload {
    std::string path, auth, type, body;
  };
  struct Complete {
    std::string auth, type;
    Json files;
    std::string channel, thread;
  };
  std::vector<Slot> slots;
  std::vector<Upload> uploads;
  std::vector<Complete> completes;
  std::vector<Json> posts;
  std::string upload_base;  // where getUploadURLExternal points the upload
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post("/chat.postMessage", [&](const httplib::Request& req, httplib::Response& res) {
      posts.push_back(Body(req));
      Reply(res, {{"ok", true}, {"ts", "1700000000.000100"}});
    });
    s.Post("/files.getUploadURLExternal", [&](const httplib::Request& req, httplib::Response& res) {
      slots.push_back({req.get_header_value("Authorization"), req.get_param_value("filename"),
                       req.get_param_value("length")});
      const std::string id = "F0" + std::to_string(slots.size());
      Reply(res, {{"ok", true}, {"upload_url", upload_base + "/upload/v1/" + id}, {"file_id", id}});
    });
    s.Post(R"(/upload/v1/([A-Z0-9]+))", [&](const httplib::Request& req, httplib::Response& res) {
      uploads.push_back({req.matches[1], req.get_header_value("Authorization"),
                         req.get_header_value("Content-Type"), req.body});
      res.set_content("OK - " + std::to_string(req.body.size()), "text/plain");
    });
    s.Post("/files.completeUploadExternal",
           [&](const httplib::Request& req, httplib::Response& res) {
             Complete c{req.get_header_value("Authorization"), req.get_header_value("Content-Type"),
                        Json::parse(req.get_param_value("files"), nullptr, false),
                        req.get_param_value("channel_id"), req.get_param_value("thread_ts")};
             completes.push_back(c);
             Json file = {{"id", c.files[0]["id"]}, {"title", c.files[0]["title"]}};
             // The first share is reported at once; the second finishes later (no shares yet).
             if (completes.size() == 1) {
               file["shares"] = {{"public", {{c.channel, {{{"ts", "1700000000.000200"}}}}}}};
             }
             Reply(res, {{"ok", true}, {"files", Json::array({file})}});
           });
  });
  upload_base = fake.url();
  ::setenv("SLACK_BOT_TOKEN", "xoxb-test", 1);
  WriteConfig("messaging:\n  slack:\n    base_url: " + fake.url() + "\n");
  const Json r = Call({{"target", "slack:C0ENG:1699999999.000100"},
                       {"message", "numbers MEDIA:chart.png MEDIA:report.csv"}});
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  ASSERT_EQ(posts.size(), 1U);
  EXPECT_EQ(posts[0]["text"], "numbers");
  ASSERT_EQ(slots.size(), 2U);
  EXPECT_EQ(slots[0].auth, "Bearer xoxb-test");
  EXPECT_EQ(slots[0].filename, "chart.png");
  EXPECT_EQ(slots[0].length, "256");
  EXPECT_EQ(slots[1].filename, "report.csv");
  EXPECT_EQ(slots[1].length, "8");
  ASSERT_EQ(uploads.size(), 2U);
  EXPECT_EQ(uploads[0].path, "F01");
  EXPECT_EQ(uploads[0].auth, "");  // the pre-signed URL gets no token
  EXPECT_EQ(uploads[0].body, AllBytes());
  EXPECT_EQ(uploads[1].body, "a,b\n1,2\n");
  ASSERT_EQ(completes.size(), 2U);
  EXPECT_EQ(completes[0].auth, "Bearer xoxb-test");
  EXPECT_EQ(completes[0].type, "application/x-www-form-urlencoded");
  EXPECT_EQ(completes[0].files, Json::parse(R"([{"id":"F01","title":"chart.png"}])"));
  EXPECT_EQ(completes[0].channel, "C0ENG");
  EXPECT_EQ(completes[0].thread, "1699999999.000100");
  EXPECT_EQ(r["message_ids"], Json::array({"1700000000.000100", "1700000000.000200", "F02"}));

  // An upload URL that is neither https nor the API's own origin gets no bytes.
  upload_base = "http://198.51.100.7";
  uploads.clear();
  completes.clear();
  bool ok = true;
  const Json elsewhere = Call({{"target", "slack:C0ENG"}, {"message", "MEDIA:report.csv"}}, &ok);
  EXPECT_FALSE(ok) << elsewhere.dump();
  EXPECT_NE(Error(elsewhere).find("upload_url"), std::string::npos) << elsewhere.dump();
  EXPECT_TRUE(uploads.empty());
  EXPECT_TRUE(completes.empty());
}

TEST_F(SendMessageMediaTest, SmsSendsMediaUrlsAndRefusesLocalFiles) {
  std::vector<std::string> media;
  std::string body;
  std::string auth;
  bool has_body = false;
  int requests = 0;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post("/2010-04-01/Accounts/AC123/Messages.json",
           [&](const httplib::Request& req, httplib::Response& res) {
             ++requests;
             auth = req.get_header_value("Authorization");
             has_body = req.has_param("Body");
             body = req.get_param_value("Body");
             media.clear();
             for (size_t i = 0; i < req.get_param_value_count("MediaUrl"); ++i) {
               media.push_back(req.get_param_value("MediaUrl", i));
             }
             Reply(res, {{"sid", "MM0001"}, {"status", "queued"}}, 201);
           });
  });
  ::setenv("TWILIO_ACCOUNT_SID", "AC123", 1);
  ::setenv("TWILIO_AUTH_TOKEN", "twilio-secret", 1);
  ::setenv("TWILIO_PHONE_NUMBER", "+15550009999", 1);
  WriteConfig("messaging:\n  sms:\n    base_url: " + fake.url() + "\n");
  const Json r = Call({{"target", "sms:+15551112222"},
                       {"message",
                        "**chart** MEDIA:https://cdn.example.org/c.png?sig=a%20b "
                        "MEDIA:https://cdn.example.org/d.jpg"}});
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  EXPECT_EQ(auth, "Basic " + Base64Encode("AC123:twilio-secret"));
  EXPECT_EQ(body, "chart");
  EXPECT_EQ(media, (std::vector<std::string>{"https://cdn.example.org/c.png?sig=a%20b",
                                             "https://cdn.example.org/d.jpg"}));
  EXPECT_EQ(r["message_id"], "MM0001");
  // Media alone: no Body field.
  ASSERT_EQ(
      Call({{"target", "sms:+15551112222"}, {"message", "MEDIA:https://cdn.example.org/x.gif"}})
          .value("success", false),
      true);
  EXPECT_FALSE(has_body);

  // A workspace file has no URL Twilio could fetch: refused, and the text does not go alone.
  requests = 0;
  bool ok = true;
  const Json local =
      Call({{"target", "sms:+15551112222"}, {"message", "see MEDIA:chart.png"}}, &ok);
  EXPECT_FALSE(ok) << local.dump();
  EXPECT_NE(Error(local).find("public URL"), std::string::npos) << local.dump();
  EXPECT_NE(Error(local).find("MEDIA:chart.png"), std::string::npos) << local.dump();
  // Eleven URLs: over Twilio's ten per message.
  std::string many;
  for (int i = 0; i < 11; ++i)
    many += " MEDIA:https://cdn.example.org/" + std::to_string(i) + ".png";
  const Json eleven = Call({{"target", "sms:+15551112222"}, {"message", "x" + many}}, &ok);
  EXPECT_FALSE(ok) << eleven.dump();
  EXPECT_NE(Error(eleven).find("at most 10"), std::string::npos) << eleven.dump();
  // A URL with a control character in it is refused before anything is sent.
  const Json spaced =
      Call({{"target", "sms:+15551112222"}, {"message", "MEDIA:https://\x01x"}}, &ok);
  EXPECT_FALSE(ok) << spaced.dump();
  EXPECT_EQ(requests, 0);
}

TEST_F(SendMessageMediaTest, NtfyPutsFilesWithFilenameAndAttachesUrls) {
  struct Publish {
    std::string method, topic, auth, filename, attach, message, body;
  };
  std::vector<Publish> seen;
  bool attachments_on = true;
  auto handler = [&](const httplib::Request& req, httplib::Response& res) {
    seen.push_back({req.method, req.matches[1], req.get_header_value("Authorization"),
                    req.get_header_value("Filename"), req.get_header_value("Attach"),
                    req.get_header_value("Message"), req.body});
    Json answer = {{"id", "n" + std::to_string(seen.size())}, {"event", "message"}};
    if (req.body.size() > 4096) {
      Reply(res, {{"code", 41301}, {"http", 413}, {"error", "attachment too large"}}, 413);
      return;
    }
    const bool file = !req.get_header_value("Filename").empty() && req.method == "PUT";
    const std::string url = req.get_header_value("Attach");
    if (attachments_on && (file || !url.empty())) {
      answer["attachment"] = {{"name", req.get_header_value("Filename")},
                              {"url", url.empty() ? "https://ntfy.example/file/abc" : url}};
    }
    Reply(res, answer);
  };
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post(R"(/([^/]+))", handler);
    s.Put(R"(/([^/]+))", handler);
  });
  ::setenv("NTFY_TOKEN", "tk_ntfy", 1);
  WriteConfig("messaging:\n  ntfy:\n    server: " + fake.url() + "\n    home_channel: alerts\n");
  const Json r =
      Call({{"target", "ntfy"},
            {"message", "build done MEDIA:chart.png MEDIA:https://ci.example.org/log.txt"}});
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  ASSERT_EQ(seen.size(), 3U);
  EXPECT_EQ(seen[0].method, "POST");
  EXPECT_EQ(seen[0].body, "build done");
  EXPECT_EQ(seen[1].method, "PUT");
  EXPECT_EQ(seen[1].topic, "alerts");
  EXPECT_EQ(seen[1].auth, "Bearer tk_ntfy");
  EXPECT_EQ(seen[1].filename, "chart.png");
  EXPECT_EQ(seen[1].body, AllBytes());
  EXPECT_EQ(seen[2].method, "POST");
  EXPECT_EQ(seen[2].attach, "https://ci.example.org/log.txt");
  EXPECT_EQ(seen[2].filename, "log.txt");
  EXPECT_TRUE(seen[2].body.empty());
  EXPECT_EQ(r["message_ids"], Json::array({"n1", "n2", "n3"}));

  // A name that is not ASCII travels as an RFC 2047 word.
  seen.clear();
  ASSERT_EQ(Call({{"target", "ntfy:alerts"}, {"message", "MEDIA:r\xC3\xA9sum\xC3\xA9.pdf"}})
                .value("success", false),
            true);
  ASSERT_EQ(seen.size(), 1U);
  EXPECT_EQ(seen[0].filename, "=?UTF-8?B?" + Base64Encode("r\xC3\xA9sum\xC3\xA9.pdf") + "?=");

  // Too large for the server, and a server with attachments off: errors, never "sent".
  std::ofstream(work_.path() + "/big.bin", std::ios::binary) << std::string(5000, 'z');
  bool ok = true;
  const Json big = Call({{"target", "ntfy:alerts"}, {"message", "MEDIA:big.bin"}}, &ok);
  EXPECT_FALSE(ok) << big.dump();
  EXPECT_NE(Error(big).find("413"), std::string::npos) << big.dump();
  EXPECT_NE(Error(big).find("larger than this server takes"), std::string::npos) << big.dump();
  // Over ntfy's default attachment limit: refused before any request.
  std::ofstream(work_.path() + "/huge.bin", std::ios::binary)
      << std::string((size_t{15} << 20) + 1, 'h');
  seen.clear();
  const Json huge = Call({{"target", "ntfy:alerts"}, {"message", "MEDIA:huge.bin"}}, &ok);
  EXPECT_FALSE(ok) << huge.dump();
  EXPECT_NE(Error(huge).find("ntfy takes files up to 15 MiB"), std::string::npos) << huge.dump();
  EXPECT_TRUE(seen.empty());
  attachments_on = false;
  const Json off = Call({{"target", "ntfy:alerts"}, {"message", "MEDIA:report.csv"}}, &ok);
  EXPECT_FALSE(ok) << off.dump();
  EXPECT_NE(Error(off).find("without the attachment report.csv"), std::string::npos) << off.dump();
}

TEST_F(SendMessageMediaTest, WebhookCarriesFilesAsBase64InOneJsonBody) {
  std::vector<Json> bodies;
  std::string auth;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post("/hook", [&](const httplib::Request& req, httplib::Response& res) {
      auth = req.get_header_value("Authorization");
      EXPECT_EQ(req.get_header_value("Content-Type"), "application/json");
      bodies.push_back(Body(req));
      Reply(res, {{"id", "w" + std::to_string(bodies.size())}});
    });
  });
  ::setenv("MESSAGING_WEBHOOK_URL", fake.url("/hook").c_str(), 1);
  ::setenv("MESSAGING_WEBHOOK_TOKEN", "hook-secret", 1);
  const Json r =
      Call({{"target", "webhook:ops"},
            {"message", "files MEDIA:chart.png MEDIA:report.csv MEDIA:https://x.example/y.pdf"}});
  ASSERT_EQ(r.value("success", false), true) << r.dump();
  ASSERT_EQ(bodies.size(), 1U);  // one call for the text and every file
  EXPECT_EQ(auth, "Bearer hook-secret");
  const Json& b = bodies[0];
  EXPECT_EQ(b["text"], "files");
  EXPECT_EQ(b["target"], "ops");
  EXPECT_EQ(b["source"], "talaria");
  ASSERT_EQ(b["attachments"].size(), 3U);
  EXPECT_EQ(b["attachments"][0]["filename"], "chart.png");
  EXPECT_EQ(b["attachments"][0]["content_type"], "image/png");
  EXPECT_EQ(b["attachments"][0]["size"], 256);
  EXPECT_EQ(Base64Decode(b["attachments"][0]["base64"].get<std::string>()), AllBytes());
  EXPECT_EQ(Base64Decode(b["attachments"][1]["base64"].get<std::string>()), "a,b\n1,2\n");
  EXPECT_EQ(b["attachments"][2],
            Json::parse(R"({"filename":"y.pdf","url":"https://x.example/y.pdf"})"));
  EXPECT_EQ(r["message_id"], "w1");

  // Text alone keeps the plain shape, without an attachments field.
  ASSERT_EQ(Call({{"target", "webhook:ops"}, {"message", "plain"}}).value("success", false), true);
  EXPECT_FALSE(bodies.back().contains("attachments"));
}

TEST_F(SendMessageMediaTest, PlatformsWithoutUrlMediaSayTheyTakeWorkspaceFiles) {
  int requests = 0;
  LoopbackHttpServer fake([&](httplib::Server& s) {
    s.Post(R"(/bot([^/]+)/(\w+))", [&](const httplib::Request&, httplib::Response& res) {
      ++requests;
      Reply(res, {{"ok", true}, {"result", {{"message_id", 1}}}});
    });
  });
  ::setenv("TELEGRAM_BOT_TOKEN", "123:abc", 1);
  WriteConfig("messaging:\n  telegram:\n    base_url: " + fake.url() + "\n");
  bool ok = true;
  const Json r =
      Call({{"target", "telegram:12345"}, {"message", "hi MEDIA:https://x.example/a.png"}}, &ok);
  EXPECT_FALSE(ok) << r.dump();
  EXPECT_NE(Error(r).find("not URLs"), std::string::npos) << r.dump();
  EXPECT_EQ(requests, 0);
}

}  // namespace
}  // namespace talaria::messaging
