// tests/traces/query/dataloader_test.cpp — traces/query/dataloader.cpp: stage totals and the wait share of step time.
#include "traces/query/dataloader.h"

#include <doctest/doctest.h>
#include <sqlite3.h>

#include "tools/synthetic_trace.h"
#include "traces/temp_dir.h"

using namespace gb::query;

TEST_CASE("wait share = wait spans / total step time; stage totals by name") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  synthetic::write(path);  // steps of 10, 12, 14 ms; 1 ms wait, 2 us fetch, 0.5 us collate per step
  DataLoaderSummary d = dataloader_summary(TraceDb(path));
  CHECK(d.spans == 9);
  CHECK(d.wait_ns == 3'000'000);
  CHECK(d.fetch_ns == 6'000);
  CHECK(d.collate_ns == 1'500);
  CHECK(d.pin_ns == 0);
  CHECK(d.transfer_ns == 0);
  CHECK(d.other_ns == 0);
  CHECK(d.step_total_ns == doctest::Approx(36e6));
  CHECK(d.wait_share() == doctest::Approx(3.0 / 36.0));
}

TEST_CASE("waits outside any step (the first batch, an evaluation loader) are not in the wait share") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  synthetic::write(path);  // 1 ms wait inside each of the 3 steps
  {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    // two more waits with no step: 5 ms before step one, 7 ms for an evaluation loader after the last
    const char* sql =
        "INSERT INTO spans (id, kind, name_id, start_ns, dur_ns, step) SELECT (1 << 32) + 900, 5, name_id, 0, "
        "5000000, NULL FROM spans WHERE kind = 5 AND name_id = (SELECT id FROM strings WHERE text = 'wait') LIMIT 1;"
        "INSERT INTO spans (id, kind, name_id, start_ns, dur_ns, step) SELECT (1 << 32) + 901, 5, name_id, 90000000, "
        "7000000, NULL FROM spans WHERE kind = 5 AND name_id = (SELECT id FROM strings WHERE text = 'wait') LIMIT 1;";
    REQUIRE(sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  }
  DataLoaderSummary d = dataloader_summary(TraceDb(path));
  CHECK(d.spans == 11);
  CHECK(d.wait_ns == 3'000'000);
  CHECK(d.wait_outside_ns == 12'000'000);
  CHECK(d.wait_share() == doctest::Approx(3.0 / 36.0));  // (3 + 12) / 36 would call the loop data-bound
  CHECK(data_bound_verdict(d).rfind("not data-bound", 0) == 0);
}

TEST_CASE("without a steps table the step spans give the step time; without dataloader spans, nothing") {
  TempDir tmp;
  std::string spans_only = tmp.file("a.db"), none = tmp.file("b.db");
  synthetic::write(spans_only, {.step_ns = {4'000'000, 6'000'000}, .with_steps_table = false});
  DataLoaderSummary d = dataloader_summary(TraceDb(spans_only));
  CHECK(d.wait_ns == 2'000'000);
  CHECK(d.wait_share() == doctest::Approx(0.2));
  { gb::trace::Writer w(none); }
  DataLoaderSummary e = dataloader_summary(TraceDb(none));
  CHECK(e.spans == 0);
  CHECK(e.wait_share() == 0);
}

TEST_CASE("the verdict: data-bound above a 10% wait share, in words, with the share") {
  DataLoaderSummary d;
  d.spans = 3;
  d.step_total_ns = 100e6;
  d.wait_ns = 43'000'000;
  CHECK(data_bound_verdict(d).rfind("data-bound: the training loop waited 43% of its step time for batches; more "
                                    "num_workers or a cheaper transform would help",
                                    0) == 0);
  d.wait_ns = 10'000'000;
  CHECK(data_bound_verdict(d) == "not data-bound: the training loop waited 10% of its step time for batches");
  d.wait_ns = 10'500'000;
  CHECK(data_bound_verdict(d).rfind("data-bound: the training loop waited 11%", 0) == 0);
}
