// tests/instrument/clock_test.cpp — instrument/clock.{h,cpp}: ticks become nanoseconds at the measured rate.
#include "instrument/clock.h"

#include <doctest/doctest.h>

#include <thread>

using namespace gb::trace;

TEST_CASE("ticks are monotonic and TickClock maps a 50 ms sleep to about 50 ms") {
  TickClock clock;
  CHECK(clock.ns_per_tick() > 0.0);
  CHECK(clock.ns_per_tick() < 10.0);  // a counter slower than 100 MHz would be no use for spans
  std::int64_t a = ticks();
  auto w0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::int64_t b = ticks();
  auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - w0).count();
  CHECK(b > a);
  std::int64_t ns = clock.duration_ns(a, b);
  CHECK(ns == doctest::Approx(static_cast<double>(wall)).epsilon(0.01));
  CHECK(clock.ns(clock.start_ticks()) == 0);
  CHECK(clock.ns(b) - clock.ns(a) == doctest::Approx(static_cast<double>(ns)).epsilon(1e-9));
}
