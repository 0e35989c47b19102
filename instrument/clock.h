// instrument/clock.h — the probes' clock: raw ticks on the hot path, nanoseconds in the collector.
//
// ticks() is the CPU's time-stamp counter on x86-64 (invariant TSC: constant rate, synchronized across cores,
// about 10 ns to read here against about 23 ns for clock_gettime) and steady_clock nanoseconds elsewhere.
// TickClock maps ticks to nanoseconds since a session's start with one rate measured when the session starts (5 ms
// against steady_clock). The map is linear and fixed for the session, so it keeps the order and nesting of every
// event exactly; its absolute error grows by about 10 us per second of run, far below what the spans resolve.
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace gb::trace {

inline std::int64_t ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return static_cast<std::int64_t>(__rdtsc());
#else
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
#endif
}

class TickClock {
 public:
  // Starts the trace clock now: ns(ticks()) is ~0. Spends ~5 ms measuring the tick rate.
  TickClock();
  std::int64_t start_ticks() const { return tick0_; }
  std::int64_t ns(std::int64_t t) const {
    return static_cast<std::int64_t>(static_cast<double>(t - tick0_) * ns_per_tick_);
  }
  std::int64_t duration_ns(std::int64_t t0, std::int64_t t1) const {
    return static_cast<std::int64_t>(static_cast<double>(t1 - t0) * ns_per_tick_);
  }
  double ns_per_tick() const { return ns_per_tick_; }

 private:
  std::int64_t tick0_;
  double ns_per_tick_ = 1.0;
};

}  // namespace gb::trace
