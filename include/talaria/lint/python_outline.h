// The classes a Python file defines, read from its syntax tree by the embedded interpreter's
// `ast` module without running the file (the RL tools discover training environments this
// way; importing an environment would run whatever it does at import time).
// Thread-safety: thread-safe (serialises on the GIL, like the Python lint).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "talaria/base/json.h"
#include "talaria/base/status.h"

namespace talaria::lint {

// A value written in the source: a literal (`value`, as JSON) or a name (`Foo`, `mod.Foo`).
struct PythonValue {
  std::optional<Json> value;  // set for literals ast.literal_eval reads and JSON can hold
  std::string name;           // set for a bare or dotted name
};

// An annotated class-level assignment (`group_size: int = Field(default=8, description=...)`).
struct PythonField {
  std::string name;
  int line = 0;
  std::string annotation;                    // the annotation's source text, at most 200 chars
  std::optional<PythonValue> default_value;  // the value, or Field(default=...)'s
  std::string description;                   // Field(description="...")
};

struct PythonClass {
  std::string name;
  int line = 0;
  // The bases' last names: `BaseEnv` for both `BaseEnv` and `atroposlib.envs.BaseEnv`, `Generic`
  // for `Generic[T]`.
  std::vector<std::string> bases;
  std::string docstring;  // cleaned (inspect.cleandoc), "" when none
  // Class-level `x = <literal or name>` and `x: T = <...>` assignments, by name, in order.
  std::vector<std::pair<std::string, PythonValue>> attributes;
  std::vector<PythonField> fields;

  const PythonValue* Attribute(std::string_view name) const;
};

// Every class in `source` (nested ones too), in the order ast.walk visits them. `path` names the
// file in messages. Errors: InvalidArgument (the source does not parse: "SyntaxError: ... (line
// N)", or contains a NUL byte), Unavailable (the interpreter could not start).
Result<std::vector<PythonClass>> OutlinePythonClasses(std::string_view source,
                                                      std::string_view path);

}  // namespace talaria::lint
