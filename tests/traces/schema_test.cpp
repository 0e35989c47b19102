// tests/traces/schema_test.cpp — traces/schema.cpp: the tables a new trace holds and their CREATE text, its version,
// the enum names.
#include "traces/schema.h"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "traces/temp_dir.h"
#include "traces/writer.h"

using namespace gb::trace;

TEST_CASE("a new trace holds every required table and user_version = kSchemaVersion (6)") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  Writer(path).close();
  CHECK(sql_int(path, "PRAGMA user_version") == kSchemaVersion);
  CHECK(kSchemaVersion == 6);
  CHECK(required_tables().size() == 22);
  for (std::string_view t : required_tables())
    CHECK_MESSAGE(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='" +
                                    std::string(t) + "'") == 1, t);
  CHECK(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE type='table'") == 22);
}

TEST_CASE("the CREATE statements are made from the declared tables, in the text every version wrote") {
  const std::string sql = create_tables_sql();
  CHECK(sql.starts_with("\nCREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;\n"
                        "CREATE TABLE strings (id INTEGER PRIMARY KEY, text TEXT NOT NULL);\n"
                        "CREATE TABLE threads (id INTEGER PRIMARY KEY, os_tid INTEGER NOT NULL, name TEXT NOT NULL, "
                        "role INTEGER NOT NULL,\n  rank INTEGER);\n"));
  CHECK(sql.find("  module_id INTEGER,\n  thread_id INTEGER GENERATED ALWAYS AS (id >> 32) VIRTUAL,\n") !=
        std::string::npos);
  CHECK(sql.find("CREATE TABLE rank_steps (rank INTEGER NOT NULL, step INTEGER NOT NULL, start_ns INTEGER NOT NULL,\n"
                 "  end_ns INTEGER NOT NULL, loss REAL, skipped INTEGER NOT NULL, PRIMARY KEY (rank, step));\n") !=
        std::string::npos);
  CHECK(sql.ends_with("  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, reason INTEGER NOT NULL);\n"));
}

TEST_CASE("tables() lists every table in creation order with its columns; table() finds one by name") {
  REQUIRE(tables().size() == 22);
  CHECK(tables().front().name == "meta");
  CHECK(tables()[3].name == "spans");
  CHECK(tables().back().name == "detail_windows");
  for (std::size_t i = 0; i < tables().size(); ++i) CHECK(tables()[i].name == required_tables()[i]);
  const TableInfo& spans = table("spans");
  REQUIRE(spans.columns.size() == 12);
  CHECK(spans.stored_columns() == "id, kind, name_id, start_ns, dur_ns, step, parent_delta, seq, module_id");
  REQUIRE(spans.find("end_ns") != nullptr);
  CHECK(spans.find("end_ns")->generated());
  CHECK(spans.find("end_ns")->constraint == "GENERATED ALWAYS AS (start_ns + dur_ns) VIRTUAL");
  CHECK(!spans.find("dur_ns")->generated());
  CHECK(spans.find("nope") == nullptr);
  CHECK(table("anomalies").columns.back().name == "cause");
  CHECK(table("anomalies").columns.back().type == "TEXT");
  CHECK(table("anomalies").columns.back().constraint == "");
  CHECK_THROWS_WITH_AS(table("nope"), doctest::Contains("no table 'nope'; declare it in traces/tables.h"),
                       std::logic_error);
}

TEST_CASE("enum names are the documented ones") {
  CHECK(name(SpanKind::op) == "op");
  CHECK(name(SpanKind::cuda_api) == "cuda_api");
  CHECK(name(SpanKind::collective) == "collective");
  CHECK(name(ThreadRole::communication) == "communication");
  CHECK(name(static_cast<SpanKind>(99)) == "unknown");
  CHECK(name(ThreadRole::dataloader_worker) == "dataloader_worker");
  CHECK(name(MemAction::empty_cache) == "empty_cache");
  CHECK(name(MemCategory::optimizer_state) == "optimizer_state");
  CHECK(name(MemCategory::autograd_detail) == "autograd_detail");
  CHECK(name(DType::bfloat16) == "bfloat16");
  CHECK(name(DType::uint8) == "uint8");  // schema version 3 appended 7..9
  CHECK(name(DType::int16) == "int16");
  CHECK(name(static_cast<DType>(10)) == "unknown");
  CHECK(name(AnomalyKind::memory_growth) == "memory_growth");
  // schema version 2 appended kinds 7..11; the names are the enum's
  CHECK(name(AnomalyKind::nonfinite_loss) == "nonfinite_loss");
  CHECK(name(AnomalyKind::update_ratio) == "update_ratio");
  CHECK(name(AnomalyKind::dead_relu) == "dead_relu");
  CHECK(name(AnomalyKind::amp_scale_collapse) == "amp_scale_collapse");
  CHECK(name(AnomalyKind::missing_zero_grad) == "missing_zero_grad");
  // schema version 6 appended 12 and 13
  CHECK(name(AnomalyKind::depth_gradient) == "depth_gradient");
  CHECK(name(AnomalyKind::no_gradient) == "no_gradient");
  CHECK(name(static_cast<AnomalyKind>(kAnomalyKinds)) == "unknown");
  CHECK(name(Severity::error) == "error");
}
