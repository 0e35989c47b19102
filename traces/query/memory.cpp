// traces/query/memory.cpp — one scan of memory_events: device peaks from the running totals, category peaks by replay.
#include "traces/query/memory.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace gb::query {

using gb::trace::MemAction;
using gb::trace::MemCategory;

std::string device_name(int device) {
  if (device == gb::trace::kCpu) return "cpu";
  if (device == kMetaDevice) return "meta";
  return "cuda:" + std::to_string(device);
}

MemoryPeaks memory_peaks(const TraceDb& db) {
  MemoryPeaks m;
  std::map<int, DeviceMemory> devices;
  struct Block {
    MemCategory category;
    std::int64_t size;
  };
  std::map<std::pair<int, std::int64_t>, Block> live;                                // (device, addr) -> the live block
  std::map<std::pair<int, int>, std::pair<std::int64_t, std::int64_t>> by_category;  // -> (current, peak)
  auto add = [&](int device, MemCategory c, std::int64_t delta) {
    auto& [cur, peak] = by_category[{device, static_cast<int>(c)}];
    cur += delta;
    peak = std::max(peak, cur);
  };
  db.each("SELECT action, device, addr, size, category, allocated, reserved FROM memory_events ORDER BY id",
          [&](const Row& r) {
            ++m.events;
            const auto action = static_cast<MemAction>(r.i64(0));
            const int device = static_cast<int>(r.i64(1));
            const std::int64_t addr = r.i64(2), size = r.i64(3), allocated = r.i64(5), reserved = r.i64(6);
            auto [at, fresh_device] = devices.try_emplace(device);
            DeviceMemory& d = at->second;
            d.device = device;
            if (allocated > d.peak_allocated) {
              d.peak_allocated = allocated;
              d.cached_at_peak = reserved - allocated;
            }
            d.peak_reserved = std::max(d.peak_reserved, reserved);
            if (action == MemAction::alloc) {
              auto [it, fresh] = live.try_emplace({device, addr}, Block{static_cast<MemCategory>(r.i64(4)), size});
              if (!fresh) {  // an alloc over a live block: the old one is gone (check reports nothing; be robust)
                add(device, it->second.category, -it->second.size);
                it->second = Block{static_cast<MemCategory>(r.i64(4)), size};
              }
              add(device, it->second.category, size);
            } else if (action == MemAction::retag) {  // the block's bytes move to its new category
              if (auto it = live.find({device, addr}); it != live.end()) {
                add(device, it->second.category, -it->second.size);
                it->second.category = static_cast<MemCategory>(r.i64(4));
                add(device, it->second.category, it->second.size);
              }
            } else if (action == MemAction::free) {
              if (auto it = live.find({device, addr}); it != live.end()) {
                add(device, it->second.category, -it->second.size);
                live.erase(it);
              }
            }
          });
  std::optional<std::int64_t> context = db.meta_int("context_bytes");
  for (auto& [device, d] : devices) {
    if (device >= 0) d.context = context;
    if (auto own = db.meta_int("context_bytes." + device_name(device)); own && (device >= 0 || *own > 0))
      d.context = own;  // the per-device row the engine writes (cpu and meta: only when one was configured)
    m.devices.push_back(d);
  }
  for (const auto& [key, v] : by_category)
    if (v.second > 0) m.categories.push_back({key.first, static_cast<MemCategory>(key.second), v.second});
  return m;
}

}  // namespace gb::query
