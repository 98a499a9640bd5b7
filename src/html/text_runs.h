// Text runs, raw text and attribute values stood in for by one-character markers while
// libgumbo parses.
//
// libgumbo's tokenizer emits one token per code point of text and its tree builder handles
// each one; on ordinary pages that is most of a parse. The HTML5 tree builder treats every
// character of a text run between tags alike (whitespace, non-whitespace, NUL and CR aside),
// so the run's core (without leading and trailing whitespace) can be parsed as one private-use
// character and put back afterwards: the tree is the same, built with a fraction of the work.
// A core becomes a marker only when none of its bytes can change how the tokenizer or tree
// builder reads it ('&', '<', '>', NUL, CR, controls libgumbo replaces, invalid UTF-8, private
// use characters; no leading or trailing '-', '!' or ']').
//
// The same holds for two other kinds of bytes the tokenizer reads one by one and the tree
// builder never looks at: the content of raw-text elements (<script>, <style>, <iframe>,
// <xmp>, <noembed>, <noframes>: a fifth of a real page) and quoted attribute values (a
// quarter). A script's end is found by the tokenizer's script data states (after "<!--", a
// "<script>" makes the next "</script>" text); an attribute value is marked only in a start
// tag other than html, head or
// body (whose attributes the tree builder merges), when its name is not one the tree builder
// reads (type, encoding, color, face, size).
//
// A repeated attribute is left out of the text handed to libgumbo (HTML keeps the first of a
// name): libgumbo 0.10.1 drops it too, but with no parse error recorded (max_errors = 0) it
// leaves the repeat's name in its tag buffer and prefixes it to the next attribute's name, so
// `class="a" class="b" id="x"` would lose the id. A marker stands in the repeat's place as an
// attribute name, so that a tag the scan read where libgumbo reads text (a comment, or a
// <script> the tree builder ignores) is caught like any other misplaced marker.
//
// Whitespace between tags (indentation: a sixth of a real page) is parsed as its first
// character alone, outside <pre> and <listing>: the tree builder handles each whitespace
// character alike, so the tree is the same but for the length of whitespace runs, which read
// as one space wherever whitespace is not preserved.
//
// RestoreTextRuns then checks that every marker came back exactly once where it was put: a
// text run's in a text or comment node, a raw-text run's in the text of an HTML element of
// that tag, an attribute run's as a whole attribute value. When one did not (the scan read a
// tag differently from libgumbo, or the tree builder dropped it), the caller parses the
// original text instead, so the result never depends on this scan being right.
// Thread-safety: free functions over caller-owned data.
#pragma once

#include <gumbo.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "html/gumbo_util.h"

namespace talaria::html {

// Where a marker has to come back for the tree to be the original's.
enum class RunPlace : unsigned char {
  kText,              // in a text or comment node
  kRawText,           // in the text of an HTML element whose tag is MarkedRun::tag
  kAttribute,         // as the whole value of an attribute
  kDroppedAttribute,  // as the whole name of an attribute, which is then removed
};

struct MarkedRun {
  std::string_view text;  // a view into the input
  RunPlace place = RunPlace::kText;
  GumboTag tag = GUMBO_TAG_UNKNOWN;  // kRawText: the element it is the content of
};

struct MarkedHtml {
  std::string html;             // the input with markers; empty when nothing was changed
  std::vector<MarkedRun> runs;  // run k is marker k (MarkerCodePoint)
  size_t dropped = 0;           // repeated attributes left out
};

// The private-use code point that stands for run `k`: U+E000 + k in the BMP's private use
// area, then U+F0000 onwards in plane 15.
char32_t MarkerCodePoint(size_t k);

// The input with its long text runs, raw-text contents and attribute values replaced by
// markers, and its repeated attributes left out (each replaced by a kDroppedAttribute
// marker). In a document that holds private-use characters itself (raw or as numeric
// references) nothing is marked and the repeats are left out without a marker.
MarkedHtml MarkTextRuns(std::string_view html);

// The input with its repeated attributes left out (each replaced by a kDroppedAttribute
// marker) and nothing else marked: what is parsed when the markers of MarkTextRuns did not
// come back. No runs when no tag repeats an attribute name.
MarkedHtml DropRepeatedAttributes(std::string_view html);

// Puts each run back in place of its marker under `root` (text, comment nodes and attribute
// values) and removes the attributes named by a kDroppedAttribute marker, the new strings
// allocated from `arena`. False when some marker is missing,
// repeated or in the wrong place: the tree is then not the original's and must be discarded.
bool RestoreTextRuns(GumboNode* root, std::span<const MarkedRun> runs, GumboArena& arena);

}  // namespace talaria::html
