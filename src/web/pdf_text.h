// PDF text for web_extract: the talaria-pdf-text program (src/web/pdf/, poppler-cpp) run as a
// child with a deadline, so a hostile PDF can crash, hang or balloon only that child.
// Thread-safety: ExtractPdfText is thread-safe (one child per call).
#pragma once

#include <chrono>
#include <stop_token>
#include <string>
#include <string_view>

#include "talaria/base/status.h"

namespace talaria::web {

struct PdfText {
  std::string title;  // the document's Title, when it has one
  std::string text;   // UTF-8, pages separated by a blank line
  int pages = 0;
  int pages_read = 0;  // fewer than `pages` when the page cap cut it
};

struct PdfLimits {
  int max_pages = 500;
  std::chrono::milliseconds timeout{30'000};
  std::stop_token cancel;
};

// The program: $TALARIA_PDF_TEXT when set, else talaria-pdf-text beside libtalaria; empty when
// neither is there.
std::string FindPdfTextProgram();

// FailedPrecondition naming why (no extractor installed, damaged, encrypted, timed out, the
// extractor crashed); never throws.
Result<PdfText> ExtractPdfText(std::string_view pdf, const PdfLimits& limits);

}  // namespace talaria::web
