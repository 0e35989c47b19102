// instrument/clock.cpp — the tick rate, measured once per session against steady_clock.
#include "instrument/clock.h"

namespace gb::trace {

TickClock::TickClock() {
#if defined(__x86_64__) || defined(__i386__)
  auto w0 = std::chrono::steady_clock::now();
  tick0_ = ticks();
  auto until = w0 + std::chrono::milliseconds(5);
  std::chrono::steady_clock::time_point w1;
  while ((w1 = std::chrono::steady_clock::now()) < until) {
  }
  std::int64_t t1 = ticks();
  double ns = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(w1 - w0).count());
  ns_per_tick_ = t1 > tick0_ ? ns / static_cast<double>(t1 - tick0_) : 1.0;
#else
  tick0_ = ticks();
#endif
}

}  // namespace gb::trace
