// What web_extract makes of a fetched page: HTML through the html module's main-content
// extraction, PDFs through poppler-cpp in a child process (pdf_text.h), plain text and JSON
// passed through (as UTF-8), other types refused with a reason;
// and the truncate-and-store window for a page larger than web.extract_char_limit.
// Thread-safety: pure functions, except StoreFullText (writes a file).
#pragma once

#include <cstdint>
#include <stop_token>
#include <string>
#include <string_view>

#include "talaria/base/status.h"
#include "talaria/web/fetcher.h"

namespace talaria::web {

struct PageContent {
  std::string title;
  std::string content;  // markdown or text, UTF-8
};

// FailedPrecondition (with the reason) for an HTTP error status, a type that is not text, or a
// PDF that cannot be read. `cancel` stops a PDF's extraction.
Result<PageContent> ContentOf(const FetchedPage& page, std::stop_token cancel = {});

// `content` when it is within `limit` characters; else a head (about 3/4) and tail (about 1/4)
// window snapped to line breaks, with a footer naming where the full text was stored and the
// exact read_file call for the middle. `stored_path` empty: the text could not be stored (the
// footer says so).
std::string WindowForModel(const std::string& content, int64_t limit,
                           const std::string& stored_path);

// Writes `content` (cut at 2,000,000 bytes) to $TALARIA_HOME/cache/web/<host>-<sha>.md; the
// path, or an error.
Result<std::string> StoreFullText(std::string_view url, std::string_view content);

}  // namespace talaria::web
