// AuditLog: append-only record of every mutation the file tools make, one JSON object per line
// in $TALARIA_HOME/audit.jsonl (mode 0600).
//
// Each record is written with exactly ONE write(2) on an O_APPEND descriptor, so records from
// concurrent threads and concurrent talaria processes never interleave (Linux serialises
// O_APPEND writes to a regular file). Line shape, keys in this order:
//   {"time":"2024-05-01T12:00:00.123Z","session":"...","tool":"write_file","path":"/abs/p",
//    "bytes":42,"sha256_before":null,"sha256_after":"<hex>","outcome":"ok"}
// sha256_before is null for a new file; sha256_after is null when nothing was written (a
// failed or deleted target).
// Thread-safety: thread-safe (Append only touches the fd).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "talaria/base/status.h"
#include "talaria/base/unique_fd.h"

namespace talaria::safety {

struct AuditRecord {
  // Defaults to now when left at the epoch.
  std::chrono::system_clock::time_point time{};
  std::string session;
  std::string tool;
  std::string path;
  uint64_t bytes = 0;
  std::optional<std::string> sha256_before;
  std::optional<std::string> sha256_after;
  // "ok", or a short failure description ("error: PermissionDenied").
  std::string outcome;
};

// "2024-05-01T12:00:00.123Z": the time format of every audit line.
std::string AuditTimestamp(std::chrono::system_clock::time_point t);

// Serialises a record as one JSON line (with the trailing '\n'). Exposed for tests and tools.
std::string AuditRecordToJsonLine(const AuditRecord& record);

class AuditLog {
 public:
  // Opens (creating with 0600, and the directory with 0700, when missing) the log at `path`;
  // empty = TalariaHome() + "/audit.jsonl". A symlink at the leaf is refused. Errors:
  // PermissionDenied, NotFound (parent cannot be created), ResourceExhausted, Internal.
  static Result<std::unique_ptr<AuditLog>> Open(std::string path = "");

  // Appends one record (one write(2)). Errors: ResourceExhausted (disk full), Internal.
  Status Append(const AuditRecord& record) const;
  // Appends one JSON line of another kind of event (approval decisions), ending in '\n', with
  // the same one-write guarantee.
  Status AppendLine(std::string_view json_line) const;

  const std::string& path() const { return path_; }

 private:
  AuditLog(std::string path, UniqueFd fd) : path_(std::move(path)), fd_(std::move(fd)) {}
  std::string path_;
  UniqueFd fd_;
};

}  // namespace talaria::safety
