#include "store/sqlite_db.h"

#include <unistd.h>

#include <string>
#include <utility>

#include "store/wal_batching_vfs.h"

namespace talaria::store {

Status SqliteStatus(int rc, std::string_view what, sqlite3* db, std::string_view path) {
  std::string message(what);
  message += ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      message += " (";
      message += path;
      message += " is corrupt or not a talaria sessions database; move it aside to start afresh)";
      return InternalError(std::move(message));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return UnavailableError(std::move(message) + " (another process holds the database)");
    case SQLITE_FULL:
      return ResourceExhaustedError(std::move(message));
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_READONLY:
      return UnavailableError(std::move(message) + " (" + std::string(path) + ")");
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return PermissionDeniedError(std::move(message));
    case SQLITE_CONSTRAINT:
      return InvalidArgumentError(std::move(message));
    default:
      return InternalError(std::move(message));
  }
}

Stmt::~Stmt() {
  if (stmt_ == nullptr) return;
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

Stmt& Stmt::Bind(int index, std::string_view text) {
  int rc = sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_STATIC, SQLITE_UTF8);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

Stmt& Stmt::Bind(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

Stmt& Stmt::Bind(int index, double value) {
  int rc = sqlite3_bind_double(stmt_, index, value);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

Stmt& Stmt::BindNull(int index) {
  int rc = sqlite3_bind_null(stmt_, index);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

Stmt& Stmt::BindPointer(int index, void* pointer, const char* type) {
  int rc = sqlite3_bind_pointer(stmt_, index, pointer, type, nullptr);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

Result<bool> Stmt::Step() {
  if (bind_rc_ != SQLITE_OK) return Err(SqliteStatus(bind_rc_, "binding a parameter", db_, *path_));
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Err(SqliteStatus(rc, "running a statement", db_, *path_));
}

Status Stmt::Run() {
  for (;;) {
    bool row = TALARIA_TRY(Step());
    if (!row) return Status::Ok();
  }
}

std::string Stmt::Text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  if (text == nullptr) return {};
  return std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path) {
  sqlite3* db = nullptr;
  // NOMUTEX: the store serialises every use of the connection itself. A commit's WAL frames
  // reach the kernel in one write (wal_batching_vfs.h).
  int rc = sqlite3_open_v2(
      path.c_str(), &db,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE,
      WalBatchingVfsName());
  if (rc != SQLITE_OK) {
    Status s = SqliteStatus(rc, "opening " + path, db, path);
    sqlite3_close_v2(db);
    return Err(std::move(s));
  }
  return std::unique_ptr<SqliteDb>(new SqliteDb(db, path));
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::OpenReadOnly(const std::string& path) {
  sqlite3* db = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, nullptr);
  if (rc != SQLITE_OK) {
    const bool missing = (rc & 0xff) == SQLITE_CANTOPEN && ::access(path.c_str(), F_OK) != 0;
    Status s = missing ? NotFoundError("no sessions database at " + path)
                       : SqliteStatus(rc, "opening " + path + " read-only", db, path);
    sqlite3_close_v2(db);
    return Err(std::move(s));
  }
  return std::unique_ptr<SqliteDb>(new SqliteDb(db, path));
}

SqliteDb::~SqliteDb() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

Status SqliteDb::Exec(std::string_view sql) {
  std::string text(sql);
  char* error = nullptr;
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
  sqlite3_free(error);  // sqlite3_errmsg still holds the same message
  if (rc != SQLITE_OK) return SqliteStatus(rc, "running '" + text.substr(0, 40) + "'", db_, path_);
  return Status::Ok();
}

Result<Stmt> SqliteDb::Prepare(const char* sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) {
      sqlite3_finalize(stmt);
      return Err(SqliteStatus(rc, "preparing a statement", db_, path_));
    }
    it = cache_.emplace(sql, stmt).first;
  }
  return Result<Stmt>(tl::in_place, it->second, db_, &path_);
}

Status SqliteDb::Begin() {
  Stmt stmt = TALARIA_TRY(Prepare("BEGIN IMMEDIATE"));
  return stmt.Run();
}

Status SqliteDb::Commit() {
  Stmt stmt = TALARIA_TRY(Prepare("COMMIT"));
  return stmt.Run();
}

void SqliteDb::Rollback() {
  // Outside a transaction (SQLite may already have rolled back after an I/O error) this fails
  // harmlessly.
  if (sqlite3_get_autocommit(db_) != 0) return;
  (void)Exec("ROLLBACK");
}

Status SqliteDb::BeginRead() {
  Stmt stmt = TALARIA_TRY(Prepare("BEGIN"));
  return stmt.Run();
}

void SqliteDb::EndRead() {
  if (sqlite3_get_autocommit(db_) != 0) return;
  auto stmt = Prepare("COMMIT");
  if (stmt) (void)stmt->Run();
}

Result<int64_t> SqliteDb::QueryInt(const char* sql) {
  Stmt stmt = TALARIA_TRY(Prepare(sql));
  bool row = TALARIA_TRY(stmt.Step());
  if (!row) return Err(InternalError(std::string("no row from ") + sql));
  return stmt.Int(0);
}

}  // namespace talaria::store
