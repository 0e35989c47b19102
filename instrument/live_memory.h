// instrument/live_memory.h — internal: what memory is live, per device, after the memory events applied so far;
// written as `resume` + `live` + `live_segment` rows where detail resumes after a gap (traces/SCHEMA.md), so a
// replay of a long run's windows is exact inside each.
//
// Events must be applied in time order (the collector releases them so: collector.h). A block is the row that
// allocated it (retags update its category); a segment is its segment_alloc row. The running totals are those of
// the last event applied.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>

#include "traces/records.h"

namespace gb::trace {
class Writer;
}

namespace gb::trace::detail {

class LiveMemory {
 public:
  void apply(const MemoryEventRecord& e);
  // One resume row per device at t_ns, then a live row per block and a live_segment row per segment, at t_ns with
  // the device's running totals; ids from next_id. Returns the rows written.
  std::size_t write_resume(Writer& w, std::int64_t t_ns, Id& next_id) const;
  std::size_t blocks() const;
  void clear() { devices_.clear(); }

 private:
  struct Device {
    std::unordered_map<std::int64_t, MemoryEventRecord> blocks, segments;  // by address
    std::int64_t allocated = 0, reserved = 0;
  };
  std::map<int, Device> devices_;
};

}  // namespace gb::trace::detail
