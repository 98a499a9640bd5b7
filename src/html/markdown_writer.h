// A DOM subtree (libgumbo) written as markdown: ATX headings, paragraphs, nested lists, pipe
// tables, fenced code blocks with their language, blockquotes, emphasis, inline code, links
// and images with URLs resolved against a base. Whitespace is collapsed as a browser would,
// except inside <pre>. Recursion is bounded: below kMaxDepth a subtree is flattened to text
// iteratively, so any tree the parser builds is written without exhausting the stack.
// Thread-safety: not thread-safe; one writer per rendering.
#pragma once

#include <gumbo.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace talaria::html {

class MarkdownWriter {
 public:
  // `skip`: elements (with their subtrees) left out. `base_url`: absolute URL links resolve
  // against (may be empty).
  using SkipFn = std::function<bool(const GumboNode*)>;
  MarkdownWriter(const SkipFn& skip, std::string base_url, int depth = 0);

  static constexpr int kMaxDepth = 200;

  // Writes `node` (an element or text) and what is under it.
  void Write(const GumboNode* node);
  // Writes a heading line ("# text") as a block of its own.
  void WriteHeading(int level, std::string_view text);
  // The markdown so far, trimmed, ending in one newline (empty when nothing was written).
  std::string Finish();

 private:
  struct Indent {
    std::string first;  // on the first line written inside it ("- ", "1. ", "> ")
    std::string rest;   // on the following lines ("  ", "   ", "> ")
    bool first_pending;
  };

  void Node(const GumboNode* node, int depth);
  void Children(const GumboNode* node, int depth);
  void Element(const GumboNode* node, int depth);
  void Text(std::string_view text);
  void FlattenText(const GumboNode* node);
  void Flush();
  void Separate();
  void WriteLines(std::string_view text);
  void Wrap(const GumboNode* node, int depth, std::string_view mark);
  void Link(const GumboNode* node, int depth);
  void Image(const GumboNode* node);
  void InlineCode(const GumboNode* node);
  void Pre(const GumboNode* node);
  void List(const GumboNode* node, int depth);
  void Table(const GumboNode* node, int depth);
  void Heading(const GumboNode* node, int depth, int level);
  std::string Resolve(std::string_view url) const;

  const SkipFn& skip_;
  std::string base_url_;
  int base_depth_;
  std::string out_;
  std::string para_;  // the paragraph being collected (inline markdown)
  std::string lead_;  // marker before the next paragraph's text ("## ")
  std::vector<Indent> indents_;
  int list_depth_ = 0;
  bool blank_before_next_ = false;
  bool join_lines_ = false;  // a heading: <br> and newlines become spaces
  size_t flushes_ = 0;
};

// The text under `node` (skipped subtrees left out), whitespace kept as it is: what a <pre>
// holds. Iterative.
std::string RawText(const GumboNode* node, const MarkdownWriter::SkipFn& skip);

}  // namespace talaria::html
