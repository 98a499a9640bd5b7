// PushTree and PullChanged: local tar (the system's GNU tar) on this side, tar and base64 on
// the far side; the sync stamp lives in the far side's /tmp, named after the remote directory.
// The listings: std::filesystem and lstat here, GNU find there; names travel NUL-separated
// inside base64 (the services carry JSON text, and a name may hold any byte but NUL and '/').
#include "talaria/sandboxes/file_sync.h"
#include "talaria/base/base64.h"

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>

#include "sandboxes/api_http.h"
#include "talaria/base/sha256.h"
#include "talaria/base/shell_words.h"
#include "talaria/base/subprocess.h"

namespace talaria::sandboxes {
namespace {

std::string StampPath(const std::string& remote_dir) {
  return "/tmp/.talaria-sync-" + Sha256Hex(remote_dir).substr(0, 16);
}

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Whether every member of `archive` is a regular file or a directory with a relative name
// free of "..": `tar -tv` lists the type as the first character of each line.
Status CheckArchive(const std::string& archive, const SyncOptions& options) {
  SpawnOptions list;
  list.argv = {"tar", "-t", "-v", "--quoting-style=escape", "-f", "-"};
  list.stdin_data = archive;
  list.timeout = options.timeout;
  list.max_output_bytes = options.max_bytes;
  ProcessResult listed = TALARIA_TRY(RunProcess(list));
  if (listed.exit_code != 0) return InvalidArgumentError("sync: not a tar archive");
  SpawnOptions names = list;
  names.argv = {"tar", "-t", "--quoting-style=escape", "-f", "-"};
  ProcessResult named = TALARIA_TRY(RunProcess(names));
  size_t at = 0;
  const std::string& v = listed.stdout_text;
  while (at < v.size()) {
    const char type = v[at];
    if (type != '-' && type != 'd') {
      return InvalidArgumentError("sync: the archive holds something other than files");
    }
    at = v.find('\n', at);
    if (at == std::string::npos) break;
    ++at;
  }
  const std::string& n = named.stdout_text;
  for (size_t start = 0; start < n.size();) {
    size_t end = n.find('\n', start);
    if (end == std::string::npos) end = n.size();
    const std::string name = n.substr(start, end - start);
    if (!name.empty() && (name[0] == '/' || name == ".." || name.rfind("../", 0) == 0 ||
                          name.find("/../") != std::string::npos ||
                          (name.size() >= 3 && name.compare(name.size() - 3, 3, "/..") == 0))) {
      return InvalidArgumentError("sync: the archive names a path outside the directory: " + name);
    }
    start = end + 1;
  }
  return Status::Ok();
}

// `names` NUL-terminated, each one.
std::string NulJoined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) {
    out += n;
    out += '\0';
  }
  return out;
}

// find's arguments up to -printf for a tree without the excluded names, and the listing as
// base64 of "<mtime> <size> <path>\0" records.
std::string RemoteListingCommand(const SyncOptions& options) {
  std::string s = "find .";
  if (!options.exclude.empty()) {
    s += " \\(";
    for (size_t i = 0; i < options.exclude.size(); ++i) {
      s += (i == 0 ? " -name " : " -o -name ") + ShellQuote(options.exclude[i]);
    }
    s += " \\) -prune -o";
  }
  return s + " -type f -printf '%T@ %s %P\\0' | base64 -w0";
}

Result<TreeListing> ParseRemoteListing(std::string_view base64) {
  auto text = Base64Decode(base64);
  if (!text) return Err(InvalidArgumentError("sync: the far side sent no base64 listing"));
  TreeListing listing;
  for (size_t start = 0; start < text->size();) {
    const size_t end = text->find('\0', start);
    if (end == std::string::npos) {
      return Err(InvalidArgumentError("sync: the far side's listing is cut short"));
    }
    const std::string_view record(text->data() + start, end - start);
    const size_t first = record.find(' ');
    const size_t second = first == std::string_view::npos ? first : record.find(' ', first + 1);
    if (second == std::string_view::npos || second + 1 >= record.size()) {
      return Err(InvalidArgumentError("sync: a listing record is malformed"));
    }
    listing[std::string(record.substr(second + 1))] = std::string(record.substr(0, second));
    start = end + 1;
  }
  return listing;
}

bool Excluded(const std::filesystem::path& rel, const SyncOptions& options) {
  for (const auto& part : rel) {
    for (const std::string& pattern : options.exclude) {
      if (part == pattern) return true;
    }
  }
  return false;
}

}  // namespace

Status PushTree(env::Environment& env, const std::string& local_dir, const std::string& remote_dir,
                const SyncOptions& options) {
  if (!IsDirectory(local_dir)) return NotFoundError("sync: no directory " + local_dir);
  SpawnOptions pack;
  pack.argv = {"tar", "-c", "-f", "-", "-C", local_dir};
  for (const std::string& pattern : options.exclude) pack.argv.push_back("--exclude=" + pattern);
  if (options.newer_than_epoch_s > 0) {
    pack.argv.push_back("--newer-mtime=@" + std::to_string(options.newer_than_epoch_s));
  }
  pack.argv.emplace_back(".");
  pack.timeout = options.timeout;
  pack.max_output_bytes = options.max_bytes + 1;
  ProcessResult packed = TALARIA_TRY(RunProcess(pack));
  if (packed.stdout_total_bytes > options.max_bytes) {
    return ResourceExhaustedError("sync: " + local_dir + " is larger than the sync limit");
  }
  if (packed.exit_code != 0) {
    return UnavailableError("sync: tar failed on " + local_dir + ": " + packed.stderr_text);
  }
  const std::string dir = ShellQuote(remote_dir);
  env::CommandOptions run;
  run.timeout = options.timeout;
  run.stdin_data = Base64Encode(packed.stdout_text);
  // In a subshell: the session's working directory stays where it was.
  auto r = env.Run("(mkdir -p " + dir + " && base64 -d | tar -x --no-same-owner -f - -C " + dir +
                       " && touch " + ShellQuote(StampPath(remote_dir)) + ")",
                   run);
  if (!r) return r.error();
  if (r->exit_code != 0) return UnavailableError("sync: unpacking failed: " + r->output);
  return Status::Ok();
}

Result<std::vector<std::string>> PullChanged(env::Environment& env, const std::string& remote_dir,
                                             const std::string& local_dir,
                                             const SyncOptions& options) {
  if (!IsDirectory(local_dir)) return Err(NotFoundError("sync: no directory " + local_dir));
  const std::string stamp = ShellQuote(StampPath(remote_dir));
  // The next stamp is taken before the listing: a file changed while tar runs comes back again
  // next time rather than never.
  env::CommandOptions run;
  run.timeout = options.timeout;
  run.max_output_bytes = options.max_bytes * 4 / 3 + 8;
  // In a subshell: the session's working directory stays where it was.
  auto r = env.Run("(cd " + ShellQuote(remote_dir) + " || exit 1; touch " + stamp +
                       ".next; { if [ -e " + stamp + " ]; then find . -type f -newer " + stamp +
                       " -print0; else find . -type f -print0; fi; } | tar -c --null -T - -f - "
                       "| base64 -w0 && mv -f " +
                       stamp + ".next " + stamp + ")",
                   run);
  if (!r) return Err(r.error());
  if (r->exit_code != 0) return Err(UnavailableError("sync: packing failed: " + r->output));
  if (r->output_total_bytes > r->output.size()) {
    return Err(ResourceExhaustedError("sync: the changes are larger than the sync limit"));
  }
  auto archive = Base64Decode(r->output);
  if (!archive) return Err(InvalidArgumentError("sync: the far side sent no base64"));
  std::vector<std::string> changed;
  if (archive->empty()) return changed;
  TALARIA_RETURN_IF_ERROR(CheckArchive(*archive, options));
  SpawnOptions unpack;
  unpack.argv = {"tar", "-x", "-v", "--no-same-owner", "-f", "-", "-C", local_dir};
  unpack.stdin_data = std::move(*archive);
  unpack.timeout = options.timeout;
  ProcessResult unpacked = TALARIA_TRY(RunProcess(unpack));
  if (unpacked.exit_code != 0) {
    return Err(UnavailableError("sync: unpacking locally failed: " + unpacked.stderr_text));
  }
  const std::string& out = unpacked.stdout_text;
  for (size_t start = 0; start < out.size();) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    std::string name = out.substr(start, end - start);
    if (name.rfind("./", 0) == 0) name.erase(0, 2);
    if (!name.empty() && name.back() != '/') changed.push_back(std::move(name));
    start = end + 1;
  }
  return changed;
}

}  // namespace talaria::sandboxes

namespace talaria::sandboxes {

TreeChanges DiffListings(const TreeListing& before, const TreeListing& after) {
  TreeChanges changes;
  for (const auto& [path, stamp] : after) {
    auto it = before.find(path);
    if (it == before.end() || it->second != stamp) changes.changed.push_back(path);
  }
  for (const auto& [path, stamp] : before) {
    if (!after.contains(path)) changes.deleted.push_back(path);
  }
  return changes;
}

Result<std::string> LocalFileStamp(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    return Err(errno == ENOENT ? NotFoundError("sync: no file " + path)
                               : InternalError("sync: cannot stat " + path));
  }
  return std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + " " +
         std::to_string(st.st_size);
}

Result<TreeListing> ListLocalTree(const std::string& local_dir, const SyncOptions& options) {
  if (!IsDirectory(local_dir)) return Err(NotFoundError("sync: no directory " + local_dir));
  namespace fs = std::filesystem;
  TreeListing listing;
  std::error_code ec;
  fs::recursive_directory_iterator it(local_dir, fs::directory_options::none, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path rel = it->path().lexically_relative(local_dir);
    if (Excluded(rel, options)) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    // Links are neither entered (the iterator does not follow them) nor listed.
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
    auto stamp = LocalFileStamp(it->path().string());
    if (stamp) listing[rel.string()] = std::move(*stamp);
  }
  if (ec) return Err(InternalError("sync: cannot list " + local_dir + ": " + ec.message()));
  return listing;
}

Result<TreeListing> ListRemoteTree(env::Environment& env, const std::string& remote_dir,
                                   const SyncOptions& options) {
  env::CommandOptions run;
  run.timeout = options.timeout;
  run.max_output_bytes = options.max_bytes;
  // In a subshell: the session's working directory stays where it was.
  auto r = env.Run(
      "(cd " + ShellQuote(remote_dir) + " || exit 1; " + RemoteListingCommand(options) + ")", run);
  if (!r) return Err(r.error());
  if (r->exit_code != 0) return Err(UnavailableError("sync: listing failed: " + r->output));
  if (r->output_total_bytes > r->output.size()) {
    return Err(ResourceExhaustedError("sync: the listing is larger than the sync limit"));
  }
  return ParseRemoteListing(r->output);
}

Result<TreeListing> PushFiles(env::Environment& env, const std::string& local_dir,
                              const std::string& remote_dir, const TreeChanges& changes,
                              const SyncOptions& options) {
  if (!IsDirectory(local_dir)) return Err(NotFoundError("sync: no directory " + local_dir));
  env::CommandOptions run;
  run.timeout = options.timeout;
  run.max_output_bytes = options.max_bytes;
  const std::string dir = ShellQuote(remote_dir);
  std::string command = "(mkdir -p " + dir + " && cd " + dir;
  if (!changes.changed.empty()) {
    SpawnOptions pack;
    // -C before -T: it is positional, and applies only to the names after it.
    pack.argv = {"tar", "-c", "-f", "-", "-C", local_dir, "--null", "--verbatim-files-from",
                 "-T",  "-"};
    pack.stdin_data = NulJoined(changes.changed);
    pack.timeout = options.timeout;
    pack.max_output_bytes = options.max_bytes + 1;
    ProcessResult packed = TALARIA_TRY(RunProcess(pack));
    if (packed.stdout_total_bytes > options.max_bytes) {
      return Err(ResourceExhaustedError("sync: the changes are larger than the sync limit"));
    }
    if (packed.exit_code != 0) {
      return Err(UnavailableError("sync: tar failed on " + local_dir + ": " + packed.stderr_text));
    }
    run.stdin_data = Base64Encode(packed.stdout_text);
    command += " && base64 -d | tar -x --no-same-owner -f -";
  }
  if (!changes.deleted.empty()) {
    command += " && rm -f --";
    for (const std::string& name : changes.deleted) command += " " + ShellQuote(name);
  }
  command += " && " + RemoteListingCommand(options) + ")";
  auto r = env.Run(command, run);
  if (!r) return Err(r.error());
  if (r->exit_code != 0) return Err(UnavailableError("sync: unpacking failed: " + r->output));
  return ParseRemoteListing(r->output);
}

Status PullFiles(env::Environment& env, const std::string& remote_dir,
                 const std::vector<std::string>& files, const std::string& local_dir,
                 const SyncOptions& options) {
  if (!IsDirectory(local_dir)) return NotFoundError("sync: no directory " + local_dir);
  if (files.empty()) return Status::Ok();
  env::CommandOptions run;
  run.timeout = options.timeout;
  run.max_output_bytes = options.max_bytes * 4 / 3 + 8;
  run.stdin_data = Base64Encode(NulJoined(files));
  auto r = env.Run("(cd " + ShellQuote(remote_dir) +
                       " || exit 1; base64 -d | tar -c --null --verbatim-files-from "
                       "--ignore-failed-read -T - -f - 2>/dev/null | base64 -w0)",
                   run);
  if (!r) return r.error();
  if (r->exit_code != 0) return UnavailableError("sync: packing failed: " + r->output);
  if (r->output_total_bytes > r->output.size()) {
    return ResourceExhaustedError("sync: the changes are larger than the sync limit");
  }
  auto archive = Base64Decode(r->output);
  if (!archive) return InvalidArgumentError("sync: the far side sent no base64");
  if (archive->empty()) return Status::Ok();
  TALARIA_RETURN_IF_ERROR(CheckArchive(*archive, options));
  SpawnOptions unpack;
  unpack.argv = {"tar", "-x", "--no-same-owner", "-f", "-", "-C", local_dir};
  unpack.stdin_data = std::move(*archive);
  unpack.timeout = options.timeout;
  ProcessResult unpacked = TALARIA_TRY(RunProcess(unpack));
  if (unpacked.exit_code != 0) {
    return UnavailableError("sync: unpacking locally failed: " + unpacked.stderr_text);
  }
  return Status::Ok();
}

}  // namespace talaria::sandboxes
