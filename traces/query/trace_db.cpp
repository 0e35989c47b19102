// traces/query/trace_db.cpp — the validated read-only connection and row access.
#include "traces/query/trace_db.h"

#include <charconv>

#include "traces/schema.h"
#include "traces/sqlite.h"

namespace gb::query {

std::int64_t Row::i64(int col) const { return sqlite3_column_int64(s_, col); }
double Row::f64(int col) const { return sqlite3_column_double(s_, col); }
bool Row::is_null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
std::string_view Row::text(int col) const {
  const unsigned char* p = sqlite3_column_text(s_, col);
  if (!p) return {};
  return {reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(s_, col))};
}
std::optional<std::int64_t> Row::opt_i64(int col) const {
  if (is_null(col)) return std::nullopt;
  return i64(col);
}
std::optional<double> Row::opt_f64(int col) const {
  if (is_null(col)) return std::nullopt;
  return f64(col);
}

TraceDb::TraceDb(const std::string& path) : reader_(path) {
  int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw gb::trace::Error("glassbox: cannot open trace '" + path + "' (sqlite3_open_v2: " + why + ")");
  }
  // An older file's queries see this version's tables and columns (the Reader did the same on its connection).
  char* err = nullptr;
  if (sqlite3_exec(db_, gb::trace::compat_sql(reader_.schema_version()), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string why = err ? err : "unknown";
    sqlite3_free(err);
    sqlite3_close(db_);
    db_ = nullptr;
    throw gb::trace::Error("glassbox: trace '" + path + "' cannot be read as this schema version (" + why + ")");
  }
}

TraceDb::~TraceDb() { sqlite3_close(db_); }

void TraceDb::interrupt() const {
  if (db_) sqlite3_interrupt(db_);
}

void TraceDb::each(std::string_view sql, std::initializer_list<std::int64_t> binds,
                   const std::function<void(const Row&)>& row) const {
  gb::trace::detail::Stmt s(db_, path(), sql, __FILE__, __LINE__);
  int i = 1;
  for (std::int64_t b : binds) s.bind(i++, b, __FILE__, __LINE__);
  Row r(s.get());
  while (s.step(__FILE__, __LINE__)) row(r);
}

std::int64_t TraceDb::scalar(std::string_view sql, std::initializer_list<std::int64_t> binds) const {
  std::int64_t v = 0;
  bool first = true;
  each(sql, binds, [&](const Row& r) {
    if (first) v = r.i64(0);
    first = false;
  });
  return v;
}

std::optional<std::int64_t> TraceDb::meta_int(std::string_view key) const {
  std::optional<std::string> v = reader_.meta(key);
  if (!v) return std::nullopt;
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc() || end != v->data() + v->size()) return std::nullopt;
  return n;
}

}  // namespace gb::query
