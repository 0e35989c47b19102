// tests/instrument/flight_recorder_test.cpp — instrument/flight_recorder.{h,cpp}: the last steps kept, the oldest
// rows evicted by step and by bytes, complete steps told apart from partial ones.
#include "instrument/flight_recorder.h"

#include <doctest/doctest.h>

#include <vector>

using namespace gb::trace;
using gb::trace::detail::FlightRecorder;
using gb::trace::detail::RecordedRow;

namespace {
RecordedRow span_row(std::int64_t step, Id id) {
  RecordedRow r;
  r.type = RecordedRow::Type::span;
  r.step = step;
  r.span.id = id;
  r.span.step = step;
  return r;
}
const auto none = [](const RecordedRow&) {};  // evicted rows, when a case does not look at them

std::vector<Id> ids(FlightRecorder& f) {
  std::vector<Id> out;
  f.rows().for_each([&](const RecordedRow& r) { out.push_back(r.span.id); });
  return out;
}
}  // namespace

TEST_CASE("the last N steps are kept, in order; older steps are evicted as newer ones arrive") {
  FlightRecorder f;
  f.configure(3, 1 << 20);
  std::vector<Id> evicted;
  auto on_evict = [&](const RecordedRow& r) { evicted.push_back(r.span.id); };
  for (std::int64_t step = 0; step < 6; ++step)
    for (Id k = 0; k < 2; ++k) f.push_row(span_row(step, step * 10 + k), on_evict);
  CHECK(ids(f) == std::vector<Id>{30, 31, 40, 41, 50, 51});
  CHECK(evicted == std::vector<Id>{0, 1, 10, 11, 20, 21});
  CHECK(f.first_complete_step() == 3);
  CHECK(f.newest_step() == 5);
  f.rows().clear();
  CHECK(f.rows().size() == 0);
}

TEST_CASE("a ring full before its steps are: the oldest rows go, and their step no longer counts as complete") {
  FlightRecorder f;
  f.configure(100, 2 * 64 * sizeof(RecordedRow));  // 64 rows per ring
  REQUIRE(f.rows().capacity() == 64);
  for (std::int64_t step = 0; step < 10; ++step)
    for (Id k = 0; k < 10; ++k) f.push_row(span_row(step, step * 100 + k), none);
  CHECK(f.rows().size() == 64);
  CHECK(ids(f).front() == 306);  // 100 rows pushed, 36 evicted: step 3 is partial
  CHECK(f.first_complete_step() == 4);
}

TEST_CASE("rows outside any step (a late row of an older step) are kept until their step is evicted; off keeps nothing") {
  FlightRecorder f;
  f.configure(2, 1 << 20);
  f.push_row(span_row(5, 1), none);
  f.push_row(span_row(4, 2), none);  // late: another thread's row of step 4
  f.push_row(span_row(6, 3), none);  // steps 5..6 kept: the step-4 row is behind the step-5 row, kept for now
  CHECK(ids(f) == std::vector<Id>{1, 2, 3});
  f.push_row(span_row(7, 4), none);  // steps 6..7: 5 and 4 go
  CHECK(ids(f) == std::vector<Id>{3, 4});

  FlightRecorder off;
  off.configure(0, 1 << 20);
  int gone = 0;
  off.push_row(span_row(1, 1), [&](const RecordedRow&) { ++gone; });
  CHECK_FALSE(off.on());
  CHECK(gone == 1);
}
