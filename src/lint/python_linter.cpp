// The Python check, through libtalaria_python_lint.so (python_lint_abi.h): the module that
// embeds libpython is loaded on the first Python lint, from the directory libtalaria itself was
// loaded from (the build tree or the install's libdir), so a start of talaria that never lints
// Python never pays for mapping and relocating libpython.
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "lint/linters.h"
#include "lint/python_lint_abi.h"
#include "talaria/base/paths.h"

namespace talaria::lint_internal {
namespace {

struct PythonModule {
  talaria_pylint_check_fn check = nullptr;
  talaria_pylint_outline_fn outline = nullptr;  // null in a module without outlines
  talaria_pylint_free_fn free_text = nullptr;
  std::string error;  // why it is unavailable; empty when check is set
};

PythonModule LoadModule() {
  PythonModule m;
  void* handle = OpenSiblingModule(TALARIA_PYLINT_MODULE, "the Python lint module", m.error);
  if (handle == nullptr) return m;
  auto start = reinterpret_cast<talaria_pylint_start_fn>(::dlsym(handle, "talaria_pylint_start"));
  auto check = reinterpret_cast<talaria_pylint_check_fn>(::dlsym(handle, "talaria_pylint_check"));
  if (start == nullptr || check == nullptr) {
    m.error = TALARIA_PYLINT_MODULE;
    m.error += " does not export the Python lint entry points";
    return m;  // never dlclose'd: harmless, and a half-loaded module stays inert
  }
  char error[512] = {};
  if (start(error, sizeof error) != 0) {
    m.error = error;
    return m;
  }
  m.check = check;
  m.outline =
      reinterpret_cast<talaria_pylint_outline_fn>(::dlsym(handle, "talaria_pylint_outline"));
  m.free_text = reinterpret_cast<talaria_pylint_free_fn>(::dlsym(handle, "talaria_pylint_free"));
  if (m.free_text == nullptr) m.outline = nullptr;
  return m;
}

const PythonModule& Module() {
  static std::once_flag once;
  static PythonModule module;  // written once under `once`, read-only afterwards
  std::call_once(once, [] { module = LoadModule(); });
  return module;
}

}  // namespace

Status EnsurePython() {
  const PythonModule& m = Module();
  return m.check != nullptr ? Status::Ok() : UnavailableError(m.error);
}

Result<std::vector<LintIssue>> LintPythonText(std::string_view content, std::string_view path) {
  TALARIA_RETURN_IF_ERROR(EnsurePython());
  // compile() takes C strings: the caller has already refused NUL bytes in the content; a NUL
  // in the path would only cut the file name shown in tracebacks.
  const std::string source(content);
  std::string filename(path.substr(0, path.find('\0')));
  if (filename.empty()) filename = "<unknown>";
  talaria_pylint_issue raw{};
  const int rc = Module().check(source.c_str(), filename.c_str(), &raw);
  if (rc == 0) return std::vector<LintIssue>{};
  if (rc < 0) return Err(UnavailableError(raw.message));
  LintIssue issue;
  issue.line = raw.line;
  issue.column = raw.column;
  issue.kind = raw.kind;
  issue.message = CleanMessage(raw.message);
  return std::vector<LintIssue>{std::move(issue)};
}

Result<std::string> OutlinePythonJson(std::string_view content, std::string_view path) {
  TALARIA_RETURN_IF_ERROR(EnsurePython());
  const PythonModule& m = Module();
  if (m.outline == nullptr) {
    return Err(UnavailableError(TALARIA_PYLINT_MODULE " is from a build without Python outlines"));
  }
  if (content.find('\0') != std::string_view::npos) {
    return Err(InvalidArgumentError("the Python source contains a NUL byte"));
  }
  const std::string source(content);
  std::string filename(path.substr(0, path.find('\0')));
  if (filename.empty()) filename = "<unknown>";
  talaria_pylint_issue issue{};
  char* json = nullptr;
  const int rc = m.outline(source.c_str(), filename.c_str(), &json, &issue);
  if (rc < 0) return Err(UnavailableError(issue.message));
  if (rc > 0) {
    std::string where = issue.line > 0 ? " (line " + std::to_string(issue.line) + ")" : "";
    return Err(InvalidArgumentError(std::string(issue.kind[0] != '\0' ? issue.kind : "Error") +
                                    ": " + CleanMessage(issue.message) + where));
  }
  std::string out(json);
  m.free_text(json);
  return out;
}

}  // namespace talaria::lint_internal
