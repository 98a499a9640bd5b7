#include "talaria/core/project_config.h"

#include <fcntl.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/path_scope.h"
#include "talaria/base/file_io.h"
#include "talaria/base/paths.h"
#include "talaria/base/sha256.h"
#include "talaria/core/config.h"

namespace talaria {
namespace {

constexpr int kTrustStoreVersion = 1;
// The pinned "hash" of a project path that did not exist when trusted.
constexpr std::string_view kAbsent = "absent";

Result<std::optional<std::string>> ReadIfPresent(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return std::optional<std::string>();
    return Err(UnavailableError("cannot read " + path));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return std::optional<std::string>(buffer.str());
}

// {"version": 1, "files": {"<absolute path>": "<sha256>"}}; a missing store is empty.
Result<Json> ReadTrustStore(const std::string& trust_store) {
  auto text = TALARIA_TRY(ReadIfPresent(trust_store));
  Json store = {{"version", kTrustStoreVersion}, {"files", Json::object()}};
  if (!text) return store;
  auto parsed = ParseJson(*text);
  if (!parsed || !parsed->is_object() || !parsed->contains("files") ||
      !(*parsed)["files"].is_object()) {
    return Err(UnavailableError(trust_store +
                                " is corrupt; remove it and trust the project configs again"));
  }
  return *parsed;
}

Status WriteTrustStore(const Json& store, const std::string& trust_store) {
  const size_t slash = trust_store.rfind('/');
  if (slash != std::string::npos) ::mkdir(trust_store.substr(0, slash).c_str(), 0700);
  std::string text = store.dump(2);
  text.push_back('\n');
  return WriteFileAtomic(trust_store, text);
}

// `path` made absolute against the current directory and normalised lexically; symlinks are
// left in place (trust belongs to the place a config was found, not to what it points at).
std::string AbsoluteLexical(const std::string& path) {
  if (!path.empty() && path[0] == '/') return NormalizeAbsolutePath(path);
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd) == nullptr) return NormalizeAbsolutePath("/" + path);
  return NormalizeAbsolutePath(std::string(cwd) + "/" + path);
}

// The words of a command line that could name a file: split at blanks (inside quotes too, so
// `sh -c "python3 x.py"` yields x.py), shell operators and `=` (`--config=x.yaml`), quotes
// removed, a leading $TALARIA_PROJECT_DIR / $CLAUDE_PROJECT_DIR replaced by the project.
std::vector<std::string> FileWords(std::string_view command, const std::string& project) {
  std::vector<std::string> words;
  std::string word;
  char quote = 0;
  auto flush = [&] {
    for (std::string_view var : {"${TALARIA_PROJECT_DIR}", "$TALARIA_PROJECT_DIR",
                                 "${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR"}) {
      if (word.starts_with(var)) word = project + word.substr(var.size());
    }
    if (!word.empty()) words.push_back(std::move(word));
    word.clear();
  };
  for (char c : command) {
    if (quote != 0 && c == quote) {
      quote = 0;
    } else if (quote == 0 && (c == '\'' || c == '"')) {
      quote = c;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
               c == '>' || c == '(' || c == ')' || c == '`' || c == '=') {
      flush();
    } else {
      word += c;
    }
  }
  flush();
  return words;
}

// Regular files inside `project` that the hooks' and servers' command lines name.
std::vector<PinnedFile> ExecutedFiles(const ProjectConfig& config, const std::string& project) {
  std::vector<std::string> lines;
  if (config.hooks) {
    for (const auto& [event, groups] : config.hooks->items()) {
      if (!groups.is_array()) continue;
      for (const auto& group : groups) {
        if (!group.is_object() || !group.contains("hooks") || !group["hooks"].is_array()) continue;
        for (const auto& hook : group["hooks"]) lines.push_back(JsonStringField(hook, "command"));
      }
    }
  }
  if (config.mcp_servers) {
    for (const auto& [name, entry] : config.mcp_servers->items()) {
      lines.push_back(JsonStringField(entry, "command"));
      if (entry.is_object() && entry.contains("args") && entry["args"].is_array()) {
        for (const auto& a : entry["args"]) {
          if (a.is_string()) lines.push_back(a.get<std::string>());
        }
      }
    }
  }
  std::vector<PinnedFile> files;
  const std::string project_real = [&] {
    char* r = ::realpath(project.c_str(), nullptr);
    std::string out = r != nullptr ? r : project;
    ::free(r);
    return out;
  }();
  for (const std::string& line : lines) {
    for (const std::string& word : FileWords(line, project)) {
      const std::string candidate = AbsoluteLexical(word[0] == '/' ? word : project + "/" + word);
      char* real = ::realpath(candidate.c_str(), nullptr);
      if (real == nullptr) {
        // A project path the config names that does not exist yet: pinned as absent, or
        // whoever creates it later (a model writing the workspace) would run under the trust.
        if (errno == ENOENT && word.find('/') != std::string::npos &&
            candidate.starts_with(project + "/")) {
          files.push_back({candidate, std::string(kAbsent)});
        }
        continue;
      }
      const std::string real_path = real;
      ::free(real);
      if (!real_path.starts_with(project_real + "/")) continue;  // not the project's
      struct stat st {};
      if (::stat(real_path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      auto content = ReadIfPresent(real_path);
      if (!content || !*content) continue;
      files.push_back({real_path, Sha256Hex(**content)});
    }
  }
  std::sort(files.begin(), files.end(),
            [](const PinnedFile& a, const PinnedFile& b) { return a.path < b.path; });
  files.erase(
      std::unique(files.begin(), files.end(),
                  [](const PinnedFile& a, const PinnedFile& b) { return a.path == b.path; }),
      files.end());
  return files;
}

std::string Names(const Json& object) {
  std::string out;
  if (!object.is_object()) return out;
  for (const auto& [name, value] : object.items()) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace

std::string ProjectConfig::DescribeCode() const {
  std::string out;
  if (mcp_servers) {
    out += "mcp_servers (";
    out += Names(*mcp_servers);
    out += ")";
  }
  if (hooks) {
    if (!out.empty()) out += " and ";
    out += "hooks (";
    out += Names(*hooks);
    out += ")";
  }
  return out;
}

std::string ProjectConfigPath(std::string_view dir) {
  std::string out(dir.empty() ? "." : dir);
  if (out.back() != '/') out.push_back('/');
  out += ".talaria/config.yaml";
  return out;
}

std::string TrustStorePath() { return TalariaHome() + "/trusted.json"; }

Result<std::optional<ProjectConfig>> LoadProjectConfig(const std::string& path,
                                                       const std::string& trust_store) {
  auto text = TALARIA_TRY(ReadIfPresent(path));
  if (!text) return std::optional<ProjectConfig>();
  ProjectConfig config;
  config.path = AbsoluteLexical(path);
  auto parsed = ParseYaml(*text);
  if (!parsed) return Err(InvalidArgumentError(config.path + ": " + parsed.error().message()));
  Json root = std::move(*parsed);
  if (root.is_null()) root = Json::object();
  if (!root.is_object())
    return Err(InvalidArgumentError(config.path + ": the top level must be a mapping"));
  for (auto& [key, value] : root.items()) {
    if (key == "mcp_servers") {
      if (value.is_null()) continue;
      if (!value.is_object())
        return Err(InvalidArgumentError(config.path + ": mcp_servers must be a mapping"));
      config.mcp_servers = std::make_shared<const Json>(value);
    } else if (key == "hooks") {
      if (value.is_null()) continue;
      if (!value.is_object())
        return Err(InvalidArgumentError(config.path + ": hooks must be a mapping"));
      config.hooks = std::make_shared<const Json>(value);
    } else {
      config.ignored.push_back(key);
    }
  }
  // <project>/.talaria/config.yaml: the project is two levels up.
  std::string project = config.path.substr(0, config.path.rfind('/'));
  project = project.substr(0, std::max<size_t>(project.rfind('/'), 1));
  config.executed_files = ExecutedFiles(config, project);
  Sha256 digest;
  digest.Update(*text);
  for (const PinnedFile& f : config.executed_files) {
    digest.Update("\n--- runs ");
    digest.Update(f.path);
    digest.Update(" ");
    digest.Update(f.sha256);
  }
  config.sha256 = digest.FinalHex();
  const Json store = TALARIA_TRY(ReadTrustStore(trust_store));
  const Json& files = store["files"];
  auto it = files.find(config.path);
  config.trusted = it != files.end() && it->is_string() && it->get<std::string>() == config.sha256;
  return std::optional<ProjectConfig>(std::move(config));
}

Status CheckPinnedFiles(const std::vector<PinnedFile>& files) {
  for (const PinnedFile& f : files) {
    if (f.sha256 == kAbsent) {
      struct stat st {};
      if (::lstat(f.path.c_str(), &st) == 0) {
        return FailedPreconditionError(
            f.path +
            " appeared since the config was trusted; review it, then run "
            "`talaria trust` again");
      }
      continue;
    }
    // Not through a symlink, not a FIFO (which would hang the check): only the regular file.
    auto content = ReadWholeFile(f.path);
    if (!content || Sha256Hex(*content) != f.sha256) {
      return FailedPreconditionError(f.path +
                                     " changed since it was trusted; review it, then run "
                                     "`talaria trust` again");
    }
  }
  return Status::Ok();
}

Status TrustProjectConfig(const ProjectConfig& config, const std::string& trust_store) {
  Json store = TALARIA_TRY(ReadTrustStore(trust_store));
  store["version"] = kTrustStoreVersion;
  store["files"][config.path] = config.sha256;
  return WriteTrustStore(store, trust_store);
}

Status RevokeProjectConfig(const std::string& path, const std::string& trust_store) {
  Json store = TALARIA_TRY(ReadTrustStore(trust_store));
  if (store["files"].erase(path) == 0) return NotFoundError(path + " is not trusted");
  return WriteTrustStore(store, trust_store);
}

}  // namespace talaria
