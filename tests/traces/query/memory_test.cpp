// tests/traces/query/memory_test.cpp — traces/query/memory.cpp: device peaks from the running totals, category peaks by replay.
#include "traces/query/memory.h"

#include <doctest/doctest.h>

#include "tools/synthetic_trace.h"
#include "traces/temp_dir.h"

using namespace gb::query;
using gb::trace::MemCategory;

namespace {
std::int64_t peak(const MemoryPeaks& m, int device, MemCategory c) {
  for (const CategoryPeak& p : m.categories)
    if (p.device == device && p.category == c) return p.peak;
  return -1;
}
}  // namespace

TEST_CASE("peaks of the synthetic trace: per device, and per category by replaying allocs and frees") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  synthetic::write(path);
  MemoryPeaks m = memory_peaks(TraceDb(path));
  CHECK(m.events == 9);
  REQUIRE(m.devices.size() == 2);
  CHECK(m.devices[0].device == -1);
  CHECK(m.devices[0].peak_allocated == 256);
  CHECK_FALSE(m.devices[0].context.has_value());  // the CUDA context is not a CPU layer
  CHECK(m.devices[1].device == 0);
  CHECK(m.devices[1].peak_allocated == 8000);
  CHECK(m.devices[1].peak_reserved == 2 << 20);
  CHECK(m.devices[1].cached_at_peak == (2 << 20) - 8000);
  CHECK(m.devices[1].context == 300LL << 20);

  CHECK(peak(m, 0, MemCategory::parameter) == 1000);
  CHECK(peak(m, 0, MemCategory::activation) == 7000);  // 4000 + 3000 live together; later 6000 alone
  CHECK(peak(m, 0, MemCategory::gradient) == 500);
  CHECK(peak(m, -1, MemCategory::input) == 256);  // same addr as a device-0 block: devices stay apart
  CHECK(peak(m, 0, MemCategory::unknown) == -1);  // segment events are not allocations
  CHECK(m.categories.size() == 4);
}

TEST_CASE("a free subtracts the live block's own category and size, whatever the free row says") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  {
    using namespace gb::trace;
    Writer w(path);
    auto ev = [&](Id id, MemAction a, std::int64_t addr, std::int64_t size, MemCategory c, std::int64_t alloc) {
      w.add(MemoryEventRecord{id, id, a, 0, addr, size, size, {}, 0, c, {}, {}, alloc, 4096});
    };
    ev(1, MemAction::alloc, 0x10, 100, MemCategory::activation, 100);
    ev(2, MemAction::free, 0x10, 1, MemCategory::unknown, 0);  // category and size from the alloc
    ev(3, MemAction::alloc, 0x10, 50, MemCategory::activation, 50);
    ev(4, MemAction::free, 0x99, 70, MemCategory::activation, 50);    // no live block: skipped
    ev(5, MemAction::alloc, 0x20, 80, MemCategory::activation, 130);  // 50 + 80 live: a new peak of 130
  }
  MemoryPeaks m = memory_peaks(TraceDb(path));
  CHECK(peak(m, 0, MemCategory::activation) == 130);
  CHECK(peak(m, 0, MemCategory::unknown) == -1);
  CHECK(m.devices[0].peak_allocated == 130);
  CHECK(m.devices[0].context == std::nullopt);  // no meta context_bytes
}

TEST_CASE("categories replay in time order: a thread's rows written after another's later ones") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  {
    using namespace gb::trace;
    Writer w(path);
    auto ev = [&](Id id, std::int64_t t, MemAction a, std::int64_t addr, std::int64_t size, std::int64_t alloc) {
      w.add(MemoryEventRecord{id, t, a, 0, addr, size, size, {}, 0, MemCategory::input, {}, {}, alloc, 4096});
    };
    ev(1, 10, MemAction::alloc, 0x10, 100, 100);  // main
    ev(2, 50, MemAction::alloc, 0x20, 300, 300);  // main, after the worker freed its block
    ev(3, 20, MemAction::alloc, 0x30, 200, 300);  // worker: written later, happened earlier
    ev(4, 30, MemAction::free, 0x30, 200, 100);
    ev(5, 40, MemAction::free, 0x10, 100, 0);
  }
  MemoryPeaks m = memory_peaks(TraceDb(path));
  // time order: 100, 300, 100, 0, 300 -> the category's peak is 300; id order would count 0x30 live with 0x20: 500
  CHECK(peak(m, 0, MemCategory::input) == 300);
  CHECK(m.devices[0].peak_allocated == 300);
}

TEST_CASE("no memory events: no devices, no categories") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  { gb::trace::Writer w(path); }
  MemoryPeaks m = memory_peaks(TraceDb(path));
  CHECK(m.events == 0);
  CHECK(m.devices.empty());
  CHECK(m.categories.empty());
  CHECK(device_name(-1) == "cpu");
  CHECK(device_name(3) == "cuda:3");
}
