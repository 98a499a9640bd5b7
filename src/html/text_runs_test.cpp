// Parsing with text runs stood in for by markers must give exactly the tree libgumbo builds from
// the text as written: every node, tag, namespace, attribute and text compared, on the
// benchmark's pages, on markup chosen to trip the marker scan, and on random mixes of both.
#include "html/text_runs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "html/gumbo_util.h"

namespace talaria::html {
namespace {

// The tree in a form that two parses can be compared by.
void Serialize(const GumboNode* node, int depth, std::string& out) {
  out.append(static_cast<size_t>(depth), ' ');
  switch (node->type) {
    case GUMBO_NODE_DOCUMENT:
      out += "#document ";
      out += node->v.document.has_doctype ? node->v.document.name : "";
      out += '\n';
      for (unsigned i = 0; i < node->v.document.children.length; ++i) {
        Serialize(static_cast<const GumboNode*>(node->v.document.children.data[i]), depth + 1, out);
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
      for (unsigned i = 0; i < e.children.length; ++i) {
        Serialize(static_cast<const GumboNode*>(e.children.data[i]), depth + 1, out);
      }
      return;
    }
    default:
      out += "#" + std::to_string(node->type) + "[" + node->v.text.text + "]\n";
      return;
  }
}

std::string PlainTree(std::string_view html) {
  GumboOutput* output = gumbo_parse_with_options(&kGumboDefaultOptions, html.data(), html.size());
  std::string out;
  Serialize(output->root, 0, out);
  gumbo_destroy_output(&kGumboDefaultOptions, output);
  return out;
}

std::string MarkedTree(std::string_view html) {
  const ParsedHtml parsed(html);
  std::string out;
  Serialize(parsed.root(), 0, out);
  return out;
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

TEST(TextRuns, ADocumentWithPrivateUseCharactersIsNotMarked) {
  EXPECT_TRUE(MarkTextRuns("<p>icon \xee\x80\x80 in a long paragraph</p>").runs.empty());
  EXPECT_TRUE(MarkTextRuns("<p>icon &#xE000; in a long paragraph</p>").runs.empty());
  EXPECT_TRUE(MarkTextRuns("<p>icon &#57344; in a long paragraph</p>").runs.empty());
  EXPECT_FALSE(MarkTextRuns("<p>fullwidth \xef\xbc\x8c in a long paragraph</p>").runs.empty());
}

TEST(TextRuns, RunsBeyondTheMarkerRangeAreLeftAsWritten) {
  std::string html;
  for (int i = 0; i < 7000; ++i) html += "<p>paragraph number " + std::to_string(i) + "</p>";
  const MarkedHtml marked = MarkTextRuns(html);
  EXPECT_EQ(marked.runs.size(), size_t{0xF900 - 0xE000});
  EXPECT_EQ(MarkedTree(html), PlainTree(html));
}

}  // namespace
}  // namespace talaria::html
