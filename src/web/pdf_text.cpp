// ExtractPdfText (pdf_text.h).
#include "web/pdf_text.h"

#include <string>

#include <nlohmann/json.hpp>

#include "talaria/base/json.h"
#include "talaria/base/paths.h"
#include "talaria/base/strings.h"
#include "talaria/base/subprocess.h"

namespace talaria::web {
namespace {

constexpr std::string_view kProgram = "talaria-pdf-text";
constexpr int kUnreadableExit = 2;  // the program's "cannot open" status
// A PDF's text is rarely this large; past it the JSON is cut and unreadable, so say so.
constexpr size_t kMaxJsonBytes = size_t{16} << 20;

}  // namespace

std::string FindPdfTextProgram() { return FindBesideLibrary("TALARIA_PDF_TEXT", kProgram); }

Result<PdfText> ExtractPdfText(std::string_view pdf, const PdfLimits& limits) {
  const std::string program = FindPdfTextProgram();
  if (program.empty()) {
    return Err(FailedPreconditionError(
        "a PDF, and this installation has no PDF extractor (talaria-pdf-text beside "
        "libtalaria)"));
  }
  SpawnOptions spawn;
  spawn.argv = {program, std::to_string(limits.max_pages)};
  spawn.env = std::vector<std::string>{};  // the parser needs nothing of ours
  spawn.stdin_data = std::string(pdf);
  spawn.timeout = limits.timeout;
  spawn.cancel = limits.cancel;
  spawn.max_output_bytes = kMaxJsonBytes + 1;
  spawn.max_stderr_bytes = 1024;
  auto run = RunProcess(spawn);
  if (!run)
    return Err(
        FailedPreconditionError("the PDF extractor did not start: " + run.error().message()));
  if (run->timed_out) return Err(FailedPreconditionError("the PDF took too long to read"));
  if (run->cancelled) return Err(CancelledError("cancelled while reading the PDF"));
  if (run->exit_code == kUnreadableExit) {
    return Err(FailedPreconditionError("PDF: " + std::string(Trim(run->stderr_text))));
  }
  if (run->exit_code != 0) {
    return Err(FailedPreconditionError("the PDF extractor failed on this file (exit " +
                                       std::to_string(run->exit_code) + ")"));
  }
  if (run->stdout_text.size() > kMaxJsonBytes) {
    return Err(FailedPreconditionError("the PDF's text is larger than 16 MB"));
  }
  auto parsed = ParseJson(run->stdout_text);
  if (!parsed || !parsed->is_object()) {
    return Err(FailedPreconditionError("the PDF extractor's answer was unreadable"));
  }
  PdfText out;
  out.title = JsonStringField(*parsed, "title");
  out.text = JsonStringField(*parsed, "text");
  out.pages = parsed->value("pages", 0);
  out.pages_read = parsed->value("pages_read", 0);
  return out;
}

}  // namespace talaria::web
