// AuditLog: append-only record of every mutation the file tools make and every command the
// guard judges, one JSON object per line in $TALARIA_HOME/audit.jsonl (mode 0600).
//
// Each record is written with exactly ONE write(2) on an O_APPEND descriptor, so records from
// concurrent threads and concurrent talaria processes never interleave. Line shape of a file
// mutation, keys in this order:
//   {"time":"2024-05-01T12:00:00.123Z","session":"...","tool":"write_file","path":"/abs/p",
//    "bytes":42,"sha256_before":null,"sha256_after":"<hex>","outcome":"ok","prev":"<hex>"}
// sha256_before is null for a new file; sha256_after is null when nothing was written (a
// failed or deleted target).
//
// The chain: every line's last key, "prev", is the SHA-256 of the previous line's bytes
// (newline included; 64 zeros for the first line), so an edited or removed line breaks the
// chain at the line after it. The log's size and its last line's hash are kept beside it in
// `<log>.head`, so a cut-off tail is seen too. Appends take an exclusive flock on the log, so
// concurrent processes chain in the order they write. VerifyAuditLog checks both.
// Thread-safety: thread-safe (appends are serialised by a mutex and the flock).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
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
  // Appends one JSON object line of another kind of event (commands judged), ending in '\n',
  // with the same one-write guarantee; "prev" is added before its closing brace.
  // REQUIRES: json_line is one JSON object followed by '\n'.
  Status AppendLine(std::string_view json_line) const;

  const std::string& path() const { return path_; }

 private:
  AuditLog(std::string path, UniqueFd fd) : path_(std::move(path)), fd_(std::move(fd)) {}
  // The hash of the last line and whether it lacks its newline; under the flock.
  Result<std::string> LastLineHash(uint64_t size, bool& torn) const;
  void WriteHead(uint64_t size, std::string_view last_hash) const;

  std::string path_;
  UniqueFd fd_;
  // <log>.head, opened on the first append and rewritten in place. Guarded by mu_.
  mutable UniqueFd head_fd_;
  mutable std::mutex mu_;
  // The log's size after our last append and its last line's hash: when nobody else appended
  // since, the tail need not be read again. Guarded by mu_.
  mutable uint64_t cached_size_ = 0;
  mutable std::string cached_hash_;
};

// What `talaria audit verify` reports.
struct AuditVerification {
  bool intact = false;
  uint64_t lines = 0;
  // Lines at the start written before the log was chained (they cannot be checked).
  uint64_t unchained_lines = 0;
  // Empty when intact: the first line where the chain breaks, or how the end differs from
  // the head record.
  std::string problem;
  // Set when there is no head record (a log written before heads existed): the end of the log
  // cannot be checked.
  bool head_missing = false;
};

// Checks the chain of the log at `path` and its head record. Errors: NotFound (no log),
// Internal (cannot be read).
Result<AuditVerification> VerifyAuditLog(const std::string& path);

}  // namespace talaria::safety
