// tests/traces/query/trace_db_test.cpp — traces/query/trace_db.cpp: the Reader's checks at opening, streamed rows, scalars.
#include "traces/query/trace_db.h"

#include <doctest/doctest.h>

#include "tools/synthetic_trace.h"
#include "traces/error.h"
#include "traces/schema.h"
#include "traces/temp_dir.h"

using namespace gb::query;

TEST_CASE("rows come one at a time with their columns; NULLs read as nullopt; binds fill ?1, ?2") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  synthetic::write(path);
  TraceDb db(path);
  CHECK(db.path() == path);
  CHECK(db.reader().schema_version() == gb::trace::kSchemaVersion);
  std::vector<std::int64_t> ids;
  std::vector<std::optional<std::int64_t>> parents;
  db.each("SELECT id, parent_id, dur_ns FROM spans WHERE thread_id = ?1 AND step = ?2 ORDER BY id", {1, 0},
          [&](const Row& r) {
            ids.push_back(r.i64(0));
            parents.push_back(r.opt_i64(1));
          });
  REQUIRE(ids.size() == 6);
  CHECK(ids.front() == gb::trace::span_id(1, 1));
  CHECK_FALSE(parents[0].has_value());  // the step span is a root
  CHECK(parents[1] == gb::trace::span_id(1, 1));
  db.each("SELECT text, NULL, 2.5 FROM strings WHERE text = 'matmul'", [&](const Row& r) {
    CHECK(r.text(0) == "matmul");
    CHECK(r.is_null(1));
    CHECK(r.text(1).empty());
    CHECK_FALSE(r.opt_f64(1).has_value());
    CHECK(r.f64(2) == 2.5);
  });
  CHECK(db.scalar("SELECT COUNT(*) FROM spans WHERE kind = ?1", {0}) == 12);
  CHECK(db.scalar("SELECT id FROM spans WHERE id < 0") == 0);  // no row
  CHECK(db.meta_int("context_bytes") == 300LL << 20);
  CHECK_FALSE(db.meta_int("command").has_value());  // not a number
  CHECK_FALSE(db.meta_int("no such key").has_value());
}

TEST_CASE("opening refuses what is not a trace, with the Reader's one-line messages; bad SQL names its call site") {
  TempDir tmp;
  CHECK_THROWS_WITH_AS(TraceDb(tmp.file("nope.db")), doctest::Contains("does not exist"), gb::trace::Error);
  std::string path = tmp.file("t.db");
  synthetic::write(path);
  TraceDb db(path);
  CHECK_THROWS_WITH_AS(db.scalar("SELECT no_such_column FROM spans"), doctest::Contains("trace_db.cpp"),
                       gb::trace::Error);
}
