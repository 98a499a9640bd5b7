#include "agent/model_retry.h"

#include <gtest/gtest.h>

#include <chrono>

namespace talaria::agent {
namespace {

using namespace std::chrono_literals;

TEST(Backoff, DoublesFromTheBaseUpToTheCapPlusJitter) {
  EXPECT_EQ(BackoffDelay(1, 2s, 60s, 0.0), 2s);
  EXPECT_EQ(BackoffDelay(2, 2s, 60s, 0.0), 4s);
  EXPECT_EQ(BackoffDelay(3, 2s, 60s, 0.0), 8s);
  EXPECT_EQ(BackoffDelay(10, 2s, 60s, 0.0), 60s);
  EXPECT_EQ(BackoffDelay(1, 2s, 60s, 1.0), 3s);  // + 50 %
  EXPECT_EQ(BackoffDelay(10, 2s, 60s, 1.0), 90s);
  EXPECT_EQ(BackoffDelay(1000, 2s, 60s, 0.5), 75s);  // no overflow
}

TEST(RetryAfter, ReadsSecondsAndHttpDates) {
  const auto now = std::chrono::system_clock::from_time_t(1445412480);  // 2015-10-21 07:28:00
  EXPECT_EQ(ParseRetryAfter("120", now), 120s);
  EXPECT_EQ(ParseRetryAfter(" 0.5 ", now), 500ms);
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:30 GMT", now), 30s);
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:00:00 GMT", now), 0ms);  // in the past
  EXPECT_EQ(ParseRetryAfter("soon", now), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("", now), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("1.2.3", now), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:30 GMT trailing", now), std::nullopt);
}

TEST(HttpErrors, MapToCodesAndCarryTheProvidersText) {
  EXPECT_TRUE(IsRetryableStatus(429));
  EXPECT_TRUE(IsRetryableStatus(503));
  EXPECT_FALSE(IsRetryableStatus(400));
  EXPECT_FALSE(IsRetryableStatus(404));
  Status s = StatusForHttpError(401, R"({"error":{"message":"bad key"}})", "http://x/v1");
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("bad key"), std::string::npos);
  EXPECT_NE(s.message().find("http://x/v1"), std::string::npos);
  EXPECT_EQ(StatusForHttpError(404, R"({"detail":"no such model"})", "e").code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(StatusForHttpError(500, "oops\nline two", "e").message().find('\n'), std::string::npos);
  EXPECT_EQ(ProviderErrorText(R"({"error":"plain"})"), "plain");
  EXPECT_EQ(ProviderErrorText(std::string(2000, 'x')).size(), 300u);  // a body's start
  const std::string long_message = R"({"error":{"message":")" + std::string(2000, 'm') + "\"}}";
  EXPECT_EQ(ProviderErrorText(long_message).size(), 503u);  // 500 and "..."
}

}  // namespace
}  // namespace talaria::agent
