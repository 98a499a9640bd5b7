#include "talaria/html/main_content.h"

#include <gtest/gtest.h>

#include <string>

namespace talaria::html {
namespace {

std::string Whole(const std::string& body, const std::string& base = "") {
  ExtractOptions options;
  options.main_content = false;
  options.base_url = base;
  return ExtractMainContent("<html><body>" + body + "</body></html>", options).markdown;
}

TEST(MarkdownRendering, HeadingsAndParagraphs) {
  EXPECT_EQ(Whole("<h1>Top</h1><p>One  two\nthree</p><h3>Sub <em>part</em></h3><p>Four</p>"),
            "# Top\n\nOne two three\n\n### Sub *part*\n\nFour\n");
}

TEST(MarkdownRendering, EmphasisCodeAndStrikeKeepSpacesOutside) {
  EXPECT_EQ(Whole("<p>a<b> bold </b>b <i>it</i> <code>x &lt; y</code> <del>old</del></p>"),
            "a **bold** b *it* `x < y` ~~old~~\n");
}

TEST(MarkdownRendering, NestedLists) {
  EXPECT_EQ(Whole("<ul><li>one<ul><li>inner</li></ul></li><li>two</li></ul>"
                  "<ol start=\"3\"><li>three</li><li>four</li></ol>"),
            "- one\n  - inner\n- two\n\n3. three\n4. four\n");
}

// Text a page puts straight into a list, outside any <li> (an HTML5 parser keeps it there), is
// part of the page: before, between and after the items.
TEST(MarkdownRendering, TextDirectlyInsideAListIsWritten) {
  EXPECT_EQ(Whole("<ul>Choose one:<li>red</li><li>blue</li>or neither.</ul><p>After.</p>"),
            "Choose one:\n- red\n- blue\n\nor neither.\n\nAfter.\n");
  EXPECT_EQ(Whole("<ol><li>first</li>then <b>carefully</b><li>second</li></ol>"),
            "1. first\nthen **carefully**\n2. second\n");
}

TEST(MarkdownRendering, PipeTableWithHeaderAndEscapedPipes) {
  EXPECT_EQ(Whole("<table><thead><tr><th>Op</th><th>Cost</th></tr></thead>"
                  "<tbody><tr><td>a|b</td><td>O(1)</td></tr></tbody></table>"),
            "| Op | Cost |\n| --- | --- |\n| a\\|b | O(1) |\n");
}

TEST(MarkdownRendering, LayoutTableBecomesBlocks) {
  EXPECT_EQ(Whole("<table><tr><td><p>only cell</p></td></tr></table>"), "only cell\n");
}

TEST(MarkdownRendering, CodeBlockKeepsWhitespaceAndLanguage) {
  EXPECT_EQ(Whole("<pre><code class=\"language-python\">def f():\n    return 1\n</code></pre>"),
            "```python\ndef f():\n    return 1\n```\n");
  // A fence longer than any backtick run inside.
  EXPECT_EQ(Whole("<pre>a ``` b</pre>"), "````\na ``` b\n````\n");
}

TEST(MarkdownRendering, CodeLanguageFromWrapperAndNoPermalinkSymbols) {
  EXPECT_EQ(Whole("<h2>Usage<a class=\"headerlink\" href=\"#usage\">\xc2\xb6</a></h2>"
                  "<div class=\"highlight-python notranslate\"><div class=\"highlight\">"
                  "<pre>x = 1</pre></div></div>"),
            "## Usage\n\n```python\nx = 1\n```\n");
}

TEST(MarkdownRendering, LineBreaksRulesAndDefinitionLists) {
  EXPECT_EQ(Whole("<p>a<br>b</p><hr><dl><dt>Term</dt><dd>Def</dd></dl>"),
            "a\nb\n\n---\n\n**Term**\n\nDef\n");
}

TEST(MarkdownRendering, Blockquote) {
  EXPECT_EQ(Whole("<blockquote><p>one</p><p>two</p></blockquote><p>after</p>"),
            "> one\n>\n> two\n\nafter\n");
}

TEST(MarkdownRendering, LinksAndImagesResolveAgainstBase) {
  EXPECT_EQ(Whole("<p><a href=\"../b/c?x=1#f\">link</a> <img src=\"/i.png\" alt=\"pic\"></p>",
                  "https://ex.org/a/d/page.html"),
            "[link](https://ex.org/a/b/c?x=1#f) ![pic](https://ex.org/i.png)\n");
  EXPECT_EQ(Whole("<p><a href=\"javascript:alert(1)\">js</a> <a href=\"#top\">top</a></p>"),
            "js top\n");
  EXPECT_EQ(Whole("<p><img src=\"data:image/png;base64,AAAA\" alt=\"chart\"></p>"),
            "[image: chart]\n");
}

TEST(MarkdownRendering, BaseElementWins) {
  ExtractOptions options;
  options.main_content = false;
  options.base_url = "https://ex.org/dir/page";
  const ExtractedPage page = ExtractMainContent(
      "<html><head><base href=\"/other/\"></head><body><a href=\"x\">x</a></body></html>", options);
  EXPECT_EQ(page.markdown, "[x](https://ex.org/other/x)\n");
}

TEST(MarkdownRendering, ScriptsStylesHiddenAndControlsNeverRendered) {
  EXPECT_EQ(Whole("<p>seen</p><script>var x=1</script><style>p{}</style>"
                  "<div hidden>h1</div><div style=\"display: none\">h2</div>"
                  "<div aria-hidden=\"true\">h3</div><button>Click</button><p>end</p>"),
            "seen\n\nend\n");
}

TEST(Title, PrefersOgTitleThenTitleThenH1) {
  ExtractOptions options;
  EXPECT_EQ(ExtractMainContent(
                "<title> A  page </title><meta property=\"og:title\" content=\"OG\">", options)
                .title,
            "OG");
  EXPECT_EQ(ExtractMainContent("<title> A\n page </title><p>x</p>", options).title, "A page");
  EXPECT_EQ(ExtractMainContent("<body><h1>Heading <b>one</b></h1></body>", options).title,
            "Heading one");
}

std::string Paragraphs(const std::string& word, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    out += "<p>" + word + " sentence number " + std::to_string(i) +
           ", which is long enough to count as prose, with commas, and more words here.</p>";
  }
  return out;
}

TEST(MainContent, DropsNavigationSidebarCommentsAndCookieBanner) {
  const std::string html =
      "<html><head><title>Story</title></head><body>"
      "<div class=\"cookie-banner\"><p>We use cookies on this site, accept them please.</p></div>"
      "<header><nav><a href=\"/\">Home</a> <a href=\"/news\">News</a></nav></header>"
      "<div class=\"layout\"><div class=\"story-body\">" +
      Paragraphs("Article", 6) +
      "<div class=\"share-bar\"><a href=\"/s\">Share on social media</a></div></div>"
      "<div class=\"sidebar\"><h3>Popular</h3><ul><li><a href=\"/p\">Popular link one</a></li>"
      "</ul></div></div>"
      "<section id=\"comments\"><p>Great article, thanks a lot, I learned so much from "
      "it.</p></section>"
      "<footer><p>Copyright 2026 Example Corp, all rights reserved worldwide.</p></footer>"
      "</body></html>";
  const std::string md = ExtractMainContent(html, {}).markdown;
  EXPECT_NE(md.find("Article sentence number 0"), std::string::npos) << md;
  EXPECT_NE(md.find("Article sentence number 5"), std::string::npos) << md;
  for (const char* boilerplate :
       {"cookies", "Home", "Share on social", "Popular link", "Great article", "Copyright"}) {
    EXPECT_EQ(md.find(boilerplate), std::string::npos) << boilerplate << "\n" << md;
  }
}

TEST(MainContent, PrefersProseOverLinkHeavyBlocks) {
  std::string links = "<div class=\"box\">";
  for (int i = 0; i < 30; ++i)
    links += "<p><a href=\"/l\">Some link text number " + std::to_string(i) +
             ", with commas, yes</a></p>";
  links += "</div>";
  const std::string md =
      ExtractMainContent("<body>" + links + "<div>" + Paragraphs("Prose", 4) + "</div></body>", {})
          .markdown;
  EXPECT_NE(md.find("Prose sentence number 3"), std::string::npos) << md;
  EXPECT_EQ(md.find("Some link text"), std::string::npos) << md;
}

TEST(MainContent, ClassWordOnAWrapperDoesNotDropThePage) {
  const std::string md =
      ExtractMainContent(
          "<body><div class=\"page has-sidebar\">" + Paragraphs("Kept", 5) + "</div></body>", {})
          .markdown;
  EXPECT_NE(md.find("Kept sentence number 4"), std::string::npos) << md;
}

TEST(MainContent, FallsBackToTheBodyWhenNothingScores) {
  const std::string md =
      ExtractMainContent("<body><span>short</span> <b>words</b><br>only here</body>", {}).markdown;
  EXPECT_EQ(md, "short **words**\nonly here\n");
}

TEST(MainContent, TitleHeadingAboveTheContentIsKept) {
  const std::string html =
      "<html><head><title>Big news | Site</title></head><body>"
      "<header><h1>Big news</h1></header><div>" +
      Paragraphs("Body", 4) + "</div></body></html>";
  const std::string md = ExtractMainContent(html, {}).markdown;
  EXPECT_EQ(md.rfind("# Big news\n\n", 0), 0u) << md;
}

TEST(MainContent, EmptyAndNonHtmlInput) {
  EXPECT_EQ(ExtractMainContent("", {}).markdown, "");
  EXPECT_EQ(ExtractMainContent("just text", {}).markdown, "just text\n");
  EXPECT_EQ(ExtractMainContent(std::string("\0\xff\xfe<", 4), {}).title, "");
}

}  // namespace
}  // namespace talaria::html
