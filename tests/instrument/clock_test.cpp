// tests/instrument/clock_test.cpp — instrument/clock.{h,cpp}: ticks become nanoseconds at the measured rate.
#include "instrument/clock.h"

#include <doctest/doctest.h>

#include <cmath>
#include <thread>

using namespace gb::trace;

TEST_CASE("ticks are monotonic and TickClock maps a 50 ms sleep to about 50 ms") {
  TickClock clock;
  CHECK(clock.ns_per_tick() > 0.0);
  CHECK(clock.ns_per_tick() < 10.0);  // a counter slower than 100 MHz would be no use for spans
  // Of three tries, the one where the tick and clock reads were least disturbed (the machine may be busy).
  double best_err = 1e9;
  std::int64_t a = 0, b = 0, ns = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    a = ticks();
    auto w0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    b = ticks();
    auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - w0).count();
    ns = clock.duration_ns(a, b);
    best_err = std::min(best_err, std::abs(static_cast<double>(ns - wall)) / static_cast<double>(wall));
  }
  CHECK(b > a);
  CHECK(best_err < 0.01);
  CHECK(clock.ns(clock.start_ticks()) == 0);
  CHECK(std::abs(clock.ns(b) - clock.ns(a) - ns) <= 1);  // each side truncates to whole ns
}
