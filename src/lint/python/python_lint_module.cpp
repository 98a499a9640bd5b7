// libtalaria_python_lint.so: Debian's libpython3.11 embedded behind the C ABI of
// src/lint/python_lint_abi.h (libtalaria dlopens this module on the first Python lint).
//
// The interpreter starts once, isolated (no site import, no user site, no PYTHON* environment,
// no signal handlers, UTF-8 mode), and the starting thread then releases the GIL; every check
// takes the GIL through PyGILState (RAII below), compiles, converts any exception into an issue
// and clears the error indicator before letting go. The interpreter is never finalised: other
// threads may still be linting while the process exits.
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "lint/python_lint_abi.h"

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

void CopyText(const std::string& text, char* out, size_t size) {
  if (size == 0) return;
  const size_t n = std::min(text.size(), size - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

std::string StatusText(const char* what, const PyStatus& st) {
  std::string text = what;
  text += ": ";
  if (st.func != nullptr) {
    text += st.func;
    text += ": ";
  }
  text += st.err_msg != nullptr ? st.err_msg : "unknown error";
  return text;
}

// Empty when the interpreter runs.
std::string StartInterpreter() {
  if (Py_IsInitialized()) return {};  // the host already embeds Python
  PyPreConfig pre;
  PyPreConfig_InitIsolatedConfig(&pre);
  pre.utf8_mode = 1;
#if defined(__SANITIZE_ADDRESS__)
  // pymalloc's arenas hide live pointers from LeakSanitizer; plain malloc keeps reports clean.
  pre.allocator = PYMEM_ALLOCATOR_MALLOC;
#endif
  PyStatus st = Py_PreInitialize(&pre);
  if (PyStatus_Exception(st)) {
    return StatusText("embedded Python pre-initialisation failed", st);
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
  if (PyStatus_Exception(st)) return StatusText("embedded Python failed to start", st);
  // Hand the GIL back so that any thread (this one included) can take it with PyGILState.
  PyEval_SaveThread();
  return {};
}

const std::string& StartOnce() {
  static std::once_flag once;
  static std::string error;  // written once under `once`, read-only afterwards
  std::call_once(once, [] { error = StartInterpreter(); });
  return error;
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

// Turns the pending exception into `issue` and clears it. REQUIRES: the GIL, an exception set.
void TakeCompileError(talaria_pylint_issue& issue) {
  PyRef type;
  PyRef value;
  PyRef traceback;
  PyErr_Fetch(type.out(), value.out(), traceback.out());
  PyErr_NormalizeException(type.out(), value.out(), traceback.out());
  std::string kind = "SyntaxError";
  if (type.get() != nullptr && PyType_Check(type.get())) {
    const char* name = reinterpret_cast<PyTypeObject*>(type.get())->tp_name;
    if (name != nullptr) {
      const char* dot = std::strrchr(name, '.');
      kind = dot != nullptr ? dot + 1 : name;
    }
  }
  std::string message;
  if (value.get() != nullptr && PyErr_GivenExceptionMatches(type.get(), PyExc_SyntaxError)) {
    PyRef msg(PyObject_GetAttrString(value.get(), "msg"));
    if (msg.get() == nullptr) PyErr_Clear();
    message = ToText(msg.get());
    issue.line = IntAttr(value.get(), "lineno");
    issue.column = IntAttr(value.get(), "offset");
  } else {
    message = ToText(value.get());
  }
  if (message.empty()) {
    // The parser raises a bare MemoryError when its own stack limit is hit.
    message = PyErr_GivenExceptionMatches(type.get(), PyExc_MemoryError)
                  ? "source too deeply nested or too large to parse"
                  : "invalid syntax";
  }
  CopyText(kind, issue.kind, sizeof issue.kind);
  CopyText(message, issue.message, sizeof issue.message);
  PyErr_Clear();
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int talaria_pylint_start(char* error,
                                                                           unsigned long size) {
  const std::string& failure = StartOnce();
  if (failure.empty()) return 0;
  CopyText(failure, error, size);
  return -1;
}

extern "C" __attribute__((visibility("default"))) int talaria_pylint_check(
    const char* source, const char* filename, talaria_pylint_issue* issue) {
  *issue = talaria_pylint_issue{};
  if (const std::string& failure = StartOnce(); !failure.empty()) {
    CopyText(failure, issue->message, sizeof issue->message);
    return -1;
  }
  GilLock gil;
  PyCompilerFlags flags{};
  flags.cf_flags = 0;
  flags.cf_feature_version = PY_MINOR_VERSION;
  // Full compile (not ast.parse): also catches what the compiler rejects, such as 'return'
  // outside a function — the same verdict as `python3 -m py_compile`.
  PyRef code(Py_CompileStringExFlags(source, filename, Py_file_input, &flags, /*optimize=*/0));
  if (code.get() != nullptr) return 0;
  if (PyErr_Occurred() == nullptr) {
    CopyText("SystemError", issue->kind, sizeof issue->kind);
    CopyText("compile() failed without an exception", issue->message, sizeof issue->message);
    return 1;
  }
  TakeCompileError(*issue);
  return 1;
}

// --- Class outlines (talaria_pylint_outline) ----------------------------------------------
namespace {

// Our own Python, run in the embedded interpreter: parses the text it is given and walks the
// tree. Nothing of the scanned file runs; literal_eval only reads constants.
constexpr const char* kOutlineSource = R"py(
import ast, json

_NONE = object()

def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))

def _base_name(node):
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None

def _literal(node):
    try:
        value = ast.literal_eval(node)
        json.dumps(value, allow_nan=False)
        return {"value": value}
    except Exception:
        pass
    if isinstance(node, (ast.Name, ast.Attribute)):
        return {"name": _dotted(node)}
    return None

def _text(node):
    try:
        return ast.unparse(node)[:200]
    except Exception:
        return ""

def _field(item):
    field = {"name": item.target.id, "line": item.lineno, "annotation": _text(item.annotation)}
    value = item.value
    if isinstance(value, ast.Call) and _base_name(value.func) == "Field":
        for kw in value.keywords:
            if kw.arg == "default":
                field["default"] = _literal(kw.value)
            elif kw.arg == "description":
                d = _literal(kw.value)
                if d is not None and isinstance(d.get("value"), str):
                    field["description"] = d["value"]
        if "default" not in field and value.args:
            field["default"] = _literal(value.args[0])
    elif value is not None:
        field["default"] = _literal(value)
    return field

def outline(source, filename):
    tree = ast.parse(source, filename)
    classes = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        attributes = {}
        fields = []
        for item in node.body:
            if isinstance(item, ast.Assign):
                for target in item.targets:
                    if isinstance(target, ast.Name):
                        lit = _literal(item.value)
                        if lit is not None:
                            attributes[target.id] = lit
            elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                fields.append(_field(item))
                if item.value is not None:
                    lit = _literal(item.value)
                    if lit is not None:
                        attributes[item.target.id] = lit
        classes.append({
            "name": node.name,
            "line": node.lineno,
            "bases": [b for b in map(_base_name, node.bases) if b],
            "docstring": ast.get_docstring(node) or "",
            "attributes": attributes,
            "fields": fields,
        })
    return json.dumps(classes, allow_nan=False)
)py";

// The `outline` function, built once. REQUIRES: the GIL. Null (error cleared) when it fails.
PyObject* OutlineFunction() {
  static PyObject* fn = nullptr;  // written once under the GIL; never released
  if (fn != nullptr) return fn;
  PyRef code(Py_CompileString(kOutlineSource, "<talaria-outline>", Py_file_input));
  if (code.get() == nullptr) return nullptr;
  PyRef module(PyImport_ExecCodeModule("_talaria_outline", code.get()));
  if (module.get() == nullptr) return nullptr;
  fn = PyObject_GetAttrString(module.get(), "outline");
  return fn;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int talaria_pylint_outline(
    const char* source, const char* filename, char** json_out, talaria_pylint_issue* issue) {
  *issue = talaria_pylint_issue{};
  *json_out = nullptr;
  if (const std::string& failure = StartOnce(); !failure.empty()) {
    CopyText(failure, issue->message, sizeof issue->message);
    return -1;
  }
  GilLock gil;
  PyObject* fn = OutlineFunction();
  if (fn == nullptr) {
    PyErr_Clear();
    CopyText("the outline helper failed to load", issue->message, sizeof issue->message);
    return -1;
  }
  // Bytes that are not UTF-8 become U+FFFD rather than refusing the file.
  PyRef text(PyUnicode_DecodeUTF8(source, static_cast<Py_ssize_t>(std::strlen(source)), "replace"));
  PyRef name(
      PyUnicode_DecodeUTF8(filename, static_cast<Py_ssize_t>(std::strlen(filename)), "replace"));
  if (text.get() == nullptr || name.get() == nullptr) {
    TakeCompileError(*issue);
    return 1;
  }
  PyRef result(PyObject_CallFunctionObjArgs(fn, text.get(), name.get(), nullptr));
  if (result.get() == nullptr) {
    TakeCompileError(*issue);
    return 1;
  }
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(result.get(), &size);
  if (data == nullptr) {
    TakeCompileError(*issue);
    return 1;
  }
  char* copy = static_cast<char*>(std::malloc(static_cast<size_t>(size) + 1));
  if (copy == nullptr) {
    CopyText("out of memory", issue->message, sizeof issue->message);
    return -1;
  }
  std::memcpy(copy, data, static_cast<size_t>(size));
  copy[size] = '\0';
  *json_out = copy;
  return 0;
}

extern "C" __attribute__((visibility("default"))) void talaria_pylint_free(char* text) {
  std::free(text);
}
