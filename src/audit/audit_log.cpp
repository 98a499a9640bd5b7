#include "talaria/audit/audit_log.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "talaria/base/file_io.h"
#include "talaria/base/paths.h"
#include "talaria/base/sha256.h"
#include "talaria/confinement/fs_util.h"

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
    // Read as well as appended: the chain needs the last line before each append.
    fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
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

Status AuditLog::Append(const AuditRecord& record) const {
  return AppendLine(AuditRecordToJsonLine(record));
}

namespace {

constexpr std::string_view kGenesis =
    "0000000000000000000000000000000000000000000000000000000000000000";

std::string HeadPath(std::string_view log) { return std::string(log) + ".head"; }

// `line` (one JSON object and its newline) with "prev" as its last key.
std::string Chained(std::string_view line, std::string_view prev) {
  std::string_view body = line;
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.remove_suffix(1);
  std::string out;
  out.reserve(body.size() + prev.size() + 12);
  if (body.size() >= 2 && body.back() == '}') {
    out.append(body.substr(0, body.size() - 1));
    out += body.size() > 2 ? ",\"prev\":\"" : "\"prev\":\"";
  } else {
    // Not an object: wrapped, so the line still parses and carries its link.
    out += "{\"line\":";
    out += nlohmann::ordered_json(std::string(body))
               .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    out += ",\"prev\":\"";
  }
  out.append(prev);
  out += "\"}\n";
  return out;
}

// Holds an exclusive flock on the log for one append.
class FileLock {
 public:
  explicit FileLock(int fd) : fd_(fd) {
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~FileLock() { ::flock(fd_, LOCK_UN); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace

Result<std::string> AuditLog::LastLineHash(uint64_t size, bool& torn) const {
  torn = false;
  if (size == 0) return std::string(kGenesis);
  if (size == cached_size_ && !cached_hash_.empty()) return cached_hash_;
  // Read backwards until the newline that ends the line before the last one.
  std::string tail;
  uint64_t from = size;
  constexpr uint64_t kChunk = 16 << 10;
  for (;;) {
    const uint64_t start = from > kChunk ? from - kChunk : 0;
    std::string chunk(static_cast<size_t>(from - start), '\0');
    const ssize_t n = ::pread(fd_.get(), chunk.data(), chunk.size(), static_cast<off_t>(start));
    if (n != static_cast<ssize_t>(chunk.size())) {
      return Err(internal::ErrnoStatus(n < 0 ? errno : EIO, "read audit log", path_));
    }
    tail.insert(0, chunk);
    from = start;
    // The last line's own newline is the final byte; look for the one before it.
    const size_t search_end = tail.size() >= 2 ? tail.size() - 2 : 0;
    const size_t nl = tail.size() >= 2 ? tail.rfind('\n', search_end) : std::string::npos;
    if (nl != std::string::npos) {
      tail.erase(0, nl + 1);
      break;
    }
    if (from == 0) break;
  }
  if (tail.empty() || tail.back() != '\n') {
    torn = true;  // a write cut short by a full disk: the line is ended before chaining on
    tail += '\n';
  }
  return Sha256Hex(tail);
}

// One fixed-length record rewritten in place with one pwrite: a rename over the old head made
// ext4 flush the new file on every append (about 2 ms each), and a record this small never
// straddles a page, so a reader sees the old one or the new one.
void AuditLog::WriteHead(uint64_t size, std::string_view last_hash) const {
  if (!head_fd_) {
    head_fd_.reset(
        ::open(HeadPath(path_).c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!head_fd_) return;
  }
  std::string record =
      "{\"size\":" + std::to_string(size) + ",\"last\":\"" + std::string(last_hash) + "\"}";
  constexpr size_t kRecordBytes = 128;
  if (record.size() + 1 > kRecordBytes) return;
  record.resize(kRecordBytes - 1, ' ');
  record += '\n';
  [[maybe_unused]] const ssize_t n = ::pwrite(head_fd_.get(), record.data(), record.size(), 0);
}

Status AuditLog::AppendLine(std::string_view json_line) const {
  std::lock_guard<std::mutex> guard(mu_);
  FileLock lock(fd_.get());
  struct stat st {};
  if (::fstat(fd_.get(), &st) != 0) return internal::ErrnoStatus(errno, "fstat", path_);
  uint64_t size = static_cast<uint64_t>(st.st_size);
  bool torn = false;
  std::string prev = TALARIA_TRY(LastLineHash(size, torn));
  if (torn) {
    // The torn line must end before the next one chains on to it, or the chain breaks for good.
    if (::write(fd_.get(), "\n", 1) != 1) {
      cached_hash_.clear();
      return internal::ErrnoStatus(errno, "end a torn line of the audit log", path_);
    }
    ++size;
  }
  const std::string line = Chained(json_line, prev);
  ssize_t n;
  do {
    n = ::write(fd_.get(), line.data(), line.size());  // the ONE write of this record
  } while (n < 0 && errno == EINTR);
  if (n < 0) return internal::ErrnoStatus(errno, "append to audit log", path_);
  if (static_cast<size_t>(n) != line.size()) {
    // Only on a full disk (or a signal mid-write of a huge record): the next append ends the
    // torn line before chaining on to it.
    cached_hash_.clear();
    return ResourceExhaustedError("audit log '" + path_ + "': short write (" + std::to_string(n) +
                                  " of " + std::to_string(line.size()) + " bytes)");
  }
  cached_size_ = size + line.size();
  cached_hash_ = Sha256Hex(line);
  WriteHead(cached_size_, cached_hash_);
  return Status::Ok();
}

Result<AuditVerification> VerifyAuditLog(const std::string& path) {
  auto text = ReadWholeFile(path);
  if (!text) return Err(text.error());
  AuditVerification out;
  std::string prev(kGenesis);
  bool chained = false;
  size_t start = 0;
  const std::string& log = *text;
  while (start < log.size()) {
    size_t end = log.find('\n', start);
    const bool has_newline = end != std::string::npos;
    if (!has_newline) end = log.size();
    const std::string_view line(log.data() + start, end - start + (has_newline ? 1 : 0));
    ++out.lines;
    const std::string where = "line " + std::to_string(out.lines);
    auto parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    const auto link = parsed.is_object() ? parsed.find("prev") : parsed.end();
    if (parsed.is_discarded() || !parsed.is_object()) {
      out.problem = where + " is not a JSON object (edited or cut short)";
      return out;
    }
    if (link == parsed.end() || !link->is_string()) {
      if (chained) {
        out.problem = where + " has no \"prev\" link (inserted or edited)";
        return out;
      }
      ++out.unchained_lines;
    } else {
      if (link->get<std::string>() != prev) {
        out.problem = where +
                      " does not follow the line before it (a line before it was edited, "
                      "removed or inserted, or this one was)";
        return out;
      }
      chained = true;
    }
    if (!has_newline) {
      out.problem = where + " is cut short (no newline)";
      return out;
    }
    prev = Sha256Hex(line);
    start = end + 1;
  }
  auto head_text = ReadWholeFile(HeadPath(path));
  if (!head_text) {
    out.head_missing = true;
    // Chained lines are only ever written with a head: without one, the end was tampered with.
    if (out.lines > out.unchained_lines) {
      out.problem =
          "the head record " + HeadPath(path) + " is missing: the end cannot be vouched for";
      return out;
    }
    out.intact = true;
    return out;
  }
  auto head = nlohmann::json::parse(*head_text, nullptr, false);
  if (!head.is_object() || !head.contains("size") || !head["size"].is_number_unsigned() ||
      !head.contains("last") || !head["last"].is_string()) {
    out.problem = "the head record " + HeadPath(path) + " is damaged";
    return out;
  }
  const uint64_t size = head["size"].get<uint64_t>();
  if (size > log.size()) {
    out.problem = "the log ends at byte " + std::to_string(log.size()) + " but " +
                  std::to_string(size) + " bytes were written: its end was cut off";
    return out;
  }
  // The line the head says was written last must end at byte `size` and hash to `last`; lines
  // after it (a process appending after the head was read) are vouched for by the chain.
  if (size > 0 && log[size - 1] != '\n') {
    out.problem = "the head's end (byte " + std::to_string(size) +
                  ") is not the end of a line: the log was rewritten";
    return out;
  }
  const size_t last_start = size >= 2 ? log.rfind('\n', size - 2) : std::string::npos;
  const size_t from = last_start == std::string::npos ? 0 : last_start + 1;
  const std::string last_line = size == 0 ? std::string() : log.substr(from, size - from);
  if (size > 0 && Sha256Hex(last_line) != head["last"].get<std::string>()) {
    out.problem = "the line the head says was written last is not there (the end was replaced)";
    return out;
  }
  out.intact = true;
  return out;
}

}  // namespace talaria::safety
