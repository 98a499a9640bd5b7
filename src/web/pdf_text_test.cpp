// PDF text through the talaria-pdf-text child: real PDFs built here, damaged ones, the page cap,
// and an extractor that crashes or is missing (talaria answers, never dies with it).
#include "web/pdf_text.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "support/minimal_pdf.h"
#include "support/temp_dir.h"
#include "talaria/base/file_io.h"

namespace talaria::web {
namespace {

using test_support::BuildPdf;
using test_support::TempDir;

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_.empty()) {
      ::unsetenv(name_);
    } else {
      ::setenv(name_, old_.c_str(), 1);
    }
  }

 private:
  const char* name_;
  std::string old_;
};

TEST(PdfText, ReadsEveryPageAndTheTitle) {
  ASSERT_FALSE(FindPdfTextProgram().empty()) << "talaria-pdf-text is built beside libtalaria";
  auto text = ExtractPdfText(
      BuildPdf({"Quarterly report", "Revenue grew by 12 percent"}, "Annual Numbers"), {});
  ASSERT_TRUE(text) << text.error().ToString();
  EXPECT_EQ(text->title, "Annual Numbers");
  EXPECT_EQ(text->pages, 2);
  EXPECT_EQ(text->pages_read, 2);
  const size_t first = text->text.find("Quarterly report");
  const size_t second = text->text.find("Revenue grew by 12 percent");
  ASSERT_NE(first, std::string::npos) << text->text;
  ASSERT_NE(second, std::string::npos) << text->text;
  EXPECT_LT(first, second) << "pages in order";
}

TEST(PdfText, StopsAtThePageCap) {
  auto text =
      ExtractPdfText(BuildPdf({"one", "two", "three"}, "t"),
                     {.max_pages = 1, .timeout = std::chrono::milliseconds(30000), .cancel = {}});
  ASSERT_TRUE(text) << text.error().ToString();
  EXPECT_EQ(text->pages, 3);
  EXPECT_EQ(text->pages_read, 1);
  EXPECT_EQ(text->text.find("three"), std::string::npos);
}

TEST(PdfText, DamagedAndHostileInputGetsAReasonNotACrash) {
  for (const std::string& bad :
       {std::string("%PDF-1.4 ..."), std::string("%PDF-1.7\n") + std::string(100000, '\xff'),
        std::string("%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 1 0 R >>\nendobj\n"
                    "trailer\n<< /Root 1 0 R >>\n%%EOF\n"),
        std::string()}) {
    auto text = ExtractPdfText(bad, {});
    if (text) {
      EXPECT_TRUE(text->text.empty()) << "nothing invented from a damaged file";
    } else {
      EXPECT_EQ(text.error().code(), StatusCode::kFailedPrecondition) << text.error().ToString();
      EXPECT_NE(text.error().message().find("PDF"), std::string::npos);
    }
  }
}

TEST(PdfText, ACrashingExtractorCostsOnlyTheChild) {
  TempDir dir;
  const std::string crasher = dir / "crasher";
  ASSERT_TRUE(WriteFileAtomic(crasher, "#!/bin/sh\ncat >/dev/null\nkill -SEGV $$\n").ok());
  ASSERT_EQ(::chmod(crasher.c_str(), 0755), 0);
  ScopedEnv program("TALARIA_PDF_TEXT", crasher);
  auto text = ExtractPdfText(BuildPdf({"x"}, "t"), {});
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message().find("failed on this file"), std::string::npos)
      << text.error().ToString();
}

TEST(PdfText, AHangingExtractorIsStoppedAtItsDeadline) {
  TempDir dir;
  const std::string hang = dir / "hang";
  ASSERT_TRUE(WriteFileAtomic(hang, "#!/bin/sh\nexec sleep 30\n").ok());
  ASSERT_EQ(::chmod(hang.c_str(), 0755), 0);
  ScopedEnv program("TALARIA_PDF_TEXT", hang);
  auto text = ExtractPdfText(
      "%PDF-1.4", {.max_pages = 500, .timeout = std::chrono::milliseconds(300), .cancel = {}});
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message().find("too long"), std::string::npos) << text.error().ToString();
}

}  // namespace
}  // namespace talaria::web
