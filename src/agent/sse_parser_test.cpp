#include "agent/sse_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace talaria::agent {
namespace {

struct Recorder : SseParser::Handler {
  std::vector<std::pair<std::string, std::string>> events;
  Status OnEvent(std::string_view event, std::string_view data) override {
    events.emplace_back(event, data);
    return Status::Ok();
  }
};

std::vector<std::pair<std::string, std::string>> ParseInPieces(const std::string& body,
                                                               size_t piece) {
  Recorder recorder;
  SseParser parser(&recorder);
  for (size_t pos = 0; pos < body.size(); pos += piece) {
    EXPECT_TRUE(parser.Feed(std::string_view(body).substr(pos, piece)).ok());
  }
  EXPECT_TRUE(parser.Finish().ok());
  return recorder.events;
}

TEST(SseParser, SplitsEventsAtBlankLinesWhateverThePieces) {
  const std::string body =
      ": keep-alive\n\ndata: {\"a\":1}\n\nevent: error\ndata: first\ndata: second\n\n"
      "data:no-space\n\ndata: [DONE]\n\n";
  const std::vector<std::pair<std::string, std::string>> want = {
      {"", "{\"a\":1}"}, {"error", "first\nsecond"}, {"", "no-space"}, {"", "[DONE]"}};
  for (size_t piece = 1; piece <= body.size(); ++piece) {
    EXPECT_EQ(ParseInPieces(body, piece), want) << "piece " << piece;
  }
}

TEST(SseParser, AcceptsCrLfAndBareCrLineEnds) {
  const std::string crlf = "data: a\r\n\r\ndata: b\r\n\r\n";
  const std::string cr = "data: a\r\rdata: b\r\r";
  const std::vector<std::pair<std::string, std::string>> want = {{"", "a"}, {"", "b"}};
  for (size_t piece = 1; piece <= crlf.size(); ++piece) {
    EXPECT_EQ(ParseInPieces(crlf, piece), want) << "crlf piece " << piece;
  }
  for (size_t piece = 1; piece <= cr.size(); ++piece) {
    EXPECT_EQ(ParseInPieces(cr, piece), want) << "cr piece " << piece;
  }
}

TEST(SseParser, DispatchesALastEventWithoutItsBlankLine) {
  EXPECT_EQ(ParseInPieces("data: a\n\ndata: tail", 3),
            (std::vector<std::pair<std::string, std::string>>{{"", "a"}, {"", "tail"}}));
  EXPECT_EQ(ParseInPieces("data: tail\n", 4),
            (std::vector<std::pair<std::string, std::string>>{{"", "tail"}}));
}

TEST(SseParser, IgnoresIdRetryAndEventsWithoutData) {
  EXPECT_EQ(ParseInPieces("id: 7\nretry: 10\n\nevent: ping\n\ndata: x\n\n", 5),
            (std::vector<std::pair<std::string, std::string>>{{"", "x"}}));
}

TEST(SseParser, RefusesAnEventLargerThanTheLimit) {
  Recorder recorder;
  SseParser parser(&recorder, 100);
  Status status = parser.Feed("data: " + std::string(200, 'x'));
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  SseParser lines(&recorder, 100);
  Status joined = Status::Ok();
  for (int i = 0; i < 20 && joined.ok(); ++i) joined = lines.Feed("data: 0123456789\n");
  EXPECT_EQ(joined.code(), StatusCode::kResourceExhausted);
}

TEST(SseParser, StopsWhenTheHandlerFails) {
  struct Failing : SseParser::Handler {
    Status OnEvent(std::string_view, std::string_view) override {
      return InvalidArgumentError("bad");
    }
  } failing;
  SseParser parser(&failing);
  EXPECT_EQ(parser.Feed("data: x\n\n").code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace talaria::agent
