// instrument/clock.cpp — the tick rate, measured once per session against steady_clock.
#include "instrument/clock.h"

namespace gb::trace {

namespace {
// A (ticks, steady_clock) pair read close together: of a few tries, the one whose two tick reads around the clock
// read are nearest, so a preemption in between does not skew the rate.
std::pair<double, std::chrono::steady_clock::time_point> paired_read() {
  std::int64_t best_gap = -1;
  std::pair<double, std::chrono::steady_clock::time_point> best;
  for (int i = 0; i < 16; ++i) {
    std::int64_t a = ticks();
    auto w = std::chrono::steady_clock::now();
    std::int64_t b = ticks();
    if (best_gap < 0 || b - a < best_gap) {
      best_gap = b - a;
      best = {0.5 * static_cast<double>(a) + 0.5 * static_cast<double>(b), w};
    }
  }
  return best;
}
}  // namespace

TickClock::TickClock() {
  tick0_ = ticks();
#if defined(__x86_64__) || defined(__i386__)
  auto [t0, w0] = paired_read();
  while (std::chrono::steady_clock::now() < w0 + std::chrono::milliseconds(5)) {
  }
  auto [t1, w1] = paired_read();
  double ns = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(w1 - w0).count());
  ns_per_tick_ = t1 > t0 ? ns / (t1 - t0) : 1.0;
#endif
}

}  // namespace gb::trace
