// tests/engine/memory/memory_test_util.h — what the memory tests share: byte units, a device's allocator totals, and
// a training step set for a test's duration.
#pragma once

#include <cstdint>

#include "glassbox/glassbox.h"

namespace gbtest {

inline constexpr int64_t KiB = int64_t(1) << 10;
inline constexpr int64_t MiB = int64_t(1) << 20;

// The bytes the device's caching allocator has handed out now (allocated), and holds from its raw allocator (reserved).
inline int64_t allocated(gb::Device d) {
  return gb::memory::memory_stats(d).allocated_bytes[gb::memory::kAll].current;
}
inline int64_t reserved(gb::Device d) {
  return gb::memory::memory_stats(d).reserved_bytes[gb::memory::kAll].current;
}

// The global training step while it lives (no session needed: a StepScope sets it the same way); none after.
struct AtStep {
  explicit AtStep(int64_t step) { gb::trace::set_step(step); }
  AtStep(const AtStep&) = delete;
  AtStep& operator=(const AtStep&) = delete;
  void operator=(int64_t step) const { gb::trace::set_step(step); }
  ~AtStep() { gb::trace::set_step(-1); }
};

}  // namespace gbtest
