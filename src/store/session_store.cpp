// SessionStore::Open: the file, its directory and its permissions, the connection's settings,
// then the schema.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "store/fts_rank.h"
#include "store/schema.h"
#include "store/sqlite_session_store.h"
#include "talaria/base/paths.h"
#include "talaria/base/unique_fd.h"

namespace talaria::store {
namespace {

// How long a statement waits for another process's write lock before reporting Unavailable.
// Writes are single short transactions, so a wait this long means a stuck process.
constexpr int kBusyTimeoutMs = 5000;

// Creates the missing directories of `dir`, each 0700: sessions hold everything the user and
// the model said.
Status MakeDirectories(const std::string& dir) {
  if (dir.empty()) return Status::Ok();
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::Ok();
    return UnavailableError(dir + " is not a directory");
  }
  size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0) {
    TALARIA_RETURN_IF_ERROR(MakeDirectories(dir.substr(0, slash)));
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return UnavailableError("cannot create " + dir + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

// Creates the database file 0600 before SQLite does (SQLite would use 0644 less the umask);
// SQLite gives its -wal and -shm files the database file's mode.
Status CreateFilePrivately(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) return UnavailableError("cannot open " + path + ": " + std::strerror(errno));
  return Status::Ok();
}

}  // namespace

std::string DefaultSessionsPath() { return TalariaHome() + "/sessions.db"; }

Result<std::unique_ptr<SessionStore>> SessionStore::Open(const std::string& path_in) {
  if (path_in.empty()) return Err(InvalidArgumentError("empty sessions database path"));
  // SQLite reads a name starting with "file:" as a URI (Debian builds it with URIs on).
  std::string path = path_in.starts_with("file:") ? "./" + path_in : path_in;
  size_t slash = path.find_last_of('/');
  if (slash != std::string::npos) TALARIA_RETURN_IF_ERROR(MakeDirectories(path.substr(0, slash)));
  TALARIA_RETURN_IF_ERROR(CreateFilePrivately(path));

  std::unique_ptr<SqliteDb> db = TALARIA_TRY(SqliteDb::Open(path));
  sqlite3_busy_timeout(db->handle(), kBusyTimeoutMs);
  // WAL: readers never block the writer, and a commit is one append to the log.
  // synchronous=NORMAL: in WAL mode a commit has reached the operating system when COMMIT
  // returns, so it survives the process being killed (kill -9, a crash) at any moment; only a
  // power loss or kernel crash can drop the last commits (never corrupt the file). FULL would
  // fsync every message, milliseconds each on ordinary disks, for protection against power loss
  // that an agent session does not need.
  {
    Stmt mode = TALARIA_TRY(db->Prepare("PRAGMA journal_mode = WAL"));
    if (!TALARIA_TRY(mode.Step()) || mode.Text(0) != "wal") {
      return Err(UnavailableError(path + " cannot use a write-ahead log (a network filesystem?)"));
    }
  }  // reset here: a statement in progress would block the migration's COMMIT
  TALARIA_RETURN_IF_ERROR(db->Exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON"));
  TALARIA_RETURN_IF_ERROR(MigrateSchema(*db));
  TALARIA_RETURN_IF_ERROR(RegisterFtsRank(*db));  // Search ranks with it
  auto store = std::make_unique<SqliteSessionStore>(std::move(db));
  // Whatever a crashed process appended but had not indexed yet.
  TALARIA_RETURN_IF_ERROR(store->IndexPending());
  return std::unique_ptr<SessionStore>(std::move(store));
}

}  // namespace talaria::store
