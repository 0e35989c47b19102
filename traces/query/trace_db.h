// traces/query/trace_db.h — one trace opened for queries (the glassbox command, the viewer): the Reader's checks, then plain SQL over the file.
//
// Contract:
//   - TraceDb(path) validates the file with gb::trace::Reader (missing, empty, truncated, not SQLite, not a trace,
//     newer schema, missing tables/columns: each throws one gb::trace::Error line naming the path), then opens a
//     second read-only connection for the tools' own aggregate queries.
//   - each() steps one prepared statement and hands every row to the callback as it comes: nothing is collected,
//     so a query over millions of spans runs in constant memory. SQLite failures throw gb::trace::Error naming the
//     call site (traces/sqlite.h).
//
//   gb::query::TraceDb db("run.db");
//   db.each("SELECT id, dur_ns FROM spans WHERE kind = ?1", {0}, [](const gb::query::Row& r) { use(r.i64(1)); });
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "traces/reader.h"

struct sqlite3;
struct sqlite3_stmt;

namespace gb::query {

// One result row, valid only inside the each() callback.
class Row {
 public:
  explicit Row(sqlite3_stmt* s) : s_(s) {}
  std::int64_t i64(int col) const;
  double f64(int col) const;
  std::string_view text(int col) const;  // "" for NULL
  bool is_null(int col) const;
  std::optional<std::int64_t> opt_i64(int col) const;
  std::optional<double> opt_f64(int col) const;

 private:
  sqlite3_stmt* s_;
};

class TraceDb {
 public:
  explicit TraceDb(const std::string& path);
  ~TraceDb();
  TraceDb(const TraceDb&) = delete;
  TraceDb& operator=(const TraceDb&) = delete;

  const std::string& path() const { return reader_.path(); }
  const gb::trace::Reader& reader() const { return reader_; }

  // Runs sql with ?1, ?2, ... bound to binds, calling row() for each result row in order.
  void each(std::string_view sql, std::initializer_list<std::int64_t> binds,
            const std::function<void(const Row&)>& row) const;
  void each(std::string_view sql, const std::function<void(const Row&)>& row) const { each(sql, {}, row); }
  // The first column of the first row as an integer; 0 when there is no row or it is NULL.
  std::int64_t scalar(std::string_view sql, std::initializer_list<std::int64_t> binds = {}) const;
  // meta(key) parsed as an integer, when present and numeric.
  std::optional<std::int64_t> meta_int(std::string_view key) const;
  // Makes the statement running on this connection's each()/scalar() stop with SQLITE_INTERRUPT (it throws); safe
  // to call from another thread while the connection is open (sqlite3_interrupt). Reader queries are not affected.
  void interrupt() const;

 private:
  gb::trace::Reader reader_;
  sqlite3* db_ = nullptr;
};

}  // namespace gb::query
