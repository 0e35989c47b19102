// tests/traces/codec_test.cpp — traces/codec.h: the INSERT and SELECT column lists come from traces/tables.h, in its
// order, and a record survives a round trip through them.
#include "traces/codec.h"

#include <doctest/doctest.h>

#include "traces/schema.h"
#include "traces/temp_dir.h"

using namespace gb::trace;
using namespace gb::trace::detail;

TEST_CASE("a table's INSERT writes its stored columns in declaration order; a SELECT reads the record's") {
  CHECK(insert_sql<ModuleRecord>() == "INSERT INTO modules (id, path, type, parent_id) VALUES (?, ?, ?, ?)");
  CHECK(insert_sql<ThreadRecord>() ==
        "INSERT OR REPLACE INTO threads (id, os_tid, name, role, rank) VALUES (?, ?, ?, ?, ?)");
  CHECK(insert_rows_sql<CounterRecord>(2) == "INSERT INTO counters (t_ns, name_id, value) VALUES (?, ?, ?), (?, ?, ?)");
  CHECK(select_sql<CounterRecord>() == "SELECT t_ns, name_id, value FROM counters");
  // spans: written as StoredSpan (no generated column), read as SpanRecord (the generated ones, not the stored deltas)
  CHECK(written_columns<StoredSpan>() == 9);
  CHECK(insert_sql<StoredSpan>() ==
        "INSERT INTO spans (id, kind, name_id, start_ns, dur_ns, step, parent_delta, seq, module_id) VALUES (?, ?, ?, "
        "?, ?, ?, ?, ?, ?)");
  CHECK(select_sql<SpanRecord>() ==
        "SELECT id, kind, name_id, start_ns, step, seq, module_id, thread_id, end_ns, parent_id FROM spans");
}

TEST_CASE("a span round-trips through its stored row and the generated columns") {
  TempDir tmp;
  const std::string path = tmp.file("codec.db");
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  exec(db, path, create_tables_sql(), __FILE__, __LINE__);
  SpanRecord span;
  span.id = span_id(2, 7);
  span.kind = SpanKind::module;
  span.name_id = 5;
  span.thread_id = 2;
  span.start_ns = 1000;
  span.end_ns = 1750;
  span.step = 3;
  span.parent_id = span_id(2, 1);
  span.module_id = 4;
  {
    Stmt insert(db, path, insert_sql<StoredSpan>(), __FILE__, __LINE__);
    bind_row(insert, stored(span));
    insert.step(__FILE__, __LINE__);
  }
  CHECK(stored(span).dur_ns == 750);
  CHECK(stored(span).parent_delta == 6);
  {
    Stmt select(db, path, select_sql<SpanRecord>(), __FILE__, __LINE__);
    REQUIRE(select.step(__FILE__, __LINE__));
    CHECK(read_row<SpanRecord>(select.get()) == span);
  }
  sqlite3_close(db);
}
