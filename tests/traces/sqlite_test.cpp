// tests/traces/sqlite_test.cpp — the checked sqlite3 layer: statements bind and step, and every failure throws
// gb::trace::Error naming the trace path, the call as written, its call site and SQLite's own message.
#include <doctest/doctest.h>

#include <string>

#include "traces/sqlite.h"

namespace {
struct Memdb {
  sqlite3* db = nullptr;
  Memdb() { sqlite3_open(":memory:", &db); }
  ~Memdb() { sqlite3_close(db); }
};
}  // namespace

TEST_CASE("statements bind, step and reset") {
  Memdb m;
  GB_SQL_EXEC(m.db, "mem", "CREATE TABLE t(a INTEGER, b REAL, c TEXT)");
  gb::trace::detail::Stmt ins(m.db, "mem", "INSERT INTO t VALUES (?, ?, ?)", __FILE__, __LINE__);
  for (int i = 0; i < 3; ++i) {
    ins.bind(1, std::int64_t(i), __FILE__, __LINE__);
    ins.bind(2, 0.5 * i, __FILE__, __LINE__);
    if (i == 2) ins.bind_null(3, __FILE__, __LINE__);
    else ins.bind(3, std::string_view("row"), __FILE__, __LINE__);
    CHECK_FALSE(ins.step(__FILE__, __LINE__));  // an INSERT returns no row
    ins.reset();
  }
  gb::trace::detail::Stmt q(m.db, "mem", "SELECT a, b, c FROM t ORDER BY a", __FILE__, __LINE__);
  int rows = 0;
  while (q.step(__FILE__, __LINE__)) {
    CHECK(sqlite3_column_int64(q.get(), 0) == rows);
    CHECK(sqlite3_column_double(q.get(), 1) == doctest::Approx(0.5 * rows));
    CHECK((sqlite3_column_type(q.get(), 2) == SQLITE_NULL) == (rows == 2));
    ++rows;
  }
  CHECK(rows == 3);
}

TEST_CASE("failures name the path, the call and SQLite's message") {
  Memdb m;
  try {
    GB_SQL_EXEC(m.db, "/tmp/run.db", "INSERT INTO missing VALUES (1)");
    FAIL("expected a throw");
  } catch (const gb::trace::Error& e) {
    std::string msg = e.what();
    CHECK(msg.find("/tmp/run.db") != std::string::npos);
    CHECK(msg.find("no such table: missing") != std::string::npos);
  }
  try {
    gb::trace::detail::Stmt bad(m.db, "/tmp/run.db", "SELEC nonsense", __FILE__, __LINE__);
    FAIL("expected a throw");
  } catch (const gb::trace::Error& e) {
    CHECK(std::string(e.what()).find("syntax error") != std::string::npos);
  }
  CHECK_THROWS_AS(GB_SQLITE(m.db, "/tmp/run.db", sqlite3_exec(m.db, "DROP TABLE nope", nullptr, nullptr, nullptr)),
                  gb::trace::Error);
}
