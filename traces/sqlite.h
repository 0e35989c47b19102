// traces/sqlite.h — internal: checked sqlite3 calls and a prepared-statement handle (not installed, not public).
//
// GB_SQLITE(db, path, call) runs one sqlite3_* call and throws gb::trace::Error naming the trace path, the call as
// written, its file:line and SQLite's message when the result is not SQLITE_OK / SQLITE_ROW / SQLITE_DONE.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "traces/error.h"

namespace gb::trace::detail {

[[noreturn]] void sqlite_fail(sqlite3* db, int rc, const std::string& path, const char* call, const char* file,
                              int line);

inline int sqlite_checked(sqlite3* db, int rc, const std::string& path, const char* call, const char* file,
                          int line) {
  if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE) sqlite_fail(db, rc, path, call, file, line);
  return rc;
}

// Counts one statement prepared or run on this thread (sqlite_statements_on_this_thread(), traces/reader.h).
void count_statement();

// Runs one or more ;-separated statements that return no rows.
void exec(sqlite3* db, const std::string& path, const char* sql, const char* file, int line);

// One prepared statement; reset() after each step-to-completion.
class Stmt {
 public:
  Stmt() = default;
  Stmt(sqlite3* db, const std::string& path, std::string_view sql, const char* file, int line);
  Stmt(Stmt&& o) noexcept : db_(o.db_), s_(o.s_), path_(std::move(o.path_)) { o.s_ = nullptr; }
  Stmt& operator=(Stmt&& o) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt() { sqlite3_finalize(s_); }

  sqlite3_stmt* get() const { return s_; }
  bool step(const char* file, int line);  // true while a row is available
  void reset() { sqlite3_reset(s_); sqlite3_clear_bindings(s_); }
  void reset_keep_bindings() { sqlite3_reset(s_); }  // the next use binds every parameter again
  void bind(int i, std::int64_t v, const char* file, int line) {
    sqlite_checked(db_, sqlite3_bind_int64(s_, i, v), path_, "sqlite3_bind_int64", file, line);
  }
  void bind(int i, double v, const char* file, int line) {
    sqlite_checked(db_, sqlite3_bind_double(s_, i, v), path_, "sqlite3_bind_double", file, line);
  }
  void bind(int i, std::string_view v, const char* file, int line) {
    sqlite_checked(db_, sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT), path_,
                   "sqlite3_bind_text", file, line);
  }
  void bind_null(int i, const char* file, int line) {
    sqlite_checked(db_, sqlite3_bind_null(s_, i), path_, "sqlite3_bind_null", file, line);
  }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* s_ = nullptr;
  std::string path_;
};

}  // namespace gb::trace::detail

#define GB_SQLITE(db, path, call) ::gb::trace::detail::sqlite_checked((db), (call), (path), #call, __FILE__, __LINE__)
#define GB_SQL_EXEC(db, path, sql) ::gb::trace::detail::exec((db), (path), (sql), __FILE__, __LINE__)
