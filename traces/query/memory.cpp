// traces/query/memory.cpp — one scan of memory_events: device peaks from the running totals, category peaks from
// the replay (memory_replay.h).
#include "traces/query/memory.h"

#include "traces/query/memory_replay.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace gb::query {

using gb::trace::MemCategory;

std::string device_name(int device) {
  if (device == gb::trace::kCpu) return "cpu";
  if (device == kMetaDevice) return "meta";
  return "cuda:" + std::to_string(device);
}

MemoryPeaks memory_peaks(const TraceDb& db) {
  MemoryPeaks m;
  std::map<int, DeviceMemory> devices;
  std::map<int, MemoryReplay<>> replays;  // per device: the category peaks
  // Time order per device (the index memory_events_device_t): ids are the collector's write order, which
  // interleaves the threads' events (a worker's allocation can be written after a later free on the main thread).
  db.each("SELECT action, device, addr, size, category, allocated, reserved FROM memory_events "
          "ORDER BY device, t_ns, id",
          [&](const Row& r) {
            ++m.events;
            const int device = static_cast<int>(r.i64(1));
            const std::int64_t allocated = r.i64(5), reserved = r.i64(6);
            DeviceMemory& d = devices[device];
            d.device = device;
            if (allocated > d.peak_allocated) {
              d.peak_allocated = allocated;
              d.cached_at_peak = reserved - allocated;
            }
            d.peak_reserved = std::max(d.peak_reserved, reserved);
            replays[device].apply(mem_action(r.i64(0)), r.i64(2), r.i64(3), mem_category(r.i64(4)));
          });
  std::optional<std::int64_t> context = db.meta_int("context_bytes");
  for (auto& [device, d] : devices) {
    if (device >= 0) d.context = context;
    if (auto own = db.meta_int("context_bytes." + device_name(device)); own && (device >= 0 || *own > 0))
      d.context = own;  // the per-device row the engine writes (cpu and meta: only when one was configured)
    m.devices.push_back(d);
  }
  for (const auto& [device, replay] : replays)
    for (int c = 0; c < gb::trace::kMemCategories; ++c)
      if (const std::int64_t peak = replay.peaks()[static_cast<std::size_t>(c)]; peak > 0)
        m.categories.push_back({device, static_cast<MemCategory>(c), peak});
  return m;
}

}  // namespace gb::query
