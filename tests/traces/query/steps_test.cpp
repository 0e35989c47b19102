// tests/traces/query/steps_test.cpp — traces/query/steps.cpp: order statistics and where step durations come from.
#include "traces/query/steps.h"

#include <doctest/doctest.h>

#include <cmath>

#include "tools/synthetic_trace.h"
#include "traces/temp_dir.h"

using namespace gb::query;

TEST_CASE("summary of known durations: mean, median, p90 (linear between ranks), min, max, population std") {
  Summary s = summarize({14, 10, 12});
  CHECK(s.count == 3);
  CHECK(s.mean == doctest::Approx(12));
  CHECK(s.median == doctest::Approx(12));
  CHECK(s.p90 == doctest::Approx(13.6));  // rank 0.9 * 2 = 1.8: 12 + 0.8 * (14 - 12)
  CHECK(s.min == 10);
  CHECK(s.max == 14);
  CHECK(s.std == doctest::Approx(std::sqrt(8.0 / 3.0)));
  CHECK(s.total == doctest::Approx(36));

  Summary even = summarize({1, 2, 3, 10});
  CHECK(even.median == doctest::Approx(2.5));
  CHECK(even.p90 == doctest::Approx(7.9));  // rank 2.7: 3 + 0.7 * 7

  Summary none = summarize({});
  CHECK(none.count == 0);
  CHECK(none.mean == 0);
}

TEST_CASE("step durations come from the steps table, else from step spans, else nothing") {
  TempDir tmp;
  std::string with_table = tmp.file("a.db"), spans_only = tmp.file("b.db"), empty = tmp.file("c.db");
  synthetic::write(with_table, {.step_ns = {10'000'000, 12'000'000, 14'000'000}});
  synthetic::write(spans_only, {.step_ns = {7'000, 9'000}, .with_steps_table = false});
  { gb::trace::Writer w(empty); }

  StepTimes a = step_durations(TraceDb(with_table));
  CHECK(a.source == "steps table");
  CHECK(a.durations_ns == std::vector<double>{10e6, 12e6, 14e6});
  Summary s = summarize(a.durations_ns);
  CHECK(s.mean == doctest::Approx(12e6));
  CHECK(s.p90 == doctest::Approx(13.6e6));

  StepTimes b = step_durations(TraceDb(spans_only));
  CHECK(b.source == "step spans");
  CHECK(b.durations_ns == std::vector<double>{7'000, 9'000});

  StepTimes c = step_durations(TraceDb(empty));
  CHECK(c.source.empty());
  CHECK(c.durations_ns.empty());
}
