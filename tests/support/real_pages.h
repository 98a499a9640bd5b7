// The real pages of tests/data/real_pages (from mozilla/readability's test pages, with a gold
// extraction checked by people) and the one scoring both the extraction benchmark and the
// quality test use, for talaria's extractor and for readability-lxml alike.
//
// Scoring (trafilatura's evaluation scheme): a page's main-text snippets found in an
// extractor's output are true positives, those missing false negatives; its boilerplate
// snippets found are false positives. Output and snippets are compared after the same
// normalisation (NormalizeForScoring).
// Thread-safety: pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace talaria::test_support {

struct RealPage {
  std::string name;                      // the reference's test-page name ("heise")
  std::string split;                     // "tuning" or "heldout"
  std::string kind;                      // news, blog, docs, forum, ...
  std::string lang;                      // en, de, zh, ...
  std::string url;                       // the URL it is extracted as
  std::string content_type;              // the header it is served with (its charset)
  std::string bytes;                     // the page as served (gunzipped, not decoded)
  std::vector<std::string> main;         // main-text snippets
  std::vector<std::string> boilerplate;  // text that must not be in the output
};

// The page as UTF-8, decoded the way web_extract decodes a fetched page (its charset from the
// Content-Type, else a <meta>, through talaria::web's charset decoding).
std::string RealPageUtf8(const RealPage& page);

// The directory holding the pages (tests/data/real_pages of the source tree).
std::string RealPagesDir();

// Every page of `dir`'s gold.json with its bytes read from pages/<name>.html.gz. Empty when
// the files cannot be read or parsed (the caller fails on an empty list).
std::vector<RealPage> LoadRealPages(const std::string& dir);

// `text` (markdown or plain text) for matching: markdown link targets "](...)" dropped, the
// markup characters * ` # > | [ ] ! _ \ removed, runs of white space (ASCII and Unicode
// spaces, no-break and zero-width ones) made one space, trimmed.
std::string NormalizeForScoring(std::string_view text);

struct SnippetCounts {
  int tp = 0;  // main snippets found
  int fp = 0;  // boilerplate snippets found
  int fn = 0;  // main snippets missing
  void Add(const SnippetCounts& other);
  double Precision() const;
  double Recall() const;
  double F() const;
};

// `page`'s snippets looked up in `normalized_output` (NormalizeForScoring of the output).
// `missing` and `leaked`, when given, receive the main snippets not found and the boilerplate
// snippets found.
SnippetCounts ScoreExtraction(const RealPage& page, std::string_view normalized_output,
                              std::vector<std::string>* missing = nullptr,
                              std::vector<std::string>* leaked = nullptr);

}  // namespace talaria::test_support
