// PushTree and PullChanged: local tar (the system's GNU tar) on this side, tar and base64 on
// the far side; the sync stamp lives in the far side's /tmp, named after the remote directory.
#include "talaria/sandboxes/file_sync.h"
#include "talaria/base/base64.h"

#include <sys/stat.h>

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
