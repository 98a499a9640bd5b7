// Environment discovery: the Python files of the environments directory, read as syntax trees
// by the embedded interpreter (lint/python_outline.h), never imported: a class deriving from
// `BaseEnv` is an environment. Its name is its `name = "..."` class attribute (else the file's
// stem), its description the docstring's first line, and its configuration class the one
// `env_config_cls` names; that class's annotated fields, when it is defined in the same file,
// are the environment's own configuration fields.
// Thread-safety: free functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/lint/python_outline.h"

namespace talaria::rl {

struct EnvironmentInfo {
  std::string name;
  std::string class_name;
  std::string file_path;
  std::string description;
  std::string config_class = "BaseEnvConfig";
  std::vector<lint::PythonField> config_fields;  // the config class's own, when found
};

struct ScanResult {
  std::vector<EnvironmentInfo> environments;  // by file name, then by position in the file
  std::vector<std::string> skipped;           // "<file>: <why>" for files that could not be read
};

// Scans `dir`'s *.py files (not those starting with "_"; at most 1,000 files of at most 2 MB).
// NotFound when `dir` does not exist; Unavailable when the interpreter cannot start.
Result<ScanResult> ScanEnvironments(const std::string& dir);

}  // namespace talaria::rl
