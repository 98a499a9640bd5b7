#include "talaria/lint/lint.h"

#include <algorithm>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "lint/line_diff.h"
#include "lint/linters.h"
#include "lint/stack.h"

namespace talaria {
namespace {

using lint_internal::kMaxIssues;

enum class FileType : unsigned char { kNone, kJson, kYaml, kToml, kPython };

FileType TypeOf(std::string_view ext) {
  if (ext == ".json") return FileType::kJson;
  if (ext == ".yaml" || ext == ".yml") return FileType::kYaml;
  if (ext == ".toml") return FileType::kToml;
  if (ext == ".py") return FileType::kPython;
  return FileType::kNone;
}

std::string_view StripBom(std::string_view text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (text.starts_with(kBom)) text.remove_prefix(kBom.size());
  return text;
}

LintReport Skipped(std::string message) {
  LintReport r;
  r.status = LintReport::Status::kSkipped;
  r.message = std::move(message);
  return r;
}

std::string JoinIssues(const std::vector<LintIssue>& issues) {
  std::string out;
  for (const LintIssue& issue : issues) {
    if (!out.empty()) out += '\n';
    out += issue.ToString();
  }
  return out;
}

// The issues of `content` (BOM already stripped, size checked) for `type`; Unavailable when the
// Python interpreter cannot run.
Result<std::vector<LintIssue>> FindIssuesHere(FileType type, std::string_view path,
                                              std::string_view content) {
  std::vector<LintIssue> issues;
  switch (type) {
    case FileType::kJson:
      issues = lint_internal::LintJsonText(content);
      break;
    case FileType::kYaml:
      issues = lint_internal::LintYamlText(content);
      break;
    case FileType::kToml:
      issues = lint_internal::LintTomlText(content, path);
      break;
    case FileType::kPython: {
      issues = lint_internal::CheckEncoding(content, /*check_utf8=*/false);
      if (issues.empty()) issues = TALARIA_TRY(lint_internal::LintPythonText(content, path));
      break;
    }
    case FileType::kNone:
      break;
  }
  std::stable_sort(issues.begin(), issues.end(), [](const LintIssue& a, const LintIssue& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  if (issues.size() > kMaxIssues) issues.resize(kMaxIssues);
  return issues;
}

// FindIssuesHere with enough stack for hostile nesting, whatever thread the caller is on.
Result<std::vector<LintIssue>> FindIssues(FileType type, std::string_view path,
                                          std::string_view content) {
  Result<std::vector<LintIssue>> result;
  lint_internal::RunWithStackHeadroom([&] { result = FindIssuesHere(type, path, content); });
  return result;
}

// Message text compared across the edit: "line <n>" references inside messages (Python's
// "... on line 3", our "first defined on line 3") shift with the edit too, so they are blanked.
std::string NormalizeMessage(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  constexpr std::string_view kLine = "line ";
  size_t i = 0;
  while (i < message.size()) {
    if (message.substr(i).starts_with(kLine)) {
      size_t j = i + kLine.size();
      size_t digits = j;
      while (digits < message.size() && message[digits] >= '0' && message[digits] <= '9') ++digits;
      if (digits > j) {
        out += "line #";
        i = digits;
        continue;
      }
    }
    out += message[i++];
  }
  return out;
}

}  // namespace

std::string LintIssue::ToString() const {
  std::string out = kind.empty() ? message : kind + ": " + message;
  if (line > 0) {
    out += " (line " + std::to_string(line);
    if (column > 0) out += ", column " + std::to_string(column);
    out += ')';
  }
  return out;
}

Json LintReport::ToJson() const {
  Json j = Json::object();
  switch (status) {
    case Status::kSkipped:
      j["status"] = "skipped";
      j["message"] = message;
      return j;
    case Status::kOk:
      j["status"] = "ok";
      break;
    case Status::kError:
    case Status::kPreexisting:
      j["status"] = "error";
      break;
  }
  j["output"] = output;
  if (!message.empty()) j["message"] = message;
  return j;
}

std::string LintExtension(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const size_t first_non_dot = base.find_first_not_of('.');
  const size_t dot = base.rfind('.');
  if (dot == std::string_view::npos || first_non_dot == std::string_view::npos ||
      dot < first_non_dot) {
    return {};
  }
  std::string ext(base.substr(dot));
  for (char& c : ext) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return ext;
}

bool HasLinter(std::string_view path) { return TypeOf(LintExtension(path)) != FileType::kNone; }

LintReport LintContent(std::string_view path, std::string_view content) {
  const std::string ext = LintExtension(path);
  const FileType type = TypeOf(ext);
  if (type == FileType::kNone) {
    if (ext.empty()) return Skipped("No linter for files without an extension");
    return Skipped("No linter for " + lint_internal::CleanMessage(ext, 40) + " files");
  }
  content = StripBom(content);
  if (content.size() > kMaxLintBytes) {
    return Skipped("File too large to lint (" + std::to_string(content.size()) + " bytes; limit " +
                   std::to_string(kMaxLintBytes >> 20) + " MiB)");
  }
  Result<std::vector<LintIssue>> issues = FindIssues(type, path, content);
  if (!issues) {
    return Skipped("No linter available for " + ext + " (" + issues.error().message() + ")");
  }
  LintReport report;
  if (issues->empty()) return report;
  report.status = LintReport::Status::kError;
  report.output = JoinIssues(*issues);
  report.issues = std::move(*issues);
  return report;
}

LintReport LintDelta(std::string_view path, std::optional<std::string_view> old_content,
                     std::string_view new_content) {
  LintReport post = LintContent(path, new_content);
  if (post.status != LintReport::Status::kError || !old_content.has_value()) return post;
  LintReport pre = LintContent(path, *old_content);
  // A clean (or unlintable) old file means every error is new: report it as is.
  if (pre.status != LintReport::Status::kError) return post;

  const std::vector<int> line_map =
      lint_internal::MapOldLinesToNew(StripBom(*old_content), StripBom(new_content));
  // (line in the new text, kind, normalized message) of every old error that survived the edit.
  std::set<std::tuple<int, std::string, std::string>> carried;
  for (const LintIssue& old_issue : pre.issues) {
    int line = 0;
    if (old_issue.line > 0) {
      if (static_cast<size_t>(old_issue.line) >= line_map.size()) continue;
      line = line_map[static_cast<size_t>(old_issue.line)];
      if (line == 0) continue;  // the edit changed that line
    }
    carried.emplace(line, old_issue.kind, NormalizeMessage(old_issue.message));
  }
  std::vector<LintIssue> introduced;
  for (const LintIssue& issue : post.issues) {
    if (!carried.contains({issue.line, issue.kind, NormalizeMessage(issue.message)})) {
      introduced.push_back(issue);
    }
  }
  LintReport report;
  report.status = LintReport::Status::kError;
  if (introduced.empty()) {
    report.status = LintReport::Status::kPreexisting;
    report.output = std::move(post.output);
    report.message = std::string(kPreexistingLintMessage);
    report.issues = std::move(post.issues);
    return report;
  }
  report.output = kNewLintErrorsHeader;
  report.output += '\n';
  report.output += JoinIssues(introduced);
  report.issues = std::move(introduced);
  return report;
}

Status CheckSyntaxBeforeWrite(std::string_view path, std::string_view content) {
  const std::string ext = LintExtension(path);
  const FileType type = TypeOf(ext);
  if (type != FileType::kJson && type != FileType::kYaml && type != FileType::kToml) {
    return Status::Ok();
  }
  content = StripBom(content);
  if (content.size() > kMaxLintBytes) return Status::Ok();
  Result<std::vector<LintIssue>> issues = FindIssues(type, path, content);
  if (!issues) return Status::Ok();  // cannot happen for these types; never block on it
  for (const LintIssue& issue : *issues) {
    if (issue.category != LintIssue::Category::kSyntax) continue;
    return InvalidArgumentError("Refusing to write '" + lint_internal::CleanMessage(path, 1024) +
                                "': candidate content fails " + ext + " syntax validation (" +
                                issue.ToString() +
                                "). The file was NOT created or modified. Fix the content and "
                                "retry.");
  }
  return Status::Ok();
}

Status InitPythonLinter() { return lint_internal::EnsurePython(); }

}  // namespace talaria
