// tests/traces/query/run_summary_test.cpp — traces/query/run_summary.h: the summary over every step of a long run
// (known numbers from tests/tools/long_run.h), what an old trace leaves unknown, shed events and the end of the
// trace, the windows described compactly, the detail policy's two forms, damaged values, and a 10^6-step trace's
// time.
#include "traces/query/run_summary.h"

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <chrono>

#include "tools/long_run.h"
#include "tools/synthetic_trace.h"
#include "traces/temp_dir.h"

using namespace gb::query;
using gb::trace::DetailReason;
using gb::trace::DetailWindowRecord;

namespace {

void sql(const std::string& path, const std::string& text) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, &err);
  INFO(text << ": " << std::string(err ? err : ""));
  sqlite3_free(err);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

DetailWindowRecord window(std::int64_t first, std::int64_t last, DetailReason reason) {
  DetailWindowRecord w;
  w.first_step = first;
  w.last_step = last;
  w.reason = reason;
  return w;
}

std::int64_t category(const DeviceStepMemory& d, gb::trace::MemCategory c) {
  return d.category_peaks[static_cast<std::size_t>(c)];
}

}  // namespace

TEST_CASE("a long run: step times, phases, throughput, loss, grad norm, memory and detail over every step") {
  TempDir tmp;
  const std::string path = tmp.file("long.db");
  long_run::write(path);
  const RunSummary s = run_summary(TraceDb(path));

  CHECK(s.steps == 60);
  CHECK(s.first_step == 0);
  CHECK(s.last_step == 59);
  CHECK(s.step_time.count == 60);
  CHECK(s.step_time.mean == doctest::Approx(10e6));
  CHECK(s.step_time.p90 == doctest::Approx(10e6));

  REQUIRE(s.phases);
  CHECK(s.phases->steps == 60);
  CHECK(s.phases->total_ns == doctest::Approx(600e6));
  CHECK(s.phases->data_ns == doctest::Approx(60e6));
  CHECK(s.phases->forward_ns == doctest::Approx(180e6));
  CHECK(s.phases->backward_ns == doctest::Approx(240e6));
  CHECK(s.phases->optimizer_ns == doctest::Approx(120e6));

  CHECK(s.samples_steps == 60);
  REQUIRE(s.samples_per_s);
  CHECK(*s.samples_per_s == doctest::Approx(1920 / 0.6));  // 32 samples per 10 ms
  CHECK_FALSE(s.tokens_per_s);                             // no step said its tokens: unknown, not 0
  CHECK(s.tokens_steps == 0);

  REQUIRE(s.loss);
  CHECK(s.loss->steps == 60);
  CHECK(s.loss->first.value == doctest::Approx(4.0));
  CHECK(s.loss->first.step == 0);
  CHECK(s.loss->last.value == doctest::Approx(4.0 / 60));
  CHECK(s.loss->min.step == 59);
  CHECK(s.loss->tail_steps == 6);  // the last 10%: steps 54..59, median of the middle two
  CHECK(s.loss->tail_median == doctest::Approx((4.0 / 58 + 4.0 / 57) / 2));

  REQUIRE(s.grad_norm);
  CHECK(s.grad_norm->steps == 60);
  CHECK(s.grad_norm->median == doctest::Approx(3.0));
  CHECK(s.grad_norm->max.value == doctest::Approx(50.0));
  CHECK(s.grad_norm->max.step == 13);

  REQUIRE(s.memory.size() == 2);  // by device: the cpu (-1), then cuda:0
  CHECK(s.memory[0].device == gb::trace::kCpu);
  CHECK(s.memory[0].allocated_peak == 256);
  CHECK(s.memory[0].allocated_peak_step == 0);  // every step reached it: the first
  CHECK(category(s.memory[0], gb::trace::MemCategory::input) == 256);
  const DeviceStepMemory& g = s.memory[1];
  CHECK(g.device == 0);
  CHECK(g.steps == 60);
  CHECK(g.allocated_peak == 1590);
  CHECK(g.allocated_peak_step == 59);
  CHECK(g.reserved_peak == 8192);
  CHECK(g.reserved_peak_step == 0);
  CHECK(category(g, gb::trace::MemCategory::parameter) == 1000);
  CHECK(category(g, gb::trace::MemCategory::activation) == 590);
  CHECK(category(g, gb::trace::MemCategory::gradient) == 500);
  CHECK(category(g, gb::trace::MemCategory::optimizer_state) == 0);

  CHECK_FALSE(s.detail.all());
  CHECK(s.detail.windows.size() == 4);
  CHECK(s.windows_by_reason[static_cast<std::size_t>(DetailReason::first)] == 1);
  CHECK(s.windows_by_reason[static_cast<std::size_t>(DetailReason::periodic)] == 2);
  CHECK(s.windows_by_reason[static_cast<std::size_t>(DetailReason::end)] == 1);
  CHECK(s.steps_with_detail == 5 + 2 + 2 + 3);
  CHECK(describe_windows(s.detail) ==
        std::vector<std::string>{"first: steps 0-4", "periodic: 2 windows of 2 steps every 20", "end: steps 57-59"});
  CHECK(s.events_outside_detail == 123456);
  CHECK(s.recorder_dumps == 1);
  CHECK(s.dropped_events == 0);
  CHECK(s.shed_by_kind.empty());
  CHECK(s.closed_cleanly);
  CHECK(s.stopped_by == "exit");
  CHECK_FALSE(s.disk_full);
}

TEST_CASE("tokens per second from the steps that say their tokens") {
  TempDir tmp;
  const std::string path = tmp.file("tokens.db");
  long_run::write(path, {.steps = 10, .windows = {{0, 4, DetailReason::first}}, .anomalies = {}, .with_tokens = true});
  sql(path, "UPDATE steps SET tokens = NULL, samples = NULL WHERE step >= 5");  // half the steps unknown
  const RunSummary s = run_summary(TraceDb(path));
  CHECK(s.tokens_steps == 5);
  CHECK(s.tokens == doctest::Approx(5 * 512));
  REQUIRE(s.tokens_per_s);
  CHECK(*s.tokens_per_s == doctest::Approx(5 * 512 / 0.05));  // over those 5 steps' 50 ms only
  REQUIRE(s.samples_per_s);
  CHECK(*s.samples_per_s == doctest::Approx(5 * 32 / 0.05));
}

TEST_CASE("shed events by kind, and a trace that stopped on a full disk") {
  TempDir tmp;
  const std::string path = tmp.file("shed.db");
  {
    long_run::Run r(path, {.steps = 42, .windows = {{0, 4, DetailReason::first}, {20, 21, DetailReason::periodic}}});
    for (std::int64_t s = 0; s < 42; ++s) r.step(s);
    r.writer().set_meta("dropped_events", "15");
    r.writer().set_meta("shed_events.span", "10");
    r.writer().set_meta("shed_events.memory_event", "5");
    r.writer().set_meta("shed_events.counter", "not a number");  // damaged: left out
    r.writer().set_meta("disk_full", "step 41: No space left on device");
    r.finish("disk full");
  }
  const RunSummary s = run_summary(TraceDb(path));
  CHECK(s.dropped_events == 15);
  REQUIRE(s.shed_by_kind.size() == 2);
  CHECK(s.shed_by_kind[0] == std::pair<std::string, std::int64_t>{"memory_event", 5});
  CHECK(s.shed_by_kind[1] == std::pair<std::string, std::int64_t>{"span", 10});
  CHECK(s.stopped_by == "disk full");
  CHECK(s.disk_full == "step 41: No space left on device");
  CHECK(s.steps == 42);
}

TEST_CASE("an old trace (no summary columns, no step_memory, no detail policy): unknown, not zero") {
  TempDir tmp;
  const std::string path = tmp.file("old.db");
  synthetic::write(path);
  // made a real version 4 file: steps without the new columns, no step_memory or detail_windows tables
  sql(path,
      "CREATE TABLE steps4 (step INTEGER PRIMARY KEY, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, loss REAL, "
      "lr REAL, grad_scale REAL, skipped INTEGER NOT NULL); INSERT INTO steps4 SELECT step, start_ns, end_ns, loss, "
      "lr, grad_scale, skipped FROM steps; DROP TABLE steps; ALTER TABLE steps4 RENAME TO steps; "
      "DROP TABLE step_memory; DROP TABLE detail_windows; PRAGMA user_version = 4;");
  const TraceDb db(path);
  REQUIRE(db.reader().schema_version() == 4);
  const RunSummary s = run_summary(db);
  CHECK(s.steps == 3);
  CHECK(s.step_time.mean == doctest::Approx(12e6));
  CHECK_FALSE(s.phases);
  CHECK_FALSE(s.samples_per_s);
  CHECK_FALSE(s.tokens_per_s);
  CHECK_FALSE(s.grad_norm);
  CHECK(s.memory.empty());
  REQUIRE(s.loss);
  CHECK(s.loss->first.value == doctest::Approx(2.5));
  CHECK(s.loss->min.value == doctest::Approx(1.5));
  CHECK(s.loss->min.step == 2);
  CHECK(s.loss->tail_steps == 1);
  CHECK(s.loss->tail_median == doctest::Approx(1.5));
  CHECK(s.detail.all());
  CHECK(s.steps_with_detail == 3);
  CHECK(describe_windows(s.detail).empty());
  CHECK_FALSE(s.events_outside_detail);
  CHECK_FALSE(s.recorder_dumps);
}

TEST_CASE("an empty trace summarises to nothing known") {
  TempDir tmp;
  const std::string path = tmp.file("empty.db");
  gb::trace::Writer(path).close();
  const RunSummary s = run_summary(TraceDb(path));
  CHECK(s.steps == 0);
  CHECK(s.step_time.count == 0);
  CHECK_FALSE(s.phases);
  CHECK_FALSE(s.loss);
  CHECK_FALSE(s.grad_norm);
  CHECK_FALSE(s.samples_per_s);
  CHECK(s.memory.empty());
}

TEST_CASE("windows described compactly: periodic by count, size and stride; recorder windows listed") {
  DetailWindows d;
  d.every_step = false;
  d.policy = "first=500,every=1000,window=5,recorder=20,recorder_mb=64";
  d.windows.push_back(window(0, 499, DetailReason::first));
  for (std::int64_t k = 1; k <= 59; ++k) d.windows.push_back(window(1000 * k, 1000 * k + 4, DetailReason::periodic));
  d.windows.push_back(window(41872, 41890, DetailReason::anomaly));
  d.windows.push_back(window(59984, 59999, DetailReason::end));
  CHECK(describe_windows(d) == std::vector<std::string>{"first: steps 0-499",
                                                        "periodic: 59 windows of 5 steps every 1000",
                                                        "anomaly: steps 41872-41890", "end: steps 59984-59999"});

  DetailWindows e;  // no policy to read the stride from, uneven windows, several of the recorder's
  e.every_step = false;
  e.windows = {window(10, 11, DetailReason::periodic), window(20, 22, DetailReason::periodic),
               window(35, 36, DetailReason::periodic), window(50, 50, DetailReason::anomaly),
               window(60, 62, DetailReason::anomaly),  window(70, 72, DetailReason::anomaly)};
  CHECK(describe_windows(e) == std::vector<std::string>{"periodic: 3 windows of 2-3 steps about every 15",
                                                        "anomaly: 3 windows, step 50, 60-62 and 70-72"});
  for (std::int64_t k = 0; k < 4; ++k) e.windows.push_back(window(100 + 10 * k, 101 + 10 * k, DetailReason::anomaly));
  CHECK(describe_windows(e)[1] == "anomaly: 7 windows, step 50, 60-62, 70-72 and 4 more");
}

TEST_CASE("the detail policy: full, or the five keys in any order; anything else does not parse") {
  const std::optional<DetailPolicy> p = parse_detail_policy("first=500,every=1000,window=5,recorder=20,recorder_mb=64");
  REQUIRE(p);
  CHECK_FALSE(p->full);
  CHECK(p->first == 500);
  CHECK(p->every == 1000);
  CHECK(p->window == 5);
  CHECK(p->recorder == 20);
  CHECK(p->recorder_mb == 64);
  CHECK(parse_detail_policy("full")->full);
  CHECK(parse_detail_policy("recorder_mb=1,recorder=2,window=3,every=4,first=5")->first == 5);
  // what the engine writes (instrument/detail.h DetailPolicy::text()): `after` too
  CHECK(parse_detail_policy("first=500,every=1000,window=5,recorder=16,recorder_mb=64,after=2")->after == 2);
  for (const char* bad : {"", "FULL", "first=500", "first=500,every=1000,window=5,recorder=20",
                          "first=500,every=1000,window=5,recorder=20,recorder_mb=64,",
                          "first=500,every=1000,window=5,recorder=20,recorder_mb=-1",
                          "first=500,every=1000,window=5,recorder=20,recorder_mb=6x",
                          "first=500,every=1000,window=5,recorder=20,recorder_mb=64,first=1",
                          "first=500,every=1000,window=5,recorder=20,recorder_mb=64,after=1,after=2",
                          "first=500,every=1000,window=5,recorder=20,recorder_gb=64", "first 500",
                          "first=99999999999999999999,every=1,window=1,recorder=1,recorder_mb=1"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_detail_policy(bad));
  }
}

TEST_CASE("damaged values: huge, negative and NULL numbers summarise without overflow or a crash") {
  TempDir tmp;
  const std::string path = tmp.file("damaged.db");
  long_run::write(path, {.steps = 10, .windows = {{0, 4, DetailReason::first}}, .anomalies = {}});
  sql(path,
      "UPDATE steps SET data_ns = 9223372036854775807, samples = 9223372036854775807, "
      "end_ns = -9223372036854775807 WHERE step = 3; UPDATE steps SET step = -7 WHERE step = 4; "
      "UPDATE step_memory SET device = 9223372036854775807, allocated_peak = -1 WHERE step = 2; "
      "INSERT INTO detail_windows VALUES (9, 8, 2, 0, 0, 99), (10, 30, 31, 0, 0, 99); "
      "INSERT OR REPLACE INTO meta VALUES ('recorder_dumps', 'many');");
  const RunSummary s = run_summary(TraceDb(path));
  CHECK(s.steps == 10);
  CHECK(s.first_step == -7);
  REQUIRE(s.phases);
  CHECK(s.phases->data_ns > 9e18);  // summed as a REAL: no integer overflow error
  CHECK(s.memory.size() == 3);      // the damaged device is a device of its own
  CHECK_FALSE(s.recorder_dumps);
  CHECK(describe_windows(s.detail).size() == 1);  // reason 99 is no reason; first > last holds no step
}

TEST_CASE("a 10^6-step run: every step summarised, the order statistics and peaks exact") {
  TempDir tmp;
  const std::string path = tmp.file("million.db");
  long_run::write(path, {.steps = 10, .windows = {{0, 4, DetailReason::first}}, .anomalies = {}});
  sql(path,
      "DELETE FROM steps; DELETE FROM step_memory; "
      "WITH RECURSIVE n(s) AS (SELECT 0 UNION ALL SELECT s + 1 FROM n WHERE s < 999999) "
      "INSERT INTO steps SELECT s, s * 10000000, s * 10000000 + 10000000 + (s % 7) * 1000, 4.0 / (1 + s), 0.1, NULL, "
      "0, 1000000, 3000000, 4000000, 2000000, 32, NULL, 1.0 + (s % 4) FROM n; "
      "WITH RECURSIVE n(s) AS (SELECT 0 UNION ALL SELECT s + 1 FROM n WHERE s < 999999) "
      "INSERT INTO step_memory SELECT s, 0, 1000 + s % 1000, 8192, 1000, 8192, 0, 1000, 500, s % 1000, 0, 0, 0, 0 "
      "FROM n;");
  const TraceDb db(path);
  const auto t0 = std::chrono::steady_clock::now();
  const RunSummary s = run_summary(db);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("run_summary of 10^6 steps and 10^6 step_memory rows: " << seconds << " s");
  CHECK(s.steps == 1'000'000);
  CHECK(s.grad_norm->median == doctest::Approx(2.5));
  CHECK(s.memory.at(0).allocated_peak == 1999);
  CHECK(s.memory.at(0).allocated_peak_step == 999);
  CHECK(s.loss->tail_steps == 100'000);
  // (its time is printed, not asserted: benchmarks measure speed, tests measure values; ~0.5 s on the 2-core VM)
}
