// The Python check: Debian's libpython3.11 embedded in this process.
//
// The interpreter starts once, isolated (no site import, no user site, no PYTHON* environment,
// no signal handlers, UTF-8 mode), and the starting thread then releases the GIL; every lint
// takes the GIL through PyGILState (RAII below), compiles, converts any exception into issues
// and clears the error indicator before letting go. The interpreter is never finalised: other
// threads may still be linting while the process exits.
#include <cstring>
#include <mutex>
#include <string>

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "lint/linters.h"

namespace talaria::lint_internal {
namespace {

// Holds the GIL for one scope, from any thread (creates a thread state when the thread has none).
class GilLock {
 public:
  GilLock() : state_(PyGILState_Ensure()) {}
  ~GilLock() { PyGILState_Release(state_); }
  GilLock(const GilLock&) = delete;
  GilLock& operator=(const GilLock&) = delete;

 private:
  PyGILState_STATE state_;
};

// Owns one reference.
class PyRef {
 public:
  explicit PyRef(PyObject* obj = nullptr) : obj_(obj) {}
  ~PyRef() { Py_XDECREF(obj_); }
  PyRef(const PyRef&) = delete;
  PyRef& operator=(const PyRef&) = delete;
  PyObject* get() const { return obj_; }
  PyObject** out() { return &obj_; }

 private:
  PyObject* obj_;
};

std::string StatusText(const PyStatus& st) {
  std::string text = st.err_msg != nullptr ? st.err_msg : "unknown error";
  if (st.func != nullptr) text = std::string(st.func) + ": " + text;
  return text;
}

Status StartInterpreter() {
  if (Py_IsInitialized()) return Status::Ok();  // the host already embeds Python
  PyPreConfig pre;
  PyPreConfig_InitIsolatedConfig(&pre);
  pre.utf8_mode = 1;
#if defined(__SANITIZE_ADDRESS__)
  // pymalloc's arenas hide live pointers from LeakSanitizer; plain malloc keeps reports clean.
  pre.allocator = PYMEM_ALLOCATOR_MALLOC;
#endif
  PyStatus st = Py_PreInitialize(&pre);
  if (PyStatus_Exception(st)) {
    return UnavailableError("embedded Python pre-initialisation failed: " + StatusText(st));
  }
  PyConfig config;
  PyConfig_InitIsolatedConfig(&config);
  config.site_import = 0;
  config.user_site_directory = 0;
  config.use_environment = 0;
  config.install_signal_handlers = 0;
  config.write_bytecode = 0;
  config.parse_argv = 0;
  config.pathconfig_warnings = 0;
  st = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(st)) {
    return UnavailableError("embedded Python failed to start: " + StatusText(st));
  }
  // Hand the GIL back so that any thread (this one included) can take it with PyGILState.
  PyEval_SaveThread();
  return Status::Ok();
}

// str(obj) as UTF-8, or "" (clearing any error) when that fails.
std::string ToText(PyObject* obj) {
  if (obj == nullptr || obj == Py_None) return {};
  PyRef str(PyObject_Str(obj));
  if (str.get() == nullptr) {
    PyErr_Clear();
    return {};
  }
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(str.get(), &size);
  if (data == nullptr) {
    PyErr_Clear();
    return {};
  }
  return std::string(data, static_cast<size_t>(size));
}

int IntAttr(PyObject* obj, const char* name) {
  PyRef value(PyObject_GetAttrString(obj, name));
  if (value.get() == nullptr) {
    PyErr_Clear();
    return 0;
  }
  if (value.get() == Py_None || !PyLong_Check(value.get())) return 0;
  const long v = PyLong_AsLong(value.get());
  if (v == -1 && PyErr_Occurred() != nullptr) {
    PyErr_Clear();
    return 0;
  }
  return v < 0 ? 0 : (v > 0x7fffffff ? 0x7fffffff : static_cast<int>(v));
}

// Turns the pending exception into an issue and clears it. REQUIRES: the GIL, an exception set.
LintIssue TakeCompileError() {
  PyRef type;
  PyRef value;
  PyRef traceback;
  PyErr_Fetch(type.out(), value.out(), traceback.out());
  PyErr_NormalizeException(type.out(), value.out(), traceback.out());
  LintIssue issue;
  issue.kind = "SyntaxError";
  if (type.get() != nullptr && PyType_Check(type.get())) {
    const char* name = reinterpret_cast<PyTypeObject*>(type.get())->tp_name;
    if (name != nullptr) {
      const char* dot = std::strrchr(name, '.');
      issue.kind = dot != nullptr ? dot + 1 : name;
    }
  }
  if (value.get() != nullptr && PyErr_GivenExceptionMatches(type.get(), PyExc_SyntaxError)) {
    PyRef msg(PyObject_GetAttrString(value.get(), "msg"));
    if (msg.get() == nullptr) PyErr_Clear();
    issue.message = ToText(msg.get());
    issue.line = IntAttr(value.get(), "lineno");
    issue.column = IntAttr(value.get(), "offset");
  } else {
    issue.message = ToText(value.get());
  }
  if (issue.message.empty()) {
    // The parser raises a bare MemoryError when its own stack limit is hit.
    issue.message = PyErr_GivenExceptionMatches(type.get(), PyExc_MemoryError)
                        ? "source too deeply nested or too large to parse"
                        : "invalid syntax";
  }
  issue.message = CleanMessage(issue.message);
  PyErr_Clear();
  return issue;
}

}  // namespace

Status EnsurePython() {
  static std::once_flag once;
  static Status status;  // written once under `once`, read-only afterwards
  std::call_once(once, [] { status = StartInterpreter(); });
  return status;
}

Result<std::vector<LintIssue>> LintPythonText(std::string_view content, std::string_view path) {
  TALARIA_RETURN_IF_ERROR(EnsurePython());
  // compile() takes C strings: the caller has already refused NUL bytes in the content; a NUL
  // in the path would only cut the file name shown in tracebacks.
  const std::string source(content);
  std::string filename(path.substr(0, path.find('\0')));
  if (filename.empty()) filename = "<unknown>";

  GilLock gil;
  PyCompilerFlags flags{};
  flags.cf_flags = 0;
  flags.cf_feature_version = PY_MINOR_VERSION;
  // Full compile (not ast.parse): also catches what the compiler rejects, such as 'return'
  // outside a function — the same verdict as `python3 -m py_compile`.
  PyRef code(Py_CompileStringExFlags(source.c_str(), filename.c_str(), Py_file_input, &flags,
                                     /*optimize=*/0));
  if (code.get() != nullptr) return std::vector<LintIssue>{};
  if (PyErr_Occurred() == nullptr) {
    return std::vector<LintIssue>{LintIssue{0, 0, "compile() failed without an exception",
                                            "SystemError", LintIssue::Category::kSyntax}};
  }
  return std::vector<LintIssue>{TakeCompileError()};
}

}  // namespace talaria::lint_internal
