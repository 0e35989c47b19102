// traces/sqlite.cpp — checked sqlite3 calls: every failure names the trace, the call and its site.
#include "traces/sqlite.h"

#include <cerrno>

namespace gb::trace::detail {

void sqlite_fail(sqlite3* db, int rc, const std::string& path, const char* call, const char* file, int line) {
  std::string msg = "glassbox trace '" + path + "': " + call + " failed at " + file + ":" + std::to_string(line) +
                    ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)) + " (" + sqlite3_errstr(rc) + ")";
  int primary = rc & 0xff;
  if (primary == SQLITE_FULL) msg += "; the disk is full: free space or write the trace elsewhere";
  if (primary == SQLITE_READONLY || primary == SQLITE_PERM || primary == SQLITE_CANTOPEN)
    msg += "; check that the folder exists and is writable";
  if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT) msg += "; the file is damaged or not a glassbox trace";
  // a write past the file-size limit fails with EFBIG, seen by SQLite as an I/O error or a short write (FULL)
  const int os_error = db ? sqlite3_system_errno(db) : 0;
  if (primary == SQLITE_FULL || (primary == SQLITE_IOERR && (os_error == ENOSPC || os_error == EFBIG)))
    throw DiskFullError(msg);
  throw Error(msg);
}

namespace {
thread_local std::int64_t t_statements = 0;
}  // namespace

void count_statement() { ++t_statements; }

void exec(sqlite3* db, const std::string& path, const char* sql, const char* file, int line) {
  count_statement();
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  if (err) sqlite3_free(err);  // sqlite3_errmsg(db) still holds the message
  if (rc != SQLITE_OK) sqlite_fail(db, rc, path, "sqlite3_exec", file, line);
}

Stmt::Stmt(sqlite3* db, const std::string& path, std::string_view sql, const char* file, int line)
    : db_(db), path_(path) {
  count_statement();
  int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &s_, nullptr);
  if (rc != SQLITE_OK) sqlite_fail(db, rc, path, "sqlite3_prepare_v3", file, line);
}

Stmt& Stmt::operator=(Stmt&& o) noexcept {
  if (this != &o) {
    sqlite3_finalize(s_);
    db_ = o.db_;
    s_ = o.s_;
    path_ = std::move(o.path_);
    o.s_ = nullptr;
  }
  return *this;
}

bool Stmt::step(const char* file, int line) {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3_reset(s_);
  sqlite_fail(db_, rc, path_, "sqlite3_step", file, line);
}

}  // namespace gb::trace::detail

namespace gb::trace {
std::int64_t sqlite_statements_on_this_thread() { return detail::t_statements; }
}  // namespace gb::trace
