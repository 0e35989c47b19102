// traces/reader.cpp — opening checks (header bytes, version, tables, columns) and the typed queries.
#include "traces/reader.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "traces/codec.h"
#include "traces/schema.h"
#include "traces/sqlite.h"

namespace gb::trace {

using detail::Stmt;

namespace {

std::uint32_t be(const unsigned char* p, int n) {
  std::uint32_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

// The 100-byte SQLite header (sqlite.org/fileformat.html §1.3): magic, page size, and the page count that is
// valid when the change counter equals version-valid-for.
void check_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error("glassbox: trace '" + path + "' does not exist; check the path");
  if (!fs::is_regular_file(path, ec)) throw Error("glassbox: trace '" + path + "' is not a regular file");
  auto size = fs::file_size(path, ec);
  unsigned char h[100] = {};
  std::ifstream f(path, std::ios::binary);
  f.read(reinterpret_cast<char*>(h), sizeof h);
  if (std::memcmp(h, "SQLite format 3", 16) != 0) {
    if (size == 0) throw Error("glassbox: trace '" + path + "' is empty; the program that wrote it did not start tracing");
    throw Error("glassbox: '" + path + "' is not a glassbox trace (not a SQLite database: its first bytes are not "
                "'SQLite format 3'); glassbox traces are the .db files GLASSBOX_TRACE writes");
  }
  if (size < 100) throw Error("glassbox: trace '" + path + "' is truncated (" + std::to_string(size) + " bytes)");
  std::uint64_t page = be(h + 16, 2) == 1 ? 65536 : be(h + 16, 2);
  std::uint64_t pages = be(h + 28, 4);
  if (pages != 0 && be(h + 24, 4) == be(h + 92, 4) && size < page * pages)
    throw Error("glassbox: trace '" + path + "' is truncated: " + std::to_string(size) + " bytes of the " +
                std::to_string(page * pages) + " its header announces; copy the file again");
}

}  // namespace

Reader::Reader(const std::string& path) : path_(path) {
  check_file(path);
  int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error("glassbox: cannot open trace '" + path + "' (sqlite3_open_v2: " + why + ")");
  }
  try {
    validate();
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

Reader::~Reader() { sqlite3_close(db_); }

void Reader::validate() {
  {
    Stmt v(db_, path_, "PRAGMA user_version", __FILE__, __LINE__);
    v.step(__FILE__, __LINE__);
    version_ = sqlite3_column_int(v.get(), 0);
  }
  if (version_ == 0)
    throw Error("glassbox: '" + path_ + "' is a SQLite database but not a glassbox trace (user_version 0)");
  if (version_ > kSchemaVersion)
    throw Error("glassbox: '" + path_ + "': trace schema version " + std::to_string(version_) +
                " is newer than this glassbox reads (" + std::to_string(kSchemaVersion) + "); upgrade glassbox");
  if (version_ < 0)
    throw Error("glassbox: '" + path_ + "' has an invalid trace schema version " + std::to_string(version_));

  // An older file reads through views that give it this version's columns and tables (schema.h compat_sql).
  if (version_ < kSchemaVersion) {
    detail::count_statement();
    char* err = nullptr;
    if (sqlite3_exec(db_, compat_sql(version_), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string why = err ? err : "unknown";
      sqlite3_free(err);
      throw Error("glassbox: trace '" + path_ + "' (schema version " + std::to_string(version_) +
                  ") cannot be read as version " + std::to_string(kSchemaVersion) + " (" + why +
                  "); the file is damaged");
    }
  }
  std::set<std::string, std::less<>> tables;
  Stmt t(db_, path_,
         "SELECT name FROM sqlite_master WHERE type = 'table' UNION "
         "SELECT name FROM sqlite_temp_master WHERE type IN ('table', 'view')",
         __FILE__, __LINE__);
  while (t.step(__FILE__, __LINE__)) tables.emplace(reinterpret_cast<const char*>(sqlite3_column_text(t.get(), 0)));
  for (std::string_view name : required_tables())
    if (!tables.contains(name))
      throw Error("glassbox: trace '" + path_ + "' has no table '" + std::string(name) + "' (schema version " +
                  std::to_string(version_) + " requires it); the file is damaged or was not written by glassbox");
  // Every column the schema declares (traces/tables.h) must exist: preparing each table's SELECT checks them all.
  for (const TableInfo& table : gb::trace::tables()) {
    std::string cols;
    for (const ColumnInfo& c : table.columns) (cols += (cols.empty() ? "" : ", ")) += c.name;
    const std::string sql = "SELECT " + cols + " FROM " + std::string(table.name) + " LIMIT 0";
    sqlite3_stmt* s = nullptr;
    detail::count_statement();
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
      std::string why = sqlite3_errmsg(db_);
      throw Error("glassbox: trace '" + path_ + "': table '" + std::string(table.name) + "' does not have the " +
                  "columns of schema version " + std::to_string(version_) + " (" + why + "); the file is damaged");
    }
    sqlite3_finalize(s);
  }
}

namespace {
// The one text column of the first row of `sql` with its single parameter bound, or nothing when no row matches.
template <typename Key>
std::optional<std::string> first_text(sqlite3* db, const std::string& path, const char* sql, const Key& key) {
  Stmt s(db, path, sql, __FILE__, __LINE__);
  s.bind(1, key, __FILE__, __LINE__);
  if (!s.step(__FILE__, __LINE__)) return std::nullopt;
  std::string v;
  detail::read_value(s.get(), 0, v);
  return v;
}
}  // namespace

std::optional<std::string> Reader::meta(std::string_view key) const {
  return first_text(db_, path_, "SELECT value FROM meta WHERE key = ?", key);
}

std::optional<std::string> Reader::string(Id id) const {
  return first_text(db_, path_, "SELECT text FROM strings WHERE id = ?", id);
}

template <class R>
std::vector<R> Reader::all() const {
  Stmt s(db_, path_, detail::select_sql<R>() + " ORDER BY rowid", __FILE__, __LINE__);
  std::vector<R> rows;
  while (s.step(__FILE__, __LINE__)) rows.push_back(detail::read_row<R>(s.get()));
  return rows;
}

// A thread's spans are the id range [span_id(thread, 0), span_id(thread + 1, 0)), in start order (records.h), so
// the window is found by binary search over ids, and no (thread, start) index is needed. Spans that began
// before t0 and are still open at t0 enclose the last span that began before t0: they are its ancestors.
std::vector<SpanItem> Reader::spans(Id thread_id, std::int64_t t0_ns, std::int64_t t1_ns,
                                    std::int64_t fold_below_ns) const {
  const Id lo = span_id(thread_id, 0), hi = span_id(thread_id + 1, 0);
  const std::string cols = detail::select_sql<SpanRecord>();
  Stmt after(db_, path_, cols + " WHERE id >= ? AND id < ? ORDER BY id LIMIT 1", __FILE__, __LINE__);
  auto first_from = [&](Id from, Id below) -> std::optional<SpanRecord> {
    after.bind(1, from, __FILE__, __LINE__);
    after.bind(2, below, __FILE__, __LINE__);
    std::optional<SpanRecord> r;
    if (after.step(__FILE__, __LINE__)) r = detail::read_row<SpanRecord>(after.get());
    after.reset();
    return r;
  };
  // a = the first id whose span starts at or after t0 (rows below a start before t0; rows from b on, after).
  Id a = lo, b = hi;
  if (t0_ns != kTimeMin) {
    while (a < b) {
      Id mid = a + (b - a) / 2;
      std::optional<SpanRecord> r = first_from(mid, b);
      if (!r || r->start_ns >= t0_ns) b = mid;
      else a = r->id + 1;
    }
  }
  std::vector<SpanRecord> open;  // spans that began before t0 and end at or after it, outermost first
  if (a > lo) {
    Stmt last(db_, path_, cols + " WHERE id < ? AND id >= ? ORDER BY id DESC LIMIT 1", __FILE__, __LINE__);
    last.bind(1, a, __FILE__, __LINE__);
    last.bind(2, lo, __FILE__, __LINE__);
    std::optional<SpanRecord> cur;
    if (last.step(__FILE__, __LINE__)) cur = detail::read_row<SpanRecord>(last.get());
    Stmt by_id(db_, path_, cols + " WHERE id = ?", __FILE__, __LINE__);
    while (cur) {
      if (cur->end_ns >= t0_ns && cur->start_ns <= t1_ns) open.push_back(*cur);
      if (!cur->parent_id) break;
      by_id.bind(1, *cur->parent_id, __FILE__, __LINE__);
      cur.reset();
      if (by_id.step(__FILE__, __LINE__)) cur = detail::read_row<SpanRecord>(by_id.get());
      by_id.reset();
    }
    std::reverse(open.begin(), open.end());
  }

  std::vector<SpanItem> items;
  bool in_run = false;  // the last item is a run of short spans that may grow
  auto take = [&](const SpanRecord& r) {
    bool is_short = r.end_ns - r.start_ns < fold_below_ns;
    if (is_short && in_run) {
      SpanItem& run = items.back();
      run.count += 1;
      run.end_ns = std::max(run.end_ns, r.end_ns);
      return;
    }
    items.push_back(SpanItem{r.start_ns, r.end_ns, 1, r});
    in_run = is_short;
  };
  for (const SpanRecord& r : open) take(r);
  Stmt s(db_, path_, cols + " WHERE id >= ? AND id < ? ORDER BY id", __FILE__, __LINE__);
  s.bind(1, a, __FILE__, __LINE__);
  s.bind(2, hi, __FILE__, __LINE__);
  while (s.step(__FILE__, __LINE__)) {
    SpanRecord r = detail::read_row<SpanRecord>(s.get());
    if (r.start_ns > t1_ns) break;
    take(r);
  }
  return items;
}

std::int64_t Reader::span_count(Id thread_id, std::int64_t t0_ns, std::int64_t t1_ns) const {
  const Id lo = span_id(thread_id, 0), hi = span_id(thread_id + 1, 0);
  Stmt after(db_, path_, "SELECT id, start_ns FROM spans WHERE id >= ? AND id < ? ORDER BY id LIMIT 1", __FILE__,
             __LINE__);
  // The first id whose span starts at or after t (strictly after, when `after_t`), or hi when none.
  auto first = [&](std::int64_t t, bool after_t) {
    Id a = lo, b = hi;
    while (a < b) {
      const Id mid = a + (b - a) / 2;
      after.bind(1, mid, __FILE__, __LINE__);
      after.bind(2, b, __FILE__, __LINE__);
      const bool found = after.step(__FILE__, __LINE__);
      const Id id = found ? sqlite3_column_int64(after.get(), 0) : 0;
      const std::int64_t start = found ? sqlite3_column_int64(after.get(), 1) : 0;
      after.reset();
      if (!found || (after_t ? start > t : start >= t)) b = mid;
      else a = id + 1;
    }
    return a;
  };
  // A boundary may fall in a gap below the thread's first id: snap it to the next real id (or past the last).
  auto snap = [&](Id boundary) {
    after.bind(1, boundary, __FILE__, __LINE__);
    after.bind(2, hi, __FILE__, __LINE__);
    const Id id = after.step(__FILE__, __LINE__) ? sqlite3_column_int64(after.get(), 0) : hi;
    after.reset();
    return id;
  };
  if (t1_ns < t0_ns) return 0;
  const Id a = snap(first(t0_ns, false)), b = snap(first(t1_ns, true));
  if (b == hi) {  // past the last span: count up to it
    Stmt last(db_, path_, "SELECT max(id) FROM spans WHERE id >= ? AND id < ?", __FILE__, __LINE__);
    last.bind(1, lo, __FILE__, __LINE__);
    last.bind(2, hi, __FILE__, __LINE__);
    last.step(__FILE__, __LINE__);
    if (sqlite3_column_type(last.get(), 0) == SQLITE_NULL || a == hi) return 0;
    return sqlite3_column_int64(last.get(), 0) + 1 - a;
  }
  return b - a;
}

std::vector<GradStatRecord> Reader::grad_stats(OptId step, OptId param_id) const {
  Stmt s(db_, path_,
         detail::select_sql<GradStatRecord>() +
             " WHERE (?1 IS NULL OR step = ?1) AND (?2 IS NULL OR param_id = ?2) ORDER BY step, param_id",
         __FILE__, __LINE__);
  detail::bind_value(s, 1, step);
  detail::bind_value(s, 2, param_id);
  std::vector<GradStatRecord> rows;
  while (s.step(__FILE__, __LINE__)) rows.push_back(detail::read_row<GradStatRecord>(s.get()));
  return rows;
}

std::vector<AnomalyRecord> Reader::anomalies() const {
  Stmt s(db_, path_, detail::select_sql<AnomalyRecord>() + " ORDER BY t_ns, id", __FILE__, __LINE__);
  std::vector<AnomalyRecord> rows;
  while (s.step(__FILE__, __LINE__)) rows.push_back(detail::read_row<AnomalyRecord>(s.get()));
  return rows;
}

std::vector<OpRow> Reader::op_table(SpanKind kind) const {
  Stmt s(db_, path_, R"sql(
    WITH children AS (
      SELECT parent_id AS id, SUM(end_ns - start_ns) AS child_ns FROM spans
      WHERE parent_id IS NOT NULL GROUP BY parent_id)
    SELECT s.name_id, COALESCE(t.text, ''), COUNT(*), SUM(s.end_ns - s.start_ns - COALESCE(c.child_ns, 0)),
           SUM(s.end_ns - s.start_ns)
    FROM spans s LEFT JOIN children c ON c.id = s.id LEFT JOIN strings t ON t.id = s.name_id
    WHERE s.kind = ?
    GROUP BY s.name_id ORDER BY 5 DESC, 2)sql",
         __FILE__, __LINE__);
  s.bind(1, static_cast<std::int64_t>(kind), __FILE__, __LINE__);
  std::vector<OpRow> rows;
  while (s.step(__FILE__, __LINE__)) {
    OpRow r;
    detail::read_value(s.get(), 0, r.name_id);
    detail::read_value(s.get(), 1, r.name);
    detail::read_value(s.get(), 2, r.calls);
    detail::read_value(s.get(), 3, r.self_ns);
    detail::read_value(s.get(), 4, r.total_ns);
    r.avg_ns = r.calls ? static_cast<double>(r.total_ns) / static_cast<double>(r.calls) : 0.0;
    rows.push_back(std::move(r));
  }
  return rows;
}

template std::vector<ThreadRecord> Reader::all() const;
template std::vector<SpanRecord> Reader::all() const;
template std::vector<OpDetailsRecord> Reader::all() const;
template std::vector<ModuleRecord> Reader::all() const;
template std::vector<ParamRecord> Reader::all() const;
template std::vector<StepRecord> Reader::all() const;
template std::vector<GraphNodeRecord> Reader::all() const;
template std::vector<GraphEdgeRecord> Reader::all() const;
template std::vector<MemoryEventRecord> Reader::all() const;
template std::vector<OomReportRecord> Reader::all() const;
template std::vector<GradStatRecord> Reader::all() const;
template std::vector<AnomalyRecord> Reader::all() const;
template std::vector<CounterRecord> Reader::all() const;
template std::vector<KernelRecord> Reader::all() const;
template std::vector<InstantRecord> Reader::all() const;
template std::vector<CollectiveRecord> Reader::all() const;
template std::vector<RankRecord> Reader::all() const;
template std::vector<RankStepRecord> Reader::all() const;
template std::vector<StepMemoryRecord> Reader::all() const;
template std::vector<DetailWindowRecord> Reader::all() const;

}  // namespace gb::trace
