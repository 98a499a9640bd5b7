// Secret redaction: every rule on a realistic sample, and text that must pass unchanged.
#include "talaria/base/redact.h"

#include <gtest/gtest.h>

#include <string>

namespace talaria {
namespace {

struct Case {
  std::string input;
  std::string expected;
};

TEST(RedactSecrets, EveryKnownShapeIsMasked) {
  const std::string aws = "AKIA" + std::string("IOSFODNN7EXAMPLE");
  const Case cases[] = {
      {"key sk-proj-abcdefghijklmnopqrstuvwxyz0123 end", "key sk-pr[REDACTED] end"},
      {"sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA", "sk-an[REDACTED]"},
      {"token ghp_0123456789abcdefghijklmnopqrstuvwxyz", "token ghp_[REDACTED]"},
      {"github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github_pat_[REDACTED]"},
      {"id " + aws + " ok", "id AKIA[REDACTED] ok"},
      {"xoxb-123456789012-abcdefghij", "xoxb-[REDACTED]"},
      {"AIzaSyA-1234567890abcdefghijklmnopqrstu", "AIza[REDACTED]"},
      {"sk_live_0123456789abcdefghijklmn", "sk_live_[REDACTED]"},
      {"hf_abcdefghijklmnopqrstuvwxyz0123456789", "hf_[REDACTED]"},
      {"jwt "
       "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_"
       "XgL0n3I9PlFUP0THsR8U",
       "jwt eyJ[REDACTED]"},
      {"-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----\nafter",
       "[REDACTED]\nafter"},
      {"Authorization: Bearer abcdef123456.xyz", "Authorization: Bearer [REDACTED]"},
      {"git clone https://user:hunter22@github.com/x.git",
       "git clone https://user:[REDACTED]@github.com/x.git"},
      {"OPENAI_API_KEY=abc123def456", "OPENAI_API_KEY=[REDACTED]"},
      {"export DB_PASSWORD='s3cr3t!!'", "export DB_PASSWORD='[REDACTED]'"},
      {"\"client_secret\": \"abcdefghij\"", "\"client_secret\": \"[REDACTED]\""},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(RedactSecrets(c.input), c.expected) << c.input;
    EXPECT_TRUE(ContainsSecret(c.input)) << c.input;
  }
}

TEST(RedactSecrets, OrdinaryOutputIsUnchanged) {
  const std::string texts[] = {
      "total 48\ndrwxr-xr-x  5 user user 4096 Nov 29 10:00 src\n",
      "PASSWORD_MIN_LENGTH=8 is documented in README",  // value shorter than 6? no: "8" is 1 char
      "https://example.com/path?q=1",
      "sk-short",
      "The token was rotated yesterday.",
      "",
  };
  for (const std::string& t : texts) {
    EXPECT_EQ(RedactSecrets(t), t);
    EXPECT_FALSE(ContainsSecret(t)) << t;
  }
}

TEST(RedactSecrets, LargeInputIsHandled) {
  std::string big(2'000'000, 'a');
  big += " ghp_0123456789abcdefghijklmnopqrstuvwxyz";
  const std::string out = RedactSecrets(big);
  EXPECT_EQ(out.size(), 2'000'000u + 15);
  EXPECT_EQ(out.substr(out.size() - 15), " ghp_[REDACTED]");
}

}  // namespace
}  // namespace talaria
