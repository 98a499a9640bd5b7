// Hostile HTML: every input gives a page, in bounded time and memory, without a crash. The
// loops have fixed counts and seeds; the sizes are those the issue names (100,000 levels of
// nesting, 10 MB attributes). No timing assertions: a quadratic parse would show up as the
// test's ctest timeout, not as a flaky comparison.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "html/nesting_limit.h"
#include "talaria/html/main_content.h"

namespace talaria::html {
namespace {

std::string Repeat(std::string_view piece, size_t n) {
  std::string out;
  out.reserve(piece.size() * n);
  for (size_t i = 0; i < n; ++i) out += piece;
  return out;
}

void ExtractBothModes(const std::string& html) {
  ExtractOptions options;
  options.base_url = "https://ex.org/a/";
  (void)ExtractMainContent(html, options);
  options.main_content = false;
  (void)ExtractMainContent(html, options);
}

TEST(HostileInput, DeepNestingOfEveryKindIsCutNotQuadratic) {
  for (const char* open : {"<div>", "<b>", "<span>", "<blockquote>", "<ul><li>", "<table><tr><td>",
                           "<a href=x>", "<i><b>", "<svg><g>", "<div/>"}) {
    const std::string html = "<p>before</p>" + Repeat(open, 100'000) + "deep text";
    EXPECT_LT(ParseablePrefixLength(html), html.size()) << open;
    ExtractBothModes(html);
  }
}

TEST(HostileInput, NestingLimitLeavesOrdinaryPagesWhole) {
  const std::string page = "<html><body>" + Repeat("<p>para<li>item<td>cell<br><img src=x>", 5000) +
                           "<script>" + Repeat("<div>", 5000) + "</script>" +
                           Repeat("<div>x</div>", 5000) + "</body></html>";
  EXPECT_EQ(ParseablePrefixLength(page), page.size());
}

TEST(HostileInput, ManySiblingsUnderADeepStackStayBounded) {
  // The parser's work is depth times tags: 300 levels, then 200,000 tags.
  const std::string html = Repeat("<div>", 300) + Repeat("<span>x</span>", 200'000);
  EXPECT_LT(ParseablePrefixLength(html), html.size());
  ExtractBothModes(html);
}

TEST(HostileInput, TenMegabyteAttributesAndText) {
  const std::string big(10u << 20, 'a');
  ExtractOptions options;
  options.base_url = "https://ex.org/";
  const std::string inputs[] = {
      "<div class=\"" + big + "\" id=\"" + big + "\"><p>text</p></div>",
      "<a href=\"/" + big + "\">link</a><img src=\"" + big + "\" alt=\"" + big + "\">",
      "<p style=\"" + big + "\">x</p><pre class=\"language-" + big + "\">code</pre>",
      "<p>" + big + "</p>",
      "<div class=\"" + big,  // unterminated attribute
  };
  for (const std::string& html : inputs) (void)ExtractMainContent(html, options);
  const ExtractedPage page =
      ExtractMainContent("<title>" + big + "</title><p>body text</p>", options);
  EXPECT_LE(page.title.size(), 1000u);
  // Over-long URLs are not written as links; the text stays.
  EXPECT_EQ(ExtractMainContent(inputs[1], options).markdown.find("](https"), std::string::npos);
}

TEST(HostileInput, ATagWithAHundredThousandAttributesKeepsTheFirst) {
  // libgumbo compares every attribute name with all those before it in the tag: 100,000 of
  // them were 5 billion compares (about 17 s). The parse reads the first 256.
  std::string tag = "<p class=\"first\"";
  for (int i = 0; i < 100'000; ++i) tag += " a" + std::to_string(i);
  for (const std::string& html :
       {tag + ">text of the paragraph</p>", tag + " class=\"last\">text of the paragraph</p>",
        "<p>text of the paragraph</p" + tag.substr(2) + ">"}) {
    ExtractOptions options;
    options.main_content = false;
    EXPECT_NE(ExtractMainContent(html, options).markdown.find("text of the paragraph"),
              std::string::npos);
  }
}

TEST(HostileInput, ManyCommentsAreReadOnce) {
  // Each comment's end used to be looked for to the end of the page (the "--!>" spelling):
  // 150,000 comments were 200 GB of searching.
  const std::string html = Repeat("<!-- c --><p>x</p>", 150'000) + "<p>last paragraph text</p>";
  ExtractOptions options;
  options.main_content = false;
  EXPECT_NE(ExtractMainContent(html, options).markdown.find("last paragraph text"),
            std::string::npos);
}

TEST(HostileInput, BrokenMarkupFragments) {
  for (const char* html :
       {"<", "</", "<!--", "<!DOCTYPE", "<table><td>x", "</p></p></p>", "<pre>",
        "<a href=", "<ul><li><ol><li>", "<table><tr><td><table>",
        "<p><table><tr><th>a<th>b<tr><td>1<td>2</table>", "<svg><p>x", "<math><mi>x</mi></math>",
        "<td colspan=99999999>x", "<ol start=-9999999999999>"}) {
    ExtractBothModes(html);
  }
}

TEST(HostileInput, HugeTables) {
  ExtractBothModes("<table><tr>" + Repeat("<td>c</td>", 100'000) + "</tr></table>");
  ExtractBothModes("<table>" + Repeat("<tr><td>a</td><td>b</td></tr>", 50'000) + "</table>");
}

TEST(HostileInput, RandomBytes) {
  std::mt19937 rng(42);
  const std::string alphabet = "<>/=\"' abcdiv-p!\n&;#x\xe4\xb8\xad\xff";
  for (int round = 0; round < 300; ++round) {
    std::string html;
    const size_t n = rng() % 4000;
    for (size_t i = 0; i < n; ++i) html += alphabet[rng() % alphabet.size()];
    ExtractBothModes(html);
  }
}

TEST(HostileInput, TruncationsOfEveryTestPage) {
  const std::filesystem::path dir =
      std::filesystem::path(TALARIA_SOURCE_DIR) / "tests/data/html_pages";
  std::mt19937 rng(7);
  int pages = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".html") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    const std::string html = s.str();
    ++pages;
    for (int cut = 0; cut < 25; ++cut) {
      ExtractBothModes(html.substr(0, rng() % (html.size() + 1)));
    }
    // Every page also survives a random slice from its middle.
    const size_t from = rng() % (html.size() + 1);
    ExtractBothModes(html.substr(from, rng() % (html.size() - from + 1)));
  }
  EXPECT_GE(pages, 30);
}

}  // namespace
}  // namespace talaria::html
