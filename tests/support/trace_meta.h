// tests/support/trace_meta.h — one row of a trace's meta table, for tests that check what a session recorded.
#pragma once

#include <string>

#include <sqlite3.h>

namespace gbtest {

// The value of `key` in the trace at `path`'s meta table, or "(absent)" when there is no such row.
inline std::string trace_meta(const std::string& path, const char* key) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  std::string out = "(absent)";
  if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &st, nullptr) == SQLITE_OK) {
    sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW) out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

}  // namespace gbtest
