// Environment discovery by syntax tree (environment_scan.h).
#include "rl/environment_scan.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "talaria/base/file_io.h"

namespace talaria::rl {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxFiles = 1000;
constexpr uintmax_t kMaxFileBytes = uintmax_t{2} << 20;

std::string FirstLine(const std::string& text) {
  const size_t end = text.find('\n');
  std::string line = text.substr(0, end);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}

void AddEnvironments(const std::vector<lint::PythonClass>& classes, const fs::path& file,
                     std::vector<EnvironmentInfo>& out) {
  for (const lint::PythonClass& c : classes) {
    if (std::find(c.bases.begin(), c.bases.end(), "BaseEnv") == c.bases.end()) continue;
    EnvironmentInfo env;
    env.class_name = c.name;
    env.file_path = file.string();
    env.name = file.stem().string();
    if (const lint::PythonValue* n = c.Attribute("name"); n != nullptr && n->value &&
                                                          n->value->is_string() &&
                                                          !n->value->get<std::string>().empty()) {
      env.name = n->value->get<std::string>();
    }
    env.description = FirstLine(c.docstring);
    if (env.description.empty()) env.description = "Environment from " + file.filename().string();
    if (const lint::PythonValue* cfg = c.Attribute("env_config_cls");
        cfg != nullptr && !cfg->name.empty()) {
      env.config_class = cfg->name.substr(cfg->name.rfind('.') + 1);
    }
    for (const lint::PythonClass& other : classes) {
      if (other.name == env.config_class) env.config_fields = other.fields;
    }
    out.push_back(std::move(env));
  }
}

}  // namespace

Result<ScanResult> ScanEnvironments(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Err(NotFoundError("the environments directory " + dir + " does not exist"));
  }
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() != ".py" || p.filename().string().rfind('_', 0) == 0) continue;
    if (!it->is_regular_file(ec)) continue;
    files.push_back(p);
  }
  if (ec) return Err(UnavailableError("cannot list " + dir + ": " + ec.message()));
  std::sort(files.begin(), files.end());
  ScanResult result;
  if (files.size() > kMaxFiles) {
    result.skipped.push_back(std::to_string(files.size() - kMaxFiles) +
                             " files past the first 1000 were not scanned");
    files.resize(kMaxFiles);
  }
  for (const fs::path& file : files) {
    const uintmax_t size = fs::file_size(file, ec);
    if (ec || size > kMaxFileBytes) {
      result.skipped.push_back(file.filename().string() + ": larger than 2 MB");
      continue;
    }
    auto text = ReadWholeFile(file.string());
    if (!text) {
      result.skipped.push_back(file.filename().string() + ": " + text.error().message());
      continue;
    }
    auto classes = lint::OutlinePythonClasses(*text, file.string());
    if (!classes) {
      if (classes.error().code() == StatusCode::kUnavailable) return Err(classes.error());
      result.skipped.push_back(file.filename().string() + ": " + classes.error().message());
      continue;
    }
    AddEnvironments(*classes, file, result.environments);
  }
  return result;
}

}  // namespace talaria::rl
