#include "talaria/safety/audit_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "safety/fs_util.h"
#include "talaria/base/paths.h"

namespace talaria::safety {

std::string AuditTimestamp(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  const auto ms = duration_cast<milliseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  long frac = static_cast<long>(ms % 1000);
  if (frac < 0) {
    frac += 1000;
    --secs;
  }
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
  return buf;
}

namespace {

// mkdir -p with 0700 for the directories it creates.
Status MakeDirs(const std::string& dir) {
  if (dir.empty()) return Status::Ok();
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::Ok();
    return PermissionDeniedError("'" + dir + "' is not a directory");
  }
  size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0) {
    TALARIA_RETURN_IF_ERROR(MakeDirs(dir.substr(0, slash)));
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return internal::ErrnoStatus(errno, "create directory", dir);
  }
  return Status::Ok();
}

}  // namespace

std::string AuditRecordToJsonLine(const AuditRecord& record) {
  nlohmann::ordered_json j;
  const auto t = record.time == std::chrono::system_clock::time_point{}
                     ? std::chrono::system_clock::now()
                     : record.time;
  j["time"] = AuditTimestamp(t);
  j["session"] = record.session;
  j["tool"] = record.tool;
  j["path"] = record.path;
  j["bytes"] = record.bytes;
  j["sha256_before"] =
      record.sha256_before ? nlohmann::ordered_json(*record.sha256_before) : nullptr;
  j["sha256_after"] = record.sha256_after ? nlohmann::ordered_json(*record.sha256_after) : nullptr;
  j["outcome"] = record.outcome;
  // Paths are bytes, not necessarily UTF-8: replace invalid sequences instead of throwing.
  std::string line = j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  line += '\n';
  return line;
}

Result<std::unique_ptr<AuditLog>> AuditLog::Open(std::string path) {
  if (path.empty()) path = TalariaHome() + "/audit.jsonl";
  if (size_t slash = path.find_last_of('/'); slash != std::string::npos && slash > 0) {
    TALARIA_RETURN_IF_ERROR(MakeDirs(path.substr(0, slash)));
  }
  int fd;
  do {
    fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return Err(internal::ErrnoStatus(errno, "open audit log", path));
  UniqueFd owned(fd);
  struct stat st {};
  if (::fstat(owned.get(), &st) != 0) return Err(internal::ErrnoStatus(errno, "fstat", path));
  if (!S_ISREG(st.st_mode)) {
    return Err(PermissionDeniedError("audit log '" + path + "' is not a regular file"));
  }
  if ((st.st_mode & 077) != 0 && st.st_uid == ::geteuid()) {
    (void)::fchmod(owned.get(), 0600);  // tighten a log created by something else
  }
  return std::unique_ptr<AuditLog>(new AuditLog(std::move(path), std::move(owned)));
}

Status AuditLog::Append(const AuditRecord& record) const { return AppendLine(AuditRecordToJsonLine(record)); }

Status AuditLog::AppendLine(std::string_view line) const {
  ssize_t n;
  do {
    n = ::write(fd_.get(), line.data(), line.size());  // the ONE write of this record
  } while (n < 0 && errno == EINTR);
  if (n < 0) return internal::ErrnoStatus(errno, "append to audit log", path_);
  if (static_cast<size_t>(n) != line.size()) {
    // Only on a full disk (or a signal mid-write of a huge record): terminate the torn line so
    // the next record still starts on its own line.
    (void)::write(fd_.get(), "\n", 1);
    return ResourceExhaustedError("audit log '" + path_ + "': short write (" + std::to_string(n) +
                                  " of " + std::to_string(line.size()) + " bytes)");
  }
  return Status::Ok();
}

}  // namespace talaria::safety
