// Parsing with text runs, raw text and attribute values stood in for by markers (and
// indentation shortened) must give the tree libgumbo builds from the text as written: every
// node, tag, namespace, attribute and text compared (whitespace runs outside <pre> as one
// space), on the benchmark's pages, on the real pages, on markup chosen to trip the marker
// scan, and on random mixes of it.
#include "html/text_runs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "html/gumbo_util.h"
#include "support/real_pages.h"

namespace talaria::html {
namespace {

// Text with its whitespace runs as one space, as they read outside <pre>.
std::string CollapsedForComparison(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
    if (!space) {
      out += c;
    } else if (out.empty() || out.back() != ' ') {
      out += ' ';
    }
  }
  return out;
}

// The tree in a form that two parses can be compared by.
void Serialize(const GumboNode* node, int depth, std::string& out, bool in_pre = false) {
  out.append(static_cast<size_t>(depth), ' ');
  switch (node->type) {
    case GUMBO_NODE_DOCUMENT:
      out += "#document ";
      out += node->v.document.has_doctype ? node->v.document.name : "";
      out += '\n';
      for (unsigned i = 0; i < node->v.document.children.length; ++i) {
        Serialize(static_cast<const GumboNode*>(node->v.document.children.data[i]), depth + 1, out,
                  in_pre);
      }
      return;
    case GUMBO_NODE_ELEMENT:
    case GUMBO_NODE_TEMPLATE: {
      const GumboElement& e = node->v.element;
      out += "<" + std::to_string(e.tag_namespace) + ":" + std::to_string(e.tag);
      if (e.tag == GUMBO_TAG_UNKNOWN) {
        GumboStringPiece piece = e.original_tag;
        gumbo_tag_from_original_text(&piece);
        out += "=" + std::string(piece.data, piece.length);
      }
      for (unsigned i = 0; i < e.attributes.length; ++i) {
        const auto* a = static_cast<const GumboAttribute*>(e.attributes.data[i]);
        out += " " + std::string(a->name) + "=[" + a->value + "]";
      }
      out += ">\n";
      const bool pre = in_pre || (e.tag_namespace == GUMBO_NAMESPACE_HTML &&
                                  (e.tag == GUMBO_TAG_PRE || e.tag == GUMBO_TAG_LISTING));
      for (unsigned i = 0; i < e.children.length; ++i) {
        Serialize(static_cast<const GumboNode*>(e.children.data[i]), depth + 1, out, pre);
      }
      return;
    }
    case GUMBO_NODE_TEXT:
    case GUMBO_NODE_WHITESPACE:
      out += "#" + std::to_string(node->type) + "[" +
             (in_pre ? std::string(node->v.text.text) : CollapsedForComparison(node->v.text.text)) +
             "]\n";
      return;
    default:
      out += "#" + std::to_string(node->type) + "[" + node->v.text.text + "]\n";
      return;
  }
}

// libgumbo's parse of the text as written, with its parse errors recorded (ParsedHtml records
// none; libgumbo 0.10.1 then keeps a repeated attribute's name in its buffer and prefixes it
// to the next attribute's, which the marking pass prevents by leaving the repeat out).
std::string PlainTree(std::string_view html) {
  GumboOptions options = kGumboDefaultOptions;
  GumboOutput* output = gumbo_parse_with_options(&options, html.data(), html.size());
  std::string out;
  Serialize(output->root, 0, out);
  gumbo_destroy_output(&options, output);
  return out;
}

std::string MarkedTree(std::string_view html) {
  const ParsedHtml parsed(html);
  std::string out;
  Serialize(parsed.root(), 0, out);
  return out;
}

// Where two serialized trees first differ, with a little of each: a whole real page's tree is
// too long to read in a failure message.
std::string FirstTreeDifference(const std::string& a, const std::string& b) {
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  if (ia == a.end() && ib == b.end()) return {};
  const size_t at = static_cast<size_t>(ia - a.begin());
  const size_t from = at < 200 ? 0 : at - 200;
  return "at byte " + std::to_string(at) + "\nmarked: ..." + a.substr(from, 400) + "\nplain:  ..." +
         b.substr(from, 400);
}

// Whether marking then restoring gives back a tree (false: ParsedHtml fell back).
bool RestoresWithoutFallback(std::string_view html) {
  MarkedHtml marked = MarkTextRuns(html);
  if (marked.runs.empty()) return false;
  GumboArena arena;
  GumboOptions options = kGumboDefaultOptions;
  options.allocator = &GumboArena::Allocate;
  options.deallocator = &GumboArena::Deallocate;
  options.userdata = &arena;
  GumboOutput* output = gumbo_parse_with_options(&options, marked.html.data(), marked.html.size());
  return RestoreTextRuns(output->root, marked.runs, arena);
}

const std::vector<std::string>& TrickyFragments() {
  static const std::vector<std::string> kFragments = {
      "<p>An ordinary paragraph of text.</p>",
      "<table>stray text in a table<tr><td>cell text here</td></tr>more stray</table>",
      "<table><tr><td>a</td></tr>   \n  </table>",
      "<pre>\nleading newline kept once</pre>",
      "<textarea>\ntext area content &amp; more</textarea>",
      "<title>Title text here</title>",
      "<script>var a = '<b>not a tag</b>'; if (a < b) {}</script>",
      "<script><!--<script>document.write('x')</script>still script text</script>",
      "<style>p > a { color: red }</style>",
      "<svg><style>svg style text</style><title>svg title text</title></svg>",
      "<svg><style><a title=\"</style>Hello marked run\">x</a></style></svg>",
      "<svg><style><a title=\"</style>Hello marked run <b>\">x</a></style></svg>",
      "<svg><![CDATA[ cdata text in svg ]]></svg>",
      "<![CDATA[ not cdata in html > after the bogus comment ]]>",
      "<!-- a comment with text -- inside --> after the comment",
      "<!--> abrupt comment text after",
      "<!---> also abrupt text after",
      "<!-- ends with bang --!> text after bang comment",
      "<!-- unterminated comment text",
      "<a title='quoted > still attribute'>link text here</a>",
      "<a title=unquoted>text after unquoted attribute</a>",
      "<a \"odd\"=\"value\" '=x >text after odd names</a>",
      "<img alt=\"a\"b='c' =x/>after img text",
      "</ p>bogus end tag text",
      "<?xml version='1.0'?>text after processing instruction",
      "</>text after empty end tag",
      "a < b and c > d text with brackets",
      "text &amp; entities &lt; &#65; &copy done",
      "line one\r\nline two\rline three",
      std::string("nul\0byte inside a text run", 26),
      "c1 \xc2\x85 control inside text",
      "invalid \xff\xfe utf8 bytes in text",
      "surrogate \xed\xa0\x80 bytes in text",
      "CJK text\xef\xbc\x8c\xe4\xb8\xad\xe6\x96\x87\xe3\x80\x82 with fullwidth comma",
      "vertical\vtab\x01control",
      "<select><option>first option text<option>second option text</select>",
      "<template><p>template text here</p></template>",
      "<noscript><p>noscript paragraph text</p></noscript>",
      "<p><b><i>misnested formatting</b> text</i> tail</p>",
      "<a href=x>outer link <a href=y>inner link text</a></a>",
      "<ul><li>one item<li>two item text</ul>",
      "<frameset><frame>text in frameset</frameset>",
      "<math><mi>x</mi><mtext>math text here</mtext></math>",
      "<svg><foreignObject><p>html in svg text</p></foreignObject></svg>",
      "<plaintext>everything <b>after</b> is text",
      "-- dashes around text --",
      "text ending in bang!",
      "]] brackets around text ]]",
      "<xmp><b>xmp raw text</b></xmp>",
      "<iframe>iframe raw text</iframe>",
      "<p>unclosed paragraph text",
      "</body>text after body end",
      "</html>  text after html end",
      "<head>text in head</head>",
      // Attribute values and raw text, which are marked too.
      "<a href=\"https://example.org/a/long/path?with=query\">link with a long href</a>",
      "<div class=\"container main-content\" data-x='single quoted long value'>div text</div>",
      "<a class=\"duplicate-attribute-one\" CLASS=\"duplicate-attribute-two\">dup</a>",
      "<a class=short class=\"duplicate-after-unquoted\">dup after unquoted</a>",
      "<div class=\"a\" class=\"b\" id=\"kept-after-a-repeat\">repeat</div>",
      "<p hidden HIDDEN title=\"a long title after the repeat\" hidden=x>repeat</p>",
      "<div class=\"a-long-class-value-here\" class id=\"kept-after-a-bare-repeat\">x</div>",
      "<a x x=>empty value ending the tag</a><a y=\"1\"y=2 y>",
      "<svg><g x/x><rect/></g><circle r=\"1\"/r=\"2\"/>after svg</svg>",
      "<body class=\"b1\" class=\"b2\" id=\"body-id-after-repeat\">body repeat</body>",
      "</p class=a class=b id=c>end tag repeat",
      // A script's escaped parts: the scan must end it where the tokenizer does.
      "<script><!--<script>x</script><a class=a class=b id=c>still script</script><b x x>",
      "<script><!-- a --> <b x x> </script><i y=1 y=2>after the script",
      "<script><!--<script>--></script><i y y>after a double escape left by -->",
      "<script><!--<SCRIPT/></script x x>still</scripts></SCRIPT\n>after<b z z>",
      "<script><!--<scripts></script><b w w>after a near double escape",
      "<script><!-- -<script>--!></script> -></script><s v v>after dashes",
      // Three alike formatting elements: the fourth pushes the first off the list.
      "<div><b class=\"a-long-class-value-here\"><b class=\"a-long-class-value-here\">"
      "<b class=\"a-long-class-value-here\"><b class=\"a-long-class-value-here\"></div>"
      "<p>reconstructed formatting</p>",
      "<p><b class=\"bold-class-that-is-long\">bold text <p>reopened in a new paragraph</b>",
      "<i title=\"an italic title long enough\"><div>block inside italic</div></i>",
      "<input type=\"hidden-and-a-long-value\" value=\"a long value for the input\">",
      "<table><input type=\"hidden\" name=\"a-long-input-name-value\"><tr><td>x</td></tr></table>",
      "</p class=\"attribute on an end tag long\">text after end tag attribute",
      "<body class=\"second body tag with long class\">text after body tag</body>",
      "<html lang=\"en-US-long-language-tag-x\" data-theme=\"a long theme value\">",
      "<svg viewBox=\"0 0 1000 1000 long value\"><path d=\"M0 0 L10 10 L20 20 Z\"/></svg>",
      "<font color=\"red-and-a-long-value\" face=\"a long face name here\">font text</font>",
      "<math><annotation-xml encoding=\"text/html-long-value\"><p>x</p></annotation-xml></math>",
      "<img alt='value with \"double\" quotes inside it' src=\"an-image-source.png\">",
      "<a title=\"value with &amp; a reference inside it\">reference in value</a>",
      "<a title=\"value with <angle> brackets inside it\">brackets in value</a>",
      "<a title=\"value with\r\ncarriage return inside\">carriage return in value</a>",
      "<a title=\"value with a \xef\xbf\xbe noncharacter inside\">noncharacter</a>",
      "<form action=\"/a/long/form/action/url\"><form action=\"/a/second/ignored/form\">"
      "nested form text</form></form>",
      "<frameset><frame src=\"a-long-frame-source-url.html\"></frameset>",
      "<select><option value=\"a long option value here\">option text</option></select>",
      "<template><a href=\"a-long-link-in-a-template\">template link</a></template>",
      "<td class=\"a cell outside any table here\">stray cell</td>",
      "<a title=\"unterminated value that runs to the end",
      "<script>if (a < b && c > d) { x = \"</p>\"; }</script>",
      "<script type=\"text/javascript\">var longer = 'script content here';</script>",
      "<script>var s = '<!-- not a comment'; </script> still script? </script>",
      // Whitespace between tags, shortened outside <pre> and <listing> only.
      "<ul>\n    <li>one</li>\n    <li>two</li>\n</ul>   \t  ",
      "<pre>\n  <b>kept</b>\n    <i>indent</i>\n</pre>",
      "<PRE><span>a</span>   <span>b</span></PRE>   <span>after pre</span>",
      "<listing>\n   <b>x</b>   </listing>",
      "<pre>  <b>a</b>  </listing>  <b>still pre</b>  </pre>",
      "<pre><pre>  <b>nested</b>  </pre>  <b>still pre?</b>  </pre>",
      "</pre>   <b>end tag without a pre</b>   ",
      "<table>   <tr>   <td>cell</td>   </tr>   </table>",
      "<p>a < b    <b>text with a bracket</b></p>",
      "<SCRIPT>var upper = 'case tags here';</SCRIPT >",
      "<script>unterminated script content here",
      "<style>.a > .b { content: \"&amp;\" }</style>",
      "<style>  \n  </style><style>short</style>",
      "<svg><script>var a = 1 < 2 && 3 > 2;</script></svg>",
      "<svg><style>svg style text with < less than</style></svg>",
      "<math><style>math style & text</style></math>",
      "<iframe src=\"https://example.org/embedded/frame\">iframe <b>raw</b> content</iframe>",
      "<noembed>noembed <b>raw</b> content</noembed>",
      "<noframes>noframes <b>raw</b> content</noframes>",
      "<table><script>var inTable = a < b;</script><tr><td>c</td></tr></table>",
      std::string("<script>nul \0 inside the script text</script>", 45),
  };
  return kFragments;
}

TEST(TextRuns, TheBenchmarkPagesParseToTheSameTree) {
  const std::filesystem::path dir =
      std::filesystem::path(TALARIA_SOURCE_DIR) / "tests/data/html_pages";
  int pages = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".html") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string html = buffer.str();
    EXPECT_TRUE(RestoresWithoutFallback(html)) << entry.path();
    EXPECT_EQ(MarkedTree(html), PlainTree(html)) << entry.path();
    ++pages;
  }
  EXPECT_GT(pages, 20);
}

// Real pages (tests/data/real_pages): inline scripts, styles, SVG, long attribute values and
// whatever else sites write.
TEST(TextRuns, TheRealPagesParseToTheSameTree) {
  const std::vector<test_support::RealPage> pages =
      test_support::LoadRealPages(test_support::RealPagesDir());
  ASSERT_GE(pages.size(), 60u);
  int restored = 0;
  for (const test_support::RealPage& page : pages) {
    const std::string html = test_support::RealPageUtf8(page);
    restored += RestoresWithoutFallback(html) ? 1 : 0;
    EXPECT_EQ(FirstTreeDifference(MarkedTree(html), PlainTree(html)), "") << page.name;
  }
  // A page may fall back to the plain parse (then the markers bought nothing): only a few do.
  EXPECT_GE(restored, static_cast<int>(pages.size()) - 3);
}

TEST(TextRuns, TrickyMarkupParsesToTheSameTree) {
  for (const std::string& fragment : TrickyFragments()) {
    for (const std::string& html :
         {fragment, "<!DOCTYPE html><html><head><title>T</title></head><body>" + fragment +
                        "<p>Trailing paragraph text.</p></body></html>"}) {
      EXPECT_EQ(MarkedTree(html), PlainTree(html)) << html;
    }
  }
}

TEST(TextRuns, RandomMixesParseToTheSameTree) {
  const auto& fragments = TrickyFragments();
  std::mt19937 rng(0x7E47);
  std::uniform_int_distribution<size_t> pick(0, fragments.size() - 1);
  std::uniform_int_distribution<int> count(1, 8);
  for (int round = 0; round < 3000; ++round) {
    std::string html;
    for (int k = count(rng); k > 0; --k) html += fragments[pick(rng)];
    ASSERT_EQ(MarkedTree(html), PlainTree(html)) << html;
  }
}

TEST(TextRuns, AMarkerInsideAnAttributeFallsBackToThePlainParse) {
  // In <svg>, <style> is not raw text: the scan (which treats it as raw) ends it early and
  // marks text that libgumbo reads as an attribute value.
  const std::string html =
      "<svg><style><a title=\"</style>Hello marked run <b>\">x</a></style></svg>";
  EXPECT_FALSE(MarkTextRuns(html).runs.empty());
  EXPECT_FALSE(RestoresWithoutFallback(html));
  EXPECT_EQ(MarkedTree(html), PlainTree(html));
}

// The first element named `tag` in document order, or null.
const GumboNode* FirstElementTagged(const GumboNode* node, GumboTag tag) {
  if (IsElement(node) && node->v.element.tag == tag) return node;
  if (node->type != GUMBO_NODE_DOCUMENT && !IsElement(node)) return nullptr;
  const GumboVector& children = ChildrenOf(node);
  for (unsigned i = 0; i < children.length; ++i) {
    if (const GumboNode* found = FirstElementTagged(ChildAt(node, i), tag)) return found;
  }
  return nullptr;
}

// libgumbo 0.10.1 with no parse errors recorded keeps a repeated attribute's name in its
// buffer when the repeat has no value, and prefixes it to the next name ("classid").
TEST(TextRuns, ARepeatedAttributeIsLeftOutAndTheNextOneKept) {
  const std::string tag = "<div class=\"first-class\" class id=\"x\">";
  for (const std::string& html : {
           tag + "Some text of the division</div>",
           // Nothing marked: the page holds a private-use character.
           tag + "icon \xee\x80\x80 in the division</div>",
           // The markers do not come back (see below): the plain parse drops the repeat too.
           "<svg><style><a title=\"</style>Hello marked run <b>\">x</a></style></svg>" + tag +
               "after the fallback</div>",
           std::string("<div class=\"first-class\" CLASS=\"second-class\" class id=x>text</div>"),
       }) {
    const ParsedHtml parsed(html);
    const GumboNode* div = FirstElementTagged(parsed.root(), GUMBO_TAG_DIV);
    ASSERT_NE(div, nullptr) << html;
    EXPECT_EQ(AttributeOf(div, "id"), "x") << html;
    EXPECT_EQ(AttributeOf(div, "class"), "first-class") << html;
    EXPECT_EQ(div->v.element.attributes.length, 2u) << html;
    EXPECT_EQ(MarkedTree(html), PlainTree(html)) << html;
  }
}

TEST(TextRuns, ADocumentWithPrivateUseCharactersIsNotMarked) {
  EXPECT_TRUE(MarkTextRuns("<p>icon \xee\x80\x80 in a long paragraph</p>").runs.empty());
  EXPECT_TRUE(MarkTextRuns("<p>icon &#xE000; in a long paragraph</p>").runs.empty());
  EXPECT_TRUE(MarkTextRuns("<p>icon &#57344; in a long paragraph</p>").runs.empty());
  EXPECT_FALSE(MarkTextRuns("<p>fullwidth \xef\xbc\x8c in a long paragraph</p>").runs.empty());
}

TEST(TextRuns, RunsBeyondTheBmpUsePlaneFifteenMarkers) {
  std::string html;
  for (int i = 0; i < 7000; ++i) html += "<p>paragraph number " + std::to_string(i) + "</p>";
  const MarkedHtml marked = MarkTextRuns(html);
  EXPECT_EQ(marked.runs.size(), 7000u);
  EXPECT_EQ(MarkerCodePoint(0xF900 - 0xE000), U'\U000F0000');
  EXPECT_TRUE(RestoresWithoutFallback(html));
  EXPECT_EQ(MarkedTree(html), PlainTree(html));
}

TEST(TextRuns, ScriptsStylesAndAttributeValuesAreMarked) {
  const std::string html =
      "<html><head><script>var a = b < c;</script><style>p > a { x: y }</style></head>"
      "<body><a href=\"https://example.org/a/long/path\" title=\"a &amp; b and more\">t</a>"
      "<script><!-- var d = 1; --></script></body></html>";
  const MarkedHtml marked = MarkTextRuns(html);
  std::vector<std::string_view> texts;
  for (const MarkedRun& run : marked.runs) texts.push_back(run.text);
  // The value holding a reference is left as written.
  EXPECT_EQ(texts, (std::vector<std::string_view>{"var a = b < c;", "p > a { x: y }",
                                                  "https://example.org/a/long/path",
                                                  "<!-- var d = 1; -->"}));
  ASSERT_EQ(marked.runs.size(), 4u);
  EXPECT_EQ(marked.runs[0].place, RunPlace::kRawText);
  EXPECT_EQ(marked.runs[0].tag, GUMBO_TAG_SCRIPT);
  EXPECT_EQ(marked.runs[2].place, RunPlace::kAttribute);
  EXPECT_TRUE(RestoresWithoutFallback(html));
  EXPECT_EQ(MarkedTree(html), PlainTree(html));
}

TEST(TextRuns, ARawTextMarkerOutsideItsElementFallsBack) {
  // In <svg>, <script> is not raw text: a '<' in it starts a tag, so the marked content (one
  // text node under an SVG <script>) is not what libgumbo builds from the original.
  const std::string html = "<svg><script>if (a <b> c) {}</script></svg>";
  ASSERT_FALSE(MarkTextRuns(html).runs.empty());
  EXPECT_FALSE(RestoresWithoutFallback(html));
  EXPECT_EQ(MarkedTree(html), PlainTree(html));
}

}  // namespace
}  // namespace talaria::html
