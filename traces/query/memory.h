// traces/query/memory.h — memory peaks of a run, per device and per allocation category, from memory_events.
//
// Per device: the peak of `allocated` and of `reserved` (the running totals the allocator wrote), the part of
// reserved that was not allocated at the allocated peak (the cache), and the device context (meta
// context_bytes.<device> when the engine wrote it; else context_bytes, shown for every cuda device). The three
// layers a user sees are context · reserved but unallocated · allocated.
// Per (device, category): the peak of the bytes the category holds, replaying the device's events in id order
// (memory_replay.h: the one replay, which the viewer and `glassbox check` use too).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "traces/query/trace_db.h"
#include "traces/records.h"

namespace gb::query {

struct DeviceMemory {
  int device = gb::trace::kCpu;
  std::int64_t peak_allocated = 0;
  std::int64_t peak_reserved = 0;
  std::int64_t cached_at_peak = 0;      // reserved - allocated at the first event reaching peak_allocated
  std::optional<std::int64_t> context;  // meta context_bytes, cuda devices only
};

struct CategoryPeak {
  int device = gb::trace::kCpu;
  gb::trace::MemCategory category = gb::trace::MemCategory::unknown;
  std::int64_t peak = 0;
};

struct MemoryPeaks {
  std::int64_t events = 0;
  std::vector<DeviceMemory> devices;     // by device
  std::vector<CategoryPeak> categories;  // by device, then category; categories never allocated are left out
};

MemoryPeaks memory_peaks(const TraceDb& db);

constexpr int kMetaDevice = gb::trace::kMeta;  // memory_events.device of the meta device (traces/SCHEMA.md)
std::string device_name(int device);  // "cpu", "meta", "cuda:0"

}  // namespace gb::query
