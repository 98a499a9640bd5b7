#include "tools/code/stub_module.h"

#include <algorithm>
#include <string_view>

#include "talaria/base/json.h"

namespace talaria::tools::code {
namespace {

struct Param {
  std::string_view name;
  std::string_view default_value;  // Python literal; empty: required
};

struct Signature {
  std::string_view tool;
  std::vector<Param> params;
};

// The original's stub signatures (tools/code_execution_tool.py).
const std::vector<Signature>& Signatures() {
  static const std::vector<Signature> kSignatures = {
      {"patch",
       {{"path", "None"},
        {"old_string", "None"},
        {"new_string", "None"},
        {"replace_all", "False"},
        {"mode", "\"replace\""},
        {"patch", "None"},
        {"cross_profile", "False"}}},
      {"read_file", {{"path", ""}, {"offset", "1"}, {"limit", "2000"}}},
      {"search_files",
       {{"pattern", ""},
        {"target", "\"content\""},
        {"path", "\".\""},
        {"file_glob", "None"},
        {"limit", "50"},
        {"offset", "0"},
        {"output_mode", "\"content\""},
        {"context", "0"},
        {"order", "\"discovery\""}}},
      {"terminal", {{"command", ""}, {"timeout", "None"}, {"workdir", "None"}}},
      {"web_extract", {{"urls", ""}, {"char_limit", "None"}}},
      {"web_search", {{"query", ""}, {"limit", "5"}}},
      {"write_file", {{"path", ""}, {"content", ""}, {"cross_profile", "False"}}},
  };
  return kSignatures;
}

const Signature* Find(std::string_view tool) {
  for (const Signature& s : Signatures()) {
    if (s.tool == tool) return &s;
  }
  return nullptr;
}

// The transport and helpers; tool stubs are appended after it.
constexpr std::string_view kModuleHead =
    R"py("""Tools of the talaria session running this script (execute_code).

Each function sends one request over the socket this interpreter inherited as descriptor 3 and
returns the tool's result, parsed from JSON when it is JSON. Calls go through talaria's
dispatcher like direct calls: the same validation, command guard, approvals and budgets.
Calls from several threads may be in flight at once.
"""
import json as _json
import socket as _socket
import struct as _struct
import threading as _threading
import time as _time

_FD = 3
_TIMEOUT = 300.0
_MAX_FRAME = 16 << 20

try:
    _sock = _socket.socket(fileno=_FD)
except OSError as _e:
    raise ImportError("talaria_tools works only inside talaria's execute_code (no RPC socket on fd 3)") from _e

_cond = _threading.Condition()   # guards _next_id, _results, _reading, _broken
_send_lock = _threading.Lock()
_next_id = 1
_results = {}
_reading = False
_broken = None


def _recv_exact(n):
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = _sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ConnectionError("talaria closed the execute_code RPC channel")
        got += k
    return bytes(buf)


def _read_frame():
    (n,) = _struct.unpack(">I", _recv_exact(4))
    if n > _MAX_FRAME:
        raise ConnectionError("oversized frame on the execute_code RPC channel")
    return _json.loads(_recv_exact(n))


def _decode(msg):
    if "error" in msg:
        return {"error": msg["error"]}
    text = msg.get("result", "")
    try:
        return _json.loads(text)
    except ValueError:
        return text


def _call(tool, args):
    global _next_id, _reading, _broken
    with _cond:
        if _broken:
            raise ConnectionError(_broken)
        rid = _next_id
        _next_id += 1
    body = _json.dumps({"id": rid, "tool": tool, "args": args}, ensure_ascii=False).encode("utf-8")
    with _send_lock:
        _sock.sendall(_struct.pack(">I", len(body)) + body)
    deadline = _time.monotonic() + _TIMEOUT
    with _cond:
        while True:
            if rid in _results:
                return _decode(_results.pop(rid))
            if _broken:
                raise ConnectionError(_broken)
            if not _reading:
                _reading = True
                break
            left = deadline - _time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from talaria for %s within %ds" % (tool, _TIMEOUT))
            _cond.wait(left)
    # This thread reads for everyone until its own answer arrives.
    try:
        while True:
            msg = _read_frame()
            with _cond:
                if msg.get("id") == rid:
                    return _decode(msg)
                _results[msg.get("id")] = msg
                _cond.notify_all()
    except BaseException as e:
        with _cond:
            _broken = "execute_code RPC channel failed: %r" % (e,)
        raise
    finally:
        with _cond:
            _reading = False
            _cond.notify_all()


def _args(**kwargs):
    return {k: v for k, v in kwargs.items() if v is not None}


def json_parse(text):
    """Parses JSON leniently: control characters allowed in strings, a BOM ignored."""
    if isinstance(text, (dict, list)):
        return text
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    return _json.loads(text.lstrip("\ufeff"), strict=False)


def shell_quote(s):
    """Quotes a string for a POSIX shell command line."""
    import shlex
    return shlex.quote(str(s))


def retry(fn, max_attempts=3, delay=2):
    """Calls fn() until it returns without raising, waiting delay, 2*delay, ... between tries."""
    for attempt in range(max_attempts):
        try:
            return fn()
        except Exception:
            if attempt + 1 >= max_attempts:
                raise
            _time.sleep(delay * (2 ** attempt))

)py";

constexpr std::string_view kBootstrap = R"py(import os, sys
os.write(3, b'\x00\x00\x00\x0c{"hello": 1}')
sys.dont_write_bytecode = True
sys.stdout.reconfigure(line_buffering=True)
_script, _stubs = sys.argv[1], sys.argv[2]
sys.argv = [_script]
sys.path.insert(0, _stubs)
_main = type(sys)("__main__")
_main.__file__ = _script
_main.__builtins__ = __builtins__
sys.modules["__main__"] = _main
with open(_script, "rb") as _f:
    _code = compile(_f.read(), _script, "exec")
del os, _f, _stubs, _script
exec(_code, _main.__dict__)
)py";

}  // namespace

const std::vector<std::string>& StubbedToolNames() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const Signature& s : Signatures()) names.emplace_back(s.tool);
    std::sort(names.begin(), names.end());
    return names;
  }();
  return kNames;
}

std::string StubSignature(const std::string& tool) {
  const Signature* sig = Find(tool);
  if (sig == nullptr) return {};
  std::string text(sig->tool);
  text += "(";
  for (size_t i = 0; i < sig->params.size(); ++i) {
    if (i > 0) text += ", ";
    text += sig->params[i].name;
    if (!sig->params[i].default_value.empty()) {
      text += "=";
      text += sig->params[i].default_value;
    }
  }
  text += ")";
  return text;
}

std::string AdvertisedSignature(const std::string& tool,
                                const std::vector<std::string>& schema_params) {
  const Signature* sig = Find(tool);
  if (sig == nullptr) return {};
  std::string text(sig->tool);
  text += "(";
  bool first = true;
  for (const Param& param : sig->params) {
    if (std::find(schema_params.begin(), schema_params.end(), param.name) == schema_params.end())
      continue;
    if (!first) text += ", ";
    first = false;
    text += param.name;
    if (!param.default_value.empty()) {
      text += "=";
      text += param.default_value;
    }
  }
  text += ")";
  return text;
}

std::string TalariaToolsModule(const std::vector<StubTool>& tools) {
  std::string source(kModuleHead);
  std::string all = "__all__ = [\"json_parse\", \"shell_quote\", \"retry\"";
  for (const StubTool& tool : tools) {
    const Signature* sig = Find(tool.name);
    if (sig == nullptr) continue;
    source += "\ndef ";
    source += StubSignature(tool.name);
    source += ":\n    ";
    source += JsonQuote(tool.description);  // a JSON string literal is a valid Python one
    source += "\n    return _call(";
    source += JsonQuote(tool.name);
    source += ", _args(";
    bool first = true;
    for (const Param& p : sig->params) {
      // Parameters the registered schema does not know (cross_profile here) are accepted for
      // compatibility and not sent: validation would reject them.
      if (std::find(tool.schema_params.begin(), tool.schema_params.end(), p.name) ==
          tool.schema_params.end())
        continue;
      if (!first) source += ", ";
      first = false;
      source += p.name;
      source += "=";
      source += p.name;
    }
    source += "))\n\n";
    all += ", ";
    all += JsonQuote(tool.name);
  }
  all += "]\n";
  source += "\n";
  source += all;
  return source;
}

std::string HermesToolsModule() {
  return "\"\"\"The original's name for talaria_tools: scripts written for it run "
         "unchanged.\"\"\"\n"
         "from talaria_tools import *  # noqa: F401,F403\n"
         "from talaria_tools import __all__  # noqa: F401\n";
}

std::string BootstrapProgram() { return std::string(kBootstrap); }

}  // namespace talaria::tools::code
