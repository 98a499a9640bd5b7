// Text runs stood in for by one-character markers while libgumbo parses.
//
// libgumbo's tokenizer emits one token per code point of text and its tree builder handles
// each one; on ordinary pages that is most of a parse. The HTML5 tree builder treats every
// character of a text run between tags alike (whitespace, non-whitespace, NUL and CR aside),
// so the run's core (without leading and trailing whitespace) can be parsed as one private-use
// character and put back afterwards: the tree is the same, built with a fraction of the work.
// A core becomes a marker only when none of its bytes can change how the tokenizer or tree
// builder reads it ('&', '<', '>', NUL, CR, controls libgumbo replaces, invalid UTF-8, private
// use characters; no leading or trailing '-', '!' or ']'). RestoreTextRuns then checks that
// every marker came back exactly once in a text or comment node; when one did not (it landed
// in an attribute of a tag this scan read differently, or the tree builder dropped it), the
// caller parses the original text instead, so the result never depends on this scan being
// right.
// Thread-safety: free functions over caller-owned data.
#pragma once

#include <gumbo.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "html/gumbo_util.h"

namespace talaria::html {

struct MarkedHtml {
  std::string html;                    // the input with markers; empty when no run was marked
  std::vector<std::string_view> runs;  // run k (a view into the input) is marker U+E000 + k
};

// The input with its long text runs replaced by markers. Returns no runs for a document that
// holds private-use characters itself (raw or as numeric references), or when marking would
// save nothing.
MarkedHtml MarkTextRuns(std::string_view html);

// Puts each run back in place of its marker in the text and comment nodes under `root`, the
// new text allocated from `arena`. False when some marker is missing or repeated: the tree is
// then not the original's and must be discarded.
bool RestoreTextRuns(GumboNode* root, std::span<const std::string_view> runs, GumboArena& arena);

}  // namespace talaria::html
