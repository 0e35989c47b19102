// tests/traces/reader_test.cpp — traces/reader.cpp: round trip of every record, the op table, level of detail,
// memory / grad / anomaly queries, and the opening checks on damaged or foreign files.
#include "traces/reader.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include <fstream>
#include <random>

#include "traces/error.h"
#include "traces/schema.h"
#include "traces/temp_dir.h"
#include "traces/writer.h"

using namespace gb::trace;

namespace {

template <class R>
void check_round_trip(const std::string& path, const std::vector<R>& rows) {
  Reader r(path);
  auto back = r.all<R>();
  REQUIRE(back.size() == rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) CHECK(back[i] == rows[i]);
}

// A finished trace with a couple of spans, for the opening checks.
std::string small_trace(const TempDir& tmp, const std::string& name) {
  std::string path = tmp.file(name);
  Writer w(path);
  Id n = w.intern("matmul");
  for (int i = 1; i <= 200; ++i)
    w.add(SpanRecord{.id = span_id(1, i), .name_id = n, .thread_id = 1, .start_ns = 10 * i, .end_ns = 10 * i + 5});
  w.close();
  return path;
}

std::string copy_prefix(const std::string& from, const std::string& to, std::size_t bytes) {
  std::ifstream in(from, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(to, std::ios::binary).write(data.data(), static_cast<std::streamsize>(std::min(bytes, data.size())));
  return to;
}

void run_sql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  REQUIRE(sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
}

}  // namespace

TEST_CASE("every record type survives Writer then Reader unchanged, NULLs included") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  Writer w(path);
  Id mm = w.intern("matmul"), shapes = w.intern("[[2, 3], [3, 4]]"), dts = w.intern("float32,float32");
  std::vector<ThreadRecord> threads = {{1, 4242, "main", ThreadRole::main, std::nullopt},
                                       {2, 4243, "worker 0", ThreadRole::dataloader_worker, std::nullopt}};
  std::vector<SpanRecord> spans = {
      {span_id(1, 1), SpanKind::step, mm, 1, 0, 1000, 0, std::nullopt, std::nullopt, std::nullopt},
      {span_id(1, 2), SpanKind::op, mm, 1, 10, 900, 0, span_id(1, 1), 7, 3},
      {span_id(2, 1), SpanKind::cuda_api, mm, 2, -5, 5, std::nullopt, std::nullopt, std::nullopt, std::nullopt}};
  std::vector<InstantRecord> instants = {{1, 15, mm, 1, span_id(1, 2), 0}, {2, 20, dts, 2, {}, {}}};
  std::vector<OpDetailsRecord> ops = {{2, shapes, dts, kCpu, 48, 96}, {3, std::nullopt, std::nullopt, 0, {}, {}}};
  std::vector<ModuleRecord> modules = {{1, "", "MLP", std::nullopt}, {3, "fc1", "Linear", 1}};
  std::vector<ParamRecord> params = {{1, 3, "weight", "[128, 784]", 100352, DType::float32},
                                     {2, 3, "bias", "[128]", 128, DType::bfloat16}};
  std::vector<StepRecord> steps = {
      {.step = 0, .start_ns = 0, .end_ns = 1000, .loss = 2.3, .lr = 0.1, .data_ns = 10, .forward_ns = 300,
       .backward_ns = 600, .optimizer_ns = 90, .samples = 64, .tokens = 4096, .grad_norm = 1.5},
      {.step = 1, .start_ns = 1000, .end_ns = 2000, .grad_scale = 65536.0, .skipped = true}};
  std::vector<GraphNodeRecord> nodes = {{1, 0, 7, mm, 2, 3, 4096}, {2, 0, 8, mm, std::nullopt, std::nullopt, 0}};
  std::vector<GraphEdgeRecord> edges = {{0, 2, 1, 0}, {0, 2, 1, 1}};
  std::vector<MemoryEventRecord> mem = {
      {1, 10, MemAction::alloc, 0, 0x7f0000001000, 512, 500, 9, 0, MemCategory::activation, 2, 3, 512, 2097152},
      {2, 20, MemAction::free, kCpu, 0x1000, 512, 512, {}, 0, MemCategory::unknown, {}, {}, 0, 2097152}};
  std::vector<OomReportRecord> ooms = {{1, 30, 1 << 30, 80LL << 30, 1 << 20, 79LL << 30, 80LL << 30, 1 << 19, "OOM\n"}};
  std::vector<GradStatRecord> grads = {{0, 1, 0.5, 0.25, 0, 0, 0.1, 3.0, 0.01}, {0, 2, 1e-9, 1e-10, 1, 2, 0, 0, {}}};
  std::vector<AnomalyRecord> anomalies = {
      {1, 40, 0, AnomalyKind::nonfinite_backward, Severity::error, 2, 1, 3, 2, 1e300, "nan in mm backward", {}},
      {2, 50, {}, AnomalyKind::memory_growth, Severity::info, {}, {}, {}, {}, {}, "", {}}};
  std::vector<CounterRecord> counters = {{5, mm, 1.5}, {6, mm, -2.0}};
  std::vector<KernelRecord> kernels = {{3, 0, 7, 1234, span_id(1, 2), "128,1,1", "256,1,1", 32, 49152},
                                       {4, 0, 7, 1235, std::nullopt, "1,1,1", "32,1,1", 8, 0}};
  std::vector<StepMemoryRecord> step_memory = {{0, kCpu, 4096, 2097152, 1024, 2097152, 0, 512, 1024, 2048, 0, 512, 0, 0},
                                               {0, 0, 1, 2, 0, 2, 1, 0, 0, 0, 0, 0, 0, 0}};
  std::vector<DetailWindowRecord> windows = {{1, 0, 0, 0, 1000, DetailReason::first},
                                             {2, 1, 1, 1000, 2000, DetailReason::anomaly}};
  for (auto& r : threads) w.add(r);
  for (auto& r : spans) w.add(r);
  for (auto& r : instants) w.add(r);
  for (auto& r : ops) w.add(r);
  for (auto& r : modules) w.add(r);
  for (auto& r : params) w.add(r);
  for (auto& r : steps) w.add(r);
  for (auto& r : nodes) w.add(r);
  for (auto& r : edges) w.add(r);
  for (auto& r : mem) w.add(r);
  for (auto& r : ooms) w.add(r);
  for (auto& r : grads) w.add(r);
  for (auto& r : anomalies) w.add(r);
  for (auto& r : counters) w.add(r);
  for (auto& r : kernels) w.add(r);
  for (auto& r : step_memory) w.add(r);
  for (auto& r : windows) w.add(r);
  w.close();
  check_round_trip(path, threads);
  check_round_trip(path, spans);
  check_round_trip(path, step_memory);
  check_round_trip(path, windows);
  check_round_trip(path, instants);
  check_round_trip(path, ops);
  check_round_trip(path, modules);
  check_round_trip(path, params);
  check_round_trip(path, steps);
  check_round_trip(path, nodes);
  check_round_trip(path, edges);
  check_round_trip(path, mem);
  check_round_trip(path, ooms);
  check_round_trip(path, grads);
  check_round_trip(path, anomalies);
  check_round_trip(path, counters);
  check_round_trip(path, kernels);
  CHECK(sql_int(path, "SELECT count(*) FROM spans WHERE parent_id IS NULL") == 2);  // nullopt is SQL NULL

  Reader r(path);
  CHECK(r.grad_stats().size() == 2);
  REQUIRE(r.grad_stats(0, 2).size() == 1);
  CHECK(r.grad_stats(0, 2)[0] == grads[1]);
  CHECK(r.grad_stats(1).empty());
  CHECK(r.anomalies() == anomalies);
}

TEST_CASE("the op table of a known trace, number by number: self = total - direct children") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  Writer w(path);
  Id linear = w.intern("linear"), mm = w.intern("matmul"), add = w.intern("add"), relu = w.intern("relu");
  Id fwd = w.intern("forward");
  auto span = [&](Id id, SpanKind k, Id name, std::int64_t s, std::int64_t e, OptId parent) {
    w.add(SpanRecord{.id = span_id(1, id), .kind = k, .name_id = name, .thread_id = 1, .start_ns = s, .end_ns = e,
                     .parent_id = parent ? OptId(span_id(1, *parent)) : std::nullopt});
  };
  span(1, SpanKind::module, fwd, 0, 1000, std::nullopt);  // a module span: not an op, but a parent
  span(2, SpanKind::op, linear, 0, 100, 1);               // linear 100 = matmul 60 + add 25 + 15 self
  span(3, SpanKind::op, mm, 5, 65, 2);
  span(4, SpanKind::op, add, 70, 95, 2);
  span(5, SpanKind::op, relu, 100, 110, 1);
  span(6, SpanKind::op, linear, 200, 250, 1);             // linear 50 = matmul 40 + 10 self
  span(7, SpanKind::op, mm, 200, 240, 6);
  span(8, SpanKind::op, add, 300, 305, std::nullopt);
  w.close();

  Reader r(path);
  auto rows = r.op_table();
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].name == "linear");
  CHECK(rows[0].calls == 2);
  CHECK(rows[0].total_ns == 150);
  CHECK(rows[0].self_ns == 25);
  CHECK(rows[0].avg_ns == doctest::Approx(75.0));
  CHECK(rows[1].name == "matmul");
  CHECK(rows[1].name_id == mm);
  CHECK(rows[1].calls == 2);
  CHECK(rows[1].total_ns == 100);
  CHECK(rows[1].self_ns == 100);
  CHECK(rows[2].name == "add");
  CHECK(rows[2].calls == 2);
  CHECK(rows[2].total_ns == 30);
  CHECK(rows[2].self_ns == 30);
  CHECK(rows[2].avg_ns == doctest::Approx(15.0));
  CHECK(rows[3].name == "relu");
  CHECK(rows[3].total_ns == 10);

  auto modules = r.op_table(SpanKind::module);
  REQUIRE(modules.size() == 1);
  CHECK(modules[0].total_ns == 1000);
  CHECK(modules[0].self_ns == 1000 - 100 - 10 - 50);
}

TEST_CASE("spans in a window, with runs of short spans folded into one item with a count") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  Writer w(path);
  Id n = w.intern("op");
  Id n1 = 1, n2 = 1;
  auto span = [&](std::int64_t thread, std::int64_t s, std::int64_t e) {
    w.add(SpanRecord{.id = span_id(thread, thread == 1 ? n1++ : n2++), .name_id = n, .thread_id = thread,
                     .start_ns = s, .end_ns = e});
  };
  span(1, 0, 1000);                                      // long
  for (int i = 0; i < 5; ++i) span(1, 1000 + 10 * i, 1000 + 10 * i + 5);  // 5 short: 1000..1045
  span(1, 2000, 2500);                                   // long
  span(1, 3000, 3002);                                   // one short on its own
  span(2, 0, 5000);                                      // another thread
  w.close();

  Reader r(path);
  auto all = r.spans(1);
  CHECK(all.size() == 8);
  for (auto& it : all) CHECK(it.count == 1);

  auto lod = r.spans(1, kTimeMin, kTimeMax, 100);
  REQUIRE(lod.size() == 4);
  CHECK(lod[0].count == 1);
  CHECK(lod[0].span.id == span_id(1, 1));
  CHECK(lod[1].count == 5);
  CHECK(lod[1].start_ns == 1000);
  CHECK(lod[1].end_ns == 1045);
  CHECK(lod[1].span.id == span_id(1, 2));
  CHECK(lod[2].count == 1);
  CHECK(lod[2].span.start_ns == 2000);
  CHECK(lod[3].count == 1);
  CHECK(lod[3].end_ns == 3002);

  auto window = r.spans(1, 1015, 2100);  // overlapping [1015, 2100]: 1010..1015 (touches), 1020, 1030, 1040, 2000
  REQUIRE(window.size() == 5);
  CHECK(window[0].start_ns == 1010);
  CHECK(window[4].start_ns == 2000);
  CHECK(r.spans(2).size() == 1);
  CHECK(r.spans(3).empty());
}

TEST_CASE("a window inside nested spans returns the enclosing spans that began before it, outermost first") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  Writer w(path);
  Id n = w.intern("op");
  auto span = [&](std::int64_t i, std::int64_t s, std::int64_t e, std::optional<std::int64_t> parent) {
    w.add(SpanRecord{.id = span_id(3, i), .name_id = n, .thread_id = 3, .start_ns = s, .end_ns = e,
                     .parent_id = parent ? OptId(span_id(3, *parent)) : std::nullopt});
  };
  // written in end order, as the collector does: children before their parents
  span(3, 100, 200, 2);
  span(4, 600, 700, 2);
  span(2, 100, 900, 1);
  span(5, 950, 990, 1);
  span(1, 0, 1000, std::nullopt);
  span(6, 2000, 2100, std::nullopt);
  w.close();
  Reader r(path);
  auto in = r.spans(3, 650, 660);
  REQUIRE(in.size() == 3);
  CHECK(in[0].span.id == span_id(3, 1));
  CHECK(in[1].span.id == span_id(3, 2));
  CHECK(in[2].span.id == span_id(3, 4));
  auto later = r.spans(3, 920, 2050);  // 1 is still open, 5 and 6 start inside
  REQUIRE(later.size() == 3);
  CHECK(later[0].span.id == span_id(3, 1));
  CHECK(later[1].span.id == span_id(3, 5));
  CHECK(later[2].span.id == span_id(3, 6));
  CHECK(r.spans(3, 1500, 1600).empty());
  CHECK(r.spans(3, 5000).empty());
  // span_count: spans starting in the window, from ids alone.
  CHECK(r.span_count(3, kTimeMin, kTimeMax) == 6);
  CHECK(r.span_count(3, 100, 600) == 3);   // 2 and 3 start at 100, 4 at 600
  CHECK(r.span_count(3, 101, 599) == 0);
  CHECK(r.span_count(3, 950, 2000) == 2);
  CHECK(r.span_count(3, 2001, 9000) == 0);
  CHECK(r.span_count(4, kTimeMin, kTimeMax) == 0);
}

TEST_CASE("a trace read back while its writer is still open, and after a crash without indexes") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  Writer w(path);
  w.add(SpanRecord{.id = span_id(1, 1), .name_id = w.intern("op"), .thread_id = 1, .start_ns = 0, .end_ns = 10});
  w.flush();
  Reader r(path);
  CHECK(r.op_table().size() == 1);
  CHECK(r.spans(1).size() == 1);
  CHECK_FALSE(r.meta("closed_cleanly").has_value());
}

TEST_CASE("damaged and foreign files fail with one clear line") {
  TempDir tmp;
  std::string good = small_trace(tmp, "good.db");
  CHECK_NOTHROW(Reader{good});

  std::string missing = tmp.file("missing.db");
  CHECK_THROWS_WITH_AS(Reader{missing}, ("glassbox: trace '" + missing + "' does not exist; check the path").c_str(),
                       Error);

  std::string empty = tmp.file("empty.db");
  std::ofstream(empty).close();
  CHECK_THROWS_WITH_AS(Reader{empty}, doctest::Contains("is empty"), Error);

  std::string noise = tmp.file("noise.db");
  {
    std::mt19937 rng(7);
    std::ofstream f(noise, std::ios::binary);
    for (int i = 0; i < 8192; ++i) f.put(static_cast<char>(rng()));
  }
  CHECK_THROWS_WITH_AS(Reader{noise}, doctest::Contains("is not a glassbox trace (not a SQLite database"), Error);

  auto size = std::filesystem::file_size(good);
  REQUIRE(size > 8192);
  std::string cut = copy_prefix(good, tmp.file("cut.db"), size / 2);
  CHECK_THROWS_WITH_AS(Reader{cut}, doctest::Contains("is truncated"), Error);
  std::string tiny = copy_prefix(good, tmp.file("tiny.db"), 50);
  CHECK_THROWS_AS(Reader{tiny}, Error);

  std::string dropped = small_trace(tmp, "dropped.db");
  run_sql(dropped, "DROP TABLE kernels");
  CHECK_THROWS_WITH_AS(Reader{dropped}, doctest::Contains("has no table 'kernels'"), Error);

  std::string column = small_trace(tmp, "column.db");
  run_sql(column, "ALTER TABLE steps DROP COLUMN lr");
  CHECK_THROWS_WITH_AS(Reader{column}, doctest::Contains("table 'steps' does not have the columns"), Error);

  std::string future = small_trace(tmp, "future.db");
  run_sql(future, "PRAGMA user_version = 7");
  CHECK_THROWS_WITH_AS(
      Reader{future},
      ("glassbox: '" + future + "': trace schema version 7 is newer than this glassbox reads (6); upgrade glassbox")
          .c_str(),
      Error);

  std::string foreign = tmp.file("foreign.db");
  run_sql(foreign, "CREATE TABLE t (x)");
  CHECK_THROWS_WITH_AS(Reader{foreign}, doctest::Contains("not a glassbox trace (user_version 0)"), Error);
}

TEST_CASE("schema version 6 reads version 1 files (anomaly kinds 0..6) as they are, and kinds 7..13 (version 2, 6)") {
  CHECK(kSchemaVersion == 6);
  TempDir tmp;
  std::string v1 = small_trace(tmp, "v1.db");
  run_sql(v1,
          "INSERT INTO anomalies (id, t_ns, step, kind, severity, message) VALUES (1, 5, 0, 0, 2, 'nan in log'), "
          "(2, 9, 1, 6, 1, 'memory grows'); PRAGMA user_version = 1");
  Reader r(v1);
  CHECK(r.schema_version() == 1);
  auto a = r.anomalies();
  REQUIRE(a.size() == 2);
  CHECK(a[0].kind == AnomalyKind::nonfinite_forward);
  CHECK(a[1].kind == AnomalyKind::memory_growth);
  CHECK(r.op_table().size() == 1);

  std::string v2 = tmp.file("v2.db");
  {
    Writer w(v2);
    for (int k = 0; k < kAnomalyKinds; ++k)
      w.add(AnomalyRecord{.id = k + 1, .t_ns = k, .kind = static_cast<AnomalyKind>(k), .message = "k"});
  }
  Reader r2(v2);
  CHECK(r2.schema_version() == 6);
  REQUIRE(r2.anomalies().size() == 14);
  CHECK(r2.anomalies().back().kind == AnomalyKind::no_gradient);
  CHECK(r2.anomalies()[12].kind == AnomalyKind::depth_gradient);
  CHECK(r2.anomalies()[8].kind == AnomalyKind::update_ratio);

  std::string v7 = small_trace(tmp, "v7.db");
  run_sql(v7, "PRAGMA user_version = 7");
  CHECK_THROWS_WITH_AS(Reader{v7}, doctest::Contains("trace schema version 7 is newer than this glassbox reads (6)"),
                       Error);
}

TEST_CASE("a version 3 file (no ranks, no collectives) reads through views: NULL ranks, empty new tables") {
  TempDir tmp;
  std::string v3 = small_trace(tmp, "v3.db");
  run_sql(v3,
          "INSERT INTO anomalies (id, t_ns, step, kind, severity, message) VALUES (1, 5, 0, 0, 2, 'nan in log');"
          "INSERT INTO threads (id, os_tid, name, role) VALUES (1, 100, 'main', 0);"
          "ALTER TABLE threads DROP COLUMN rank; ALTER TABLE anomalies DROP COLUMN rank; DROP TABLE collectives;"
          "DROP TABLE ranks; DROP TABLE rank_steps; DROP TABLE step_memory; DROP TABLE detail_windows;"
          "ALTER TABLE steps DROP COLUMN grad_norm; PRAGMA user_version = 3");
  Reader r(v3);
  CHECK(r.schema_version() == 3);
  const auto threads = r.all<ThreadRecord>();
  REQUIRE_FALSE(threads.empty());
  for (const ThreadRecord& t : threads) CHECK_FALSE(t.rank);
  REQUIRE(r.anomalies().size() == 1);
  CHECK_FALSE(r.anomalies()[0].rank);
  CHECK(r.anomalies()[0].message == "nan in log");
  CHECK(r.all<CollectiveRecord>().empty());
  CHECK(r.all<RankRecord>().empty());
  CHECK(r.all<RankStepRecord>().empty());
  CHECK(r.all<StepMemoryRecord>().empty());
  // the file itself is as it was: the views live on the reader's connection only
  CHECK(sql_int(v3, "SELECT count(*) FROM sqlite_master WHERE name = 'collectives'") == 0);
  CHECK(sql_int(v3, "PRAGMA user_version") == 3);
}

TEST_CASE("a version 5 file (no causes, no OOM ages) reads through views: NULL cause_id, cause, step, kept_bytes") {
  TempDir tmp;
  std::string v5 = tmp.file("v5.db");
  {
    Writer w(v5);
    w.add(AnomalyRecord{.id = 1, .t_ns = 5, .step = 0, .kind = AnomalyKind::update_ratio, .message = "big update"});
    w.add(OomReportRecord{.id = 1, .t_ns = 9, .requested = 1024, .report = "out of memory"});
  }
  run_sql(v5,
          "ALTER TABLE anomalies DROP COLUMN cause_id; ALTER TABLE anomalies DROP COLUMN cause;"
          "ALTER TABLE oom_reports DROP COLUMN step; ALTER TABLE oom_reports DROP COLUMN kept_bytes;"
          "PRAGMA user_version = 5");
  Reader r(v5);
  CHECK(r.schema_version() == 5);
  REQUIRE(r.anomalies().size() == 1);
  CHECK(r.anomalies()[0].message == "big update");
  CHECK_FALSE(r.anomalies()[0].cause_id);
  CHECK(r.anomalies()[0].cause.empty());
  const auto ooms = r.all<OomReportRecord>();
  REQUIRE(ooms.size() == 1);
  CHECK(ooms[0].requested == 1024);
  CHECK_FALSE(ooms[0].step);
  CHECK_FALSE(ooms[0].kept_bytes);
  CHECK(sql_int(v5, "PRAGMA user_version") == 5);  // the file is as it was
}

TEST_CASE("a version 4 file (no run summary) reads through views: steps with NULL summary columns, no windows") {
  TempDir tmp;
  std::string v4 = tmp.file("v4.db");
  {
    Writer w(v4);
    w.add(StepRecord{.step = 0, .start_ns = 0, .end_ns = 1000, .loss = 2.5, .lr = 0.1});
    w.add(StepRecord{.step = 1, .start_ns = 1000, .end_ns = 2100, .loss = 2.0, .lr = 0.1, .skipped = true});
  }
  run_sql(v4,
          "ALTER TABLE steps DROP COLUMN data_ns; ALTER TABLE steps DROP COLUMN forward_ns;"
          "ALTER TABLE steps DROP COLUMN backward_ns; ALTER TABLE steps DROP COLUMN optimizer_ns;"
          "ALTER TABLE steps DROP COLUMN samples; ALTER TABLE steps DROP COLUMN tokens;"
          "ALTER TABLE steps DROP COLUMN grad_norm; DROP TABLE step_memory; DROP TABLE detail_windows;"
          "PRAGMA user_version = 4");
  Reader r(v4);
  CHECK(r.schema_version() == 4);
  const auto steps = r.all<StepRecord>();
  REQUIRE(steps.size() == 2);
  CHECK(steps[1].end_ns == 2100);
  CHECK(steps[1].skipped);
  CHECK(steps[0].loss == 2.5);
  CHECK_FALSE(steps[0].data_ns);
  CHECK_FALSE(steps[0].grad_norm);
  CHECK(r.all<StepMemoryRecord>().empty());
  CHECK(r.all<DetailWindowRecord>().empty());
  CHECK(sql_int(v4, "SELECT count(*) FROM sqlite_master WHERE name = 'detail_windows'") == 0);
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST_CASE("NaN gradient statistics and counter values survive the round trip (SQLite stores NaN as NULL)") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  Writer w(path);
  w.add(GradStatRecord{3, 1, kNaN, kNaN, 12, 0, 0.0, 2.0, {}});
  w.add(GradStatRecord{3, 2, 1e308 * 10, 1.0, 0, 1, 0.5, 1.0, 0.1});  // +inf is stored as itself
  w.add(CounterRecord{5, w.intern("loss"), kNaN});
  w.close();
  Reader r(path);
  auto g = r.grad_stats(3);
  REQUIRE(g.size() == 2);
  CHECK(std::isnan(g[0].norm));
  CHECK(std::isnan(g[0].max_abs));
  CHECK(g[0].nan_count == 12);
  CHECK(g[0].param_norm == 2.0);
  CHECK(std::isinf(g[1].norm));
  CHECK(std::isnan(r.all<CounterRecord>().at(0).value));
}
