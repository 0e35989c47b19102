// tests/traces/query/ranks_test.cpp — traces/query/ranks.cpp on merged traces with known true times
// (tests/tools/rank_traces.h): each rank's waits, blocked time and overlap to the nanosecond, the planted straggler
// named, and none named on the healthy job or on traces that are not merged.
#include "traces/query/ranks.h"

#include <doctest/doctest.h>

#include "tools/merge.h"
#include "tools/rank_traces.h"
#include "tools/synthetic_trace.h"
#include "traces/temp_dir.h"

using namespace gb::query;
using rank_traces::ms;

namespace {

RankComparison compare(const rank_traces::Job& job) {
  TempDir dir;
  rank_traces::write_rank(dir.file("r0.db"), 0, job);
  rank_traces::write_rank(dir.file("r1.db"), 1, job);
  gb::tools::merge_traces({dir.file("r0.db"), dir.file("r1.db")}, dir.file("m.db"));
  TraceDb db(dir.file("m.db"));
  return compare_ranks(db);
}

}  // namespace

TEST_CASE("compare_ranks: the rank that slept is the straggler; the other waited for it") {
  const RankComparison c = compare({});
  REQUIRE(c.ranks.size() == 2);
  CHECK(c.matched == 4);  // the four step all-reduces; the handshakes and the barrier are outside steps
  REQUIRE(c.straggler);
  CHECK(*c.straggler == 1);
  CHECK(c.straggler_median_ns == doctest::Approx(double(ms(3))).epsilon(1e-6));  // 3 ms at each of the 4
  CHECK(c.straggler_share == doctest::Approx(3.0 / 12.0).epsilon(1e-6));         // of a 12 ms step

  const RankRow &r0 = c.ranks[0], &r1 = c.ranks[1];
  CHECK(r0.steps.count == 4);
  CHECK(r0.steps.median == doctest::Approx(double(ms(12))).epsilon(1e-6));
  CHECK(r1.steps.median == doctest::Approx(double(ms(12))).epsilon(1e-6));
  CHECK(r0.collectives == 4);
  CHECK(r0.collective_ns == doctest::Approx(double(4 * ms(4))).epsilon(1e-6));
  CHECK(r1.collective_ns == doctest::Approx(double(4 * ms(1))).epsilon(1e-6));
  CHECK(r0.waited_ns == doctest::Approx(double(4 * ms(3))).epsilon(1e-6));
  CHECK(r1.waited_ns == doctest::Approx(0.0));
  CHECK(r1.last_arrivals == 4);
  CHECK(r1.caused_ns == doctest::Approx(double(4 * ms(3))).epsilon(1e-6));
  CHECK(r0.blocked_ns == doctest::Approx(double(4 * ms(2))).epsilon(1e-6));  // "wait all_reduce" on main
  CHECK(r1.blocked_ns == 0);
  CHECK(r0.overlap_ns == doctest::Approx(double(4 * ms(2))).epsilon(1e-6));  // half of each all-reduce in backward
  CHECK(r1.overlap_ns == doctest::Approx(r1.allreduce_ns).epsilon(1e-6));    // all of it
  CHECK(r0.host == "node0");
  CHECK(r1.aligned_by.starts_with("clock_sync start and end"));
  CHECK(c.barriers == 1);
  REQUIRE(c.barrier_spread_ns);
  CHECK(*c.barrier_spread_ns <= 2);
  REQUIRE(c.clock_error_ns);  // the handshakes' bounds met: the merge promised an exact alignment
  CHECK(*c.clock_error_ns <= 1);
  REQUIRE(c.barrier_gap_ns);
  CHECK(*c.barrier_gap_ns == doctest::Approx(-double(ms(9))).epsilon(1e-6));  // both spans hold [101, 110] ms
}

TEST_CASE("compare_ranks: a healthy job, or a straggler that costs little, names no straggler") {
  rank_traces::Job healthy;
  healthy.straggler = -1;
  RankComparison c = compare(healthy);
  CHECK(c.matched == 4);
  CHECK_FALSE(c.straggler);
  CHECK(c.ranks[0].waited_ns == doctest::Approx(0.0));
  CHECK(c.ranks[0].overlap_ns == doctest::Approx(c.ranks[0].allreduce_ns));

  rank_traces::Job slight;
  slight.sleep_ns = 100'000;  // 0.1 ms of a 12 ms step: last every time, but under the 10% that is worth a word
  c = compare(slight);
  CHECK(c.ranks[1].last_arrivals == 4);
  CHECK_FALSE(c.straggler);

  rank_traces::Job tiny;  // the whole job 20x faster: 0.15 ms late at every 0.6 ms step (25%), under the 0.25 ms floor
  tiny.time_scale = 0.05;
  c = compare(tiny);
  CHECK(c.ranks[1].last_arrivals == 4);
  CHECK(c.ranks[1].caused_ns == doctest::Approx(4 * 150'000.0).epsilon(1e-3));
  CHECK_FALSE(c.straggler);

  rank_traces::Job hiccup;  // one long wait in four (a preempted rank), not a straggler: the median wait is 0
  hiccup.straggler = -1;
  hiccup.hiccup_step = 2;
  c = compare(hiccup);
  CHECK(c.ranks[1].caused_ns == doctest::Approx(double(ms(6))).epsilon(1e-6));
  CHECK_FALSE(c.straggler);
}

TEST_CASE("compare_ranks: a trace that is not merged has no ranks") {
  TempDir dir;
  synthetic::write(dir.file("one.db"));
  TraceDb one(dir.file("one.db"));
  CHECK(compare_ranks(one).ranks.empty());
  rank_traces::write_rank(dir.file("r0.db"), 0);
  TraceDb rank0(dir.file("r0.db"));
  CHECK(compare_ranks(rank0).ranks.empty());
}
