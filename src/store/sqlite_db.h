// SqliteDb: one SQLite connection (RAII) with a cache of prepared statements and SQLite result
// codes turned into Status. The store's only door to libsqlite3.
// Not thread-safe; caller synchronises (SqliteSessionStore holds it behind its mutex).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "talaria/base/status.h"

namespace talaria::store {

// The Status for SQLite result code `rc` (an extended code), with `what` as context and the
// connection's message. Corruption names `path`: the user has to act on that file.
Status SqliteStatus(int rc, std::string_view what, sqlite3* db, std::string_view path);

// A prepared statement borrowed from the cache: reset and unbound when it goes out of scope, so
// a statement never holds a read transaction open between calls.
class Stmt {
 public:
  Stmt(sqlite3_stmt* stmt, sqlite3* db, const std::string* path)
      : stmt_(stmt), db_(db), path_(path) {}
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt(Stmt&& other) noexcept
      : stmt_(std::exchange(other.stmt_, nullptr)),
        db_(other.db_),
        path_(other.path_),
        bind_rc_(other.bind_rc_) {}
  Stmt& operator=(Stmt&&) = delete;

  // Parameters are 1-based as in SQLite. Text is bound without copying: it must outlive Step.
  Stmt& Bind(int index, std::string_view text);
  Stmt& Bind(int index, int64_t value);
  Stmt& Bind(int index, double value);
  Stmt& BindNull(int index);
  // A pointer for an SQL function of ours (sqlite3_bind_pointer): `type` names what it points
  // to, so only a function asking for that type sees it. It must outlive Step.
  Stmt& BindPointer(int index, void* pointer, const char* type);

  // true: a row is ready; false: done. Errors carry the SQLite message.
  Result<bool> Step();
  // Steps to completion (statements without rows).
  Status Run();

  int64_t Int(int column) const { return sqlite3_column_int64(stmt_, column); }
  double Real(int column) const { return sqlite3_column_double(stmt_, column); }
  std::string Text(int column) const;
  bool IsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

 private:
  sqlite3_stmt* stmt_;
  sqlite3* db_;
  const std::string* path_;
  int bind_rc_ = SQLITE_OK;  // the first failed bind, reported by Step
};

class SqliteDb {
 public:
  // Opens (creating when missing) `path`. Nothing is read yet: SQLite reads the header lazily,
  // so a corrupt file shows up at the first statement.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path);
  // Opens an existing `path` read-only (SQLITE_OPEN_READONLY): any write fails. In WAL mode it
  // reads beside writers in this and other processes. NotFound when the file does not exist.
  static Result<std::unique_ptr<SqliteDb>> OpenReadOnly(const std::string& path);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs `sql` (one or more statements, no parameters, rows ignored).
  Status Exec(std::string_view sql);
  // The cached prepared statement for `sql`, keyed by the literal's address: callers pass string
  // literals (or strings that outlive the connection).
  Result<Stmt> Prepare(const char* sql);
  // The transaction statements, prepared once (an append is one short transaction, so their
  // parse cost would show).
  Status Begin();
  Status Commit();
  void Rollback();
  // A read transaction (deferred BEGIN), so several reads see one snapshot; EndRead ends it.
  Status BeginRead();
  void EndRead();
  // Runs a single-value query ("PRAGMA user_version") and returns its integer.
  Result<int64_t> QueryInt(const char* sql);

  int64_t changes() const { return sqlite3_changes64(db_); }
  int64_t last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  sqlite3* db_;
  std::string path_;
  std::unordered_map<const char*, sqlite3_stmt*> cache_;
};

// Runs a write transaction: BEGIN IMMEDIATE (the write lock up front, so two processes never
// deadlock upgrading read locks; the busy timeout waits for it), then COMMIT when `body`
// succeeds, ROLLBACK otherwise.
template <typename Body>
Status WithWriteTransaction(SqliteDb& db, Body&& body) {
  TALARIA_RETURN_IF_ERROR(db.Begin());
  Status s = body();
  if (!s.ok()) {
    db.Rollback();
    return s;
  }
  s = db.Commit();
  if (!s.ok()) db.Rollback();
  return s;
}

}  // namespace talaria::store
