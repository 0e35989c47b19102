// tests/instrument/detail_policy_test.cpp — instrument/detail_policy.cpp (instrument/detail.h): which steps a policy
// keeps, GLASSBOX_DETAIL's forms and its errors.
#include <doctest/doctest.h>

#include "instrument/detail.h"
#include "traces/error.h"

using gb::trace::DetailPolicy;

TEST_CASE("the defaults: the first 500 steps, then 5 steps every 1000") {
  DetailPolicy p;
  CHECK(p.due(0));
  CHECK(p.due(499));
  CHECK_FALSE(p.due(500));
  CHECK_FALSE(p.due(999));
  CHECK(p.due(1000));
  CHECK(p.due(1004));
  CHECK_FALSE(p.due(1005));
  CHECK(p.due(59000));
  CHECK(p.window_first(1003) == 1000);
  CHECK(p.window_last(1003) == 1004);
  CHECK(p.window_first(42) == 0);
  CHECK(p.window_last(42) == 499);
  CHECK(p.text() == "first=500,every=1000,window=5,recorder=16,recorder_mb=64,after=2");
  CHECK(DetailPolicy::parse(p.text()).text() == p.text());  // meta `detail` reads back as the same policy
}

TEST_CASE("full, summary and keys") {
  DetailPolicy full = DetailPolicy::parse("full");
  CHECK(full.is_full());
  CHECK(full.due(123456789));
  CHECK(full.text() == "full");
  DetailPolicy summary = DetailPolicy::parse("summary");
  CHECK_FALSE(summary.due(0));
  CHECK_FALSE(summary.due(1000));
  CHECK(summary.recorder == 16);  // the recorder stays on
  DetailPolicy p = DetailPolicy::parse(" first=3, every=10,window=2 ,recorder=4,recorder_mb=1,after=0");
  CHECK(p.first == 3);
  CHECK(p.recorder_mb == 1);
  CHECK(p.after == 0);
  for (std::int64_t s : {0, 1, 2, 10, 11, 20, 21}) CHECK(p.due(s));
  for (std::int64_t s : {3, 9, 12, 19, 22}) CHECK_FALSE(p.due(s));
  CHECK(DetailPolicy::parse("every=0").due(600) == false);  // no windows after the first steps
  CHECK(DetailPolicy::parse("summary,first=2").due(1));     // later keys win
}

TEST_CASE("bad GLASSBOX_DETAIL values name the key and the accepted forms") {
  CHECK_THROWS_WITH_AS(DetailPolicy::parse("firts=3"), doctest::Contains("unknown key 'firts'"), gb::trace::Error);
  CHECK_THROWS_WITH_AS(DetailPolicy::parse("first=-1"), doctest::Contains("first=-1 is not a whole number"),
                       gb::trace::Error);
  CHECK_THROWS_WITH_AS(DetailPolicy::parse("window=3x"), doctest::Contains("use full, summary, or keys"),
                       gb::trace::Error);
  CHECK_THROWS_WITH_AS(DetailPolicy::parse("lots"), doctest::Contains("'lots' is not a key=value"), gb::trace::Error);
  CHECK_THROWS_WITH_AS(DetailPolicy::parse("every=10,window=20"), doctest::Contains("window=20 is longer than every=10"),
                       gb::trace::Error);
}
