// talaria-pdf-text: the PDF text extractor web_extract runs as a child process (web/pdf_text.h).
// A PDF from the web is hostile input to a large C++ parser: a crash, a hang or a memory blow-up
// here costs one child, never talaria, and poppler-cpp (with the libraries it brings) is loaded
// only by the runs that need it.
//
// stdin: the PDF bytes. stdout: one JSON object {"title", "pages", "pages_read", "text"}.
// argv[1]: the most pages to read. Exit 0 on success; 2 with a one-line reason on stderr for a
// document poppler cannot open or one that is locked.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-page.h>
#include <nlohmann/json.hpp>

namespace {

constexpr rlim_t kAddressSpaceLimit = rlim_t{2} << 30;  // 2 GiB: room for big scans, not more
constexpr rlim_t kCpuSecondsLimit = 60;
constexpr int kDefaultMaxPages = 500;

std::string Utf8(const poppler::ustring& text) {
  const poppler::byte_array bytes = text.to_utf8();
  return std::string(bytes.begin(), bytes.end());
}

void Quiet(const std::string& /*message*/, void* /*closure*/) {}  // poppler's warnings

}  // namespace

int main(int argc, char** argv) {
  // Limits the parser cannot argue with, set before it sees a byte.
  const rlimit cpu{kCpuSecondsLimit, kCpuSecondsLimit};
  ::setrlimit(RLIMIT_CPU, &cpu);
#if !defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer reserves terabytes of shadow address space: under it (the sanitizer build
  // of the tests) the address-space cap would stop the program before main's first line.
  const rlimit as{kAddressSpaceLimit, kAddressSpaceLimit};
  ::setrlimit(RLIMIT_AS, &as);
#endif
  const int max_pages = argc > 1 ? std::max(1, std::atoi(argv[1])) : kDefaultMaxPages;

  std::string pdf((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  poppler::set_debug_error_function(&Quiet, nullptr);
  std::unique_ptr<poppler::document> doc(
      poppler::document::load_from_raw_data(pdf.data(), static_cast<int>(pdf.size())));
  if (!doc) {
    std::fputs("not a PDF poppler can read (damaged or not a PDF)\n", stderr);
    return 2;
  }
  if (doc->is_locked()) {
    std::fputs("the PDF is encrypted with a password\n", stderr);
    return 2;
  }
  const int pages = doc->pages();
  std::string text;
  int read = 0;
  for (; read < pages && read < max_pages; ++read) {
    std::unique_ptr<poppler::page> page(doc->create_page(read));
    if (!page) continue;
    if (!text.empty()) text += "\n\n";
    text += Utf8(page->text());
  }
  nlohmann::json out{{"title", Utf8(doc->info_key("Title"))},
                     {"pages", pages},
                     {"pages_read", read},
                     {"text", std::move(text)}};
  const std::string body = out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::fwrite(body.data(), 1, body.size(), stdout);
  return 0;
}
