// A small valid PDF for tests that read PDFs: one line of Helvetica text per page, a Title in
// the document information, and a correct cross-reference table.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace talaria::test_support {

inline std::string BuildPdf(const std::vector<std::string>& page_texts, const std::string& title) {
  std::vector<std::string> objects;  // object i+1
  const size_t pages_obj = 2, font_obj = 3;
  const size_t first_page_obj = 4;  // then its content stream; two objects per page
  const size_t info_obj = first_page_obj + 2 * page_texts.size();
  std::string kids;
  for (size_t i = 0; i < page_texts.size(); ++i) {
    kids += std::to_string(first_page_obj + 2 * i) + " 0 R ";
  }
  objects.push_back("<< /Type /Catalog /Pages 2 0 R >>");
  objects.push_back("<< /Type /Pages /Kids [" + kids + "] /Count " +
                    std::to_string(page_texts.size()) + " >>");
  objects.push_back("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
  for (size_t i = 0; i < page_texts.size(); ++i) {
    const size_t content = first_page_obj + 2 * i + 1;
    objects.push_back("<< /Type /Page /Parent " + std::to_string(pages_obj) +
                      " 0 R /MediaBox [0 0 612 792] /Contents " + std::to_string(content) +
                      " 0 R /Resources << /Font << /F1 " + std::to_string(font_obj) +
                      " 0 R >> >> >>");
    const std::string ops = "BT /F1 18 Tf 72 700 Td (" + page_texts[i] + ") Tj ET";
    objects.push_back("<< /Length " + std::to_string(ops.size()) + " >>\nstream\n" + ops +
                      "\nendstream");
  }
  objects.push_back("<< /Title (" + title + ") >>");
  std::string pdf = "%PDF-1.4\n";
  std::vector<size_t> offsets;
  for (size_t i = 0; i < objects.size(); ++i) {
    offsets.push_back(pdf.size());
    pdf += std::to_string(i + 1) + " 0 obj\n" + objects[i] + "\nendobj\n";
  }
  const size_t xref = pdf.size();
  pdf += "xref\n0 " + std::to_string(objects.size() + 1) + "\n0000000000 65535 f \n";
  for (size_t offset : offsets) {
    char line[24];
    std::snprintf(line, sizeof line, "%010zu 00000 n \n", offset);
    pdf += line;
  }
  pdf += "trailer\n<< /Size " + std::to_string(objects.size() + 1) + " /Root 1 0 R /Info " +
         std::to_string(info_obj) + " 0 R >>\nstartxref\n" + std::to_string(xref) + "\n%%EOF\n";
  return pdf;
}

}  // namespace talaria::test_support
