#include "talaria/html/url_resolve.h"

#include <gtest/gtest.h>

namespace talaria::html {
namespace {

// RFC 3986 section 5.4's examples, base http://a/b/c/d;p?q.
TEST(ResolveUrl, Rfc3986NormalExamples) {
  const std::string base = "http://a/b/c/d;p?q";
  EXPECT_EQ(ResolveUrl(base, "g:h"), "g:h");
  EXPECT_EQ(ResolveUrl(base, "g"), "http://a/b/c/g");
  EXPECT_EQ(ResolveUrl(base, "./g"), "http://a/b/c/g");
  EXPECT_EQ(ResolveUrl(base, "g/"), "http://a/b/c/g/");
  EXPECT_EQ(ResolveUrl(base, "/g"), "http://a/g");
  EXPECT_EQ(ResolveUrl(base, "//g"), "http://g");
  EXPECT_EQ(ResolveUrl(base, "?y"), "http://a/b/c/d;p?y");
  EXPECT_EQ(ResolveUrl(base, "g?y"), "http://a/b/c/g?y");
  EXPECT_EQ(ResolveUrl(base, "#s"), "http://a/b/c/d;p?q#s");
  EXPECT_EQ(ResolveUrl(base, "g#s"), "http://a/b/c/g#s");
  EXPECT_EQ(ResolveUrl(base, ""), "http://a/b/c/d;p?q");
  EXPECT_EQ(ResolveUrl(base, "."), "http://a/b/c/");
  EXPECT_EQ(ResolveUrl(base, ".."), "http://a/b/");
  EXPECT_EQ(ResolveUrl(base, "../g"), "http://a/b/g");
  EXPECT_EQ(ResolveUrl(base, "../.."), "http://a/");
  EXPECT_EQ(ResolveUrl(base, "../../g"), "http://a/g");
}

TEST(ResolveUrl, Rfc3986AbnormalExamples) {
  const std::string base = "http://a/b/c/d;p?q";
  EXPECT_EQ(ResolveUrl(base, "../../../g"), "http://a/g");
  EXPECT_EQ(ResolveUrl(base, "/./g"), "http://a/g");
  EXPECT_EQ(ResolveUrl(base, "/../g"), "http://a/g");
  EXPECT_EQ(ResolveUrl(base, "g."), "http://a/b/c/g.");
  EXPECT_EQ(ResolveUrl(base, "./g/."), "http://a/b/c/g/");
  EXPECT_EQ(ResolveUrl(base, "g;x=1/../y"), "http://a/b/c/y");
}

TEST(ResolveUrl, BrowserLeniencies) {
  EXPECT_EQ(ResolveUrl("https://ex.org/a/", " \n/p\tath "), "https://ex.org/path");
  EXPECT_EQ(ResolveUrl("https://ex.org/a/", "\\x\\y"), "https://ex.org/x/y");
  EXPECT_EQ(ResolveUrl("https://ex.org", "x"), "https://ex.org/x");
  EXPECT_EQ(ResolveUrl("", "rel/x"), "rel/x");
  EXPECT_EQ(ResolveUrl("https://ex.org/a", "HTTPS://Other.org/z"), "https://Other.org/z");
}

TEST(IsUsefulLinkTarget, RefusesScriptsFragmentsAndHugeUrls) {
  EXPECT_TRUE(IsUsefulLinkTarget("/x"));
  EXPECT_FALSE(IsUsefulLinkTarget(" JavaScript:void(0)"));
  EXPECT_FALSE(IsUsefulLinkTarget("#top"));
  EXPECT_FALSE(IsUsefulLinkTarget(""));
  EXPECT_FALSE(IsUsefulLinkTarget(std::string(5000, 'a')));
}

}  // namespace
}  // namespace talaria::html
