// ContentOf, WindowForModel and StoreFullText (page_content.h).
#include "web/page_content.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>

#include "talaria/base/file_io.h"
#include "talaria/base/paths.h"
#include "talaria/base/sha256.h"
#include "talaria/html/main_content.h"
#include "talaria/web/charset.h"
#include "web/pdf_text.h"

namespace talaria::web {
namespace {

constexpr size_t kStoredCap = 2'000'000;

bool IsTextType(std::string_view t) {
  return t.starts_with("text/") || t == "application/json" || t.ends_with("+json") ||
         t == "application/xml" || t.ends_with("+xml") || t == "application/javascript" ||
         t == "application/x-ndjson" || t == "application/yaml";
}

// What a page without a Content-Type is, from its first bytes.
std::string Sniff(std::string_view body) {
  const size_t first = body.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
  if (first == std::string_view::npos) return "text/plain";
  const std::string_view start = body.substr(first, 64);
  if (start.starts_with("%PDF-")) return "application/pdf";
  if (start.starts_with("<")) return "text/html";
  return "text/plain";
}

size_t Lines(std::string_view s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace

Result<PageContent> ContentOf(const FetchedPage& page, std::stop_token cancel) {
  if (page.status >= 400) {
    return Err(FailedPreconditionError("HTTP " + std::to_string(page.status)));
  }
  std::string type = page.media_type.empty() ? Sniff(page.body) : page.media_type;
  if (type == "application/octet-stream" && Sniff(page.body) == "application/pdf") {
    type = "application/pdf";
  }
  if (type == "application/pdf") {
    if (page.truncated) {
      return Err(FailedPreconditionError(
          "a PDF larger than the download limit: a cut PDF cannot be read"));
    }
    PdfText pdf = TALARIA_TRY(ExtractPdfText(page.body, PdfLimits{.cancel = std::move(cancel)}));
    if (pdf.pages_read < pdf.pages) {
      pdf.text +=
          "\n\n[... " + std::to_string(pdf.pages - pdf.pages_read) + " more pages not read ...]";
    }
    return PageContent{.title = std::move(pdf.title), .content = std::move(pdf.text)};
  }
  const bool html = type == "text/html" || type == "application/xhtml+xml";
  if (!html && !IsTextType(type)) {
    return Err(FailedPreconditionError("content type " + type +
                                       " is not text, HTML, JSON or a PDF; nothing to extract"));
  }
  const std::string charset = DetectCharset(page.body, page.content_type, html);
  auto text = DecodeToUtf8(page.body, charset);
  if (!text) {
    // An unknown label: read it as browsers read an undeclared page.
    text = DecodeToUtf8(page.body, "windows-1252");
    if (!text) return Err(text.error());
  }
  PageContent out;
  if (html) {
    html::ExtractedPage extracted = html::ExtractMainContent(
        *text, html::ExtractOptions{.base_url = page.url, .main_content = true});
    out.title = std::move(extracted.title);
    out.content = std::move(extracted.markdown);
  } else {
    out.content = std::move(*text);
  }
  if (page.truncated) {
    out.content += "\n\n[... the page was larger than the download limit and was cut there ...]";
  }
  return out;
}

std::string WindowForModel(const std::string& content, int64_t limit,
                           const std::string& stored_path) {
  const auto cap = static_cast<size_t>(std::max<int64_t>(limit, 1));
  if (content.size() <= cap) return content;
  size_t head_end = cap * 3 / 4;
  const size_t snap = content.rfind('\n', head_end);
  if (snap != std::string::npos && snap > head_end / 2) head_end = snap + 1;
  size_t tail_start = content.size() - (cap - head_end);
  const size_t next = content.find('\n', tail_start);
  if (next != std::string::npos && next + 1 < content.size()) tail_start = next + 1;
  // Never split a UTF-8 sequence.
  while (head_end > 0 && (static_cast<unsigned char>(content[head_end]) & 0xC0) == 0x80) --head_end;
  while (tail_start < content.size() &&
         (static_cast<unsigned char>(content[tail_start]) & 0xC0) == 0x80) {
    ++tail_start;
  }
  const std::string_view head(content.data(), head_end);
  const std::string_view middle(content.data() + head_end, tail_start - head_end);
  std::string out(head);
  const size_t first_line = Lines(head) + 1;
  const size_t middle_lines = Lines(middle) + 1;
  out += "\n\n[... " + std::to_string(middle.size()) + " of " + std::to_string(content.size()) +
         " characters left out here ...]\n\n";
  out += content.substr(tail_start);
  out += "\n\n---\n";
  if (stored_path.empty()) {
    out += "[The page was longer than web.extract_char_limit (" + std::to_string(limit) +
           " characters); the middle is left out and could not be stored.]";
  } else {
    out += "[The page was longer than web.extract_char_limit (" + std::to_string(limit) +
           " characters). Full text: " + stored_path + ". Read the middle with: read_file path=\"" +
           stored_path + "\" offset=" + std::to_string(first_line) +
           " limit=" + std::to_string(std::min<size_t>(middle_lines, 2000)) + "]";
  }
  return out;
}

Result<std::string> StoreFullText(std::string_view url, std::string_view content) {
  std::string host(url.substr(url.find("://") == std::string_view::npos ? 0 : url.find("://") + 3));
  host = host.substr(0, host.find_first_of("/:?#"));
  std::string slug;
  for (char c : host) {
    slug += ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-') ? c : '_';
  }
  if (slug.empty()) slug = "page";
  const std::string dir = TalariaHome() + "/cache/web";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Err(UnavailableError("cannot create " + dir + ": " + ec.message()));
  const std::string path =
      dir + "/" + slug.substr(0, 80) + "-" + Sha256Hex(url).substr(0, 12) + ".md";
  TALARIA_RETURN_IF_ERROR(
      WriteFileAtomic(path, content.substr(0, kStoredCap), {.mode = 0600, .sync = false}));
  return path;
}

}  // namespace talaria::web
