// instrument/live_memory.cpp — the live blocks and segments per device, and their rows at a resume.
#include "instrument/live_memory.h"

#include "traces/writer.h"

namespace gb::trace::detail {

void LiveMemory::apply(const MemoryEventRecord& e) {
  Device& d = devices_[e.device];
  d.allocated = e.allocated;
  d.reserved = e.reserved;
  switch (e.action) {
    case MemAction::alloc:
    case MemAction::live:
      d.blocks[e.addr] = e;
      break;
    case MemAction::free:
      d.blocks.erase(e.addr);
      break;
    case MemAction::retag:
      if (auto it = d.blocks.find(e.addr); it != d.blocks.end()) it->second.category = e.category;
      break;
    case MemAction::segment_alloc:
    case MemAction::live_segment:
      d.segments[e.addr] = e;
      break;
    case MemAction::segment_free:
      d.segments.erase(e.addr);
      break;
    case MemAction::resume:
      d.blocks.clear();
      d.segments.clear();
      break;
    default:
      break;
  }
}

std::size_t LiveMemory::write_resume(Writer& w, std::int64_t t_ns, Id& next_id) const {
  std::size_t n = 0;
  for (const auto& entry : devices_) {  // (no structured binding: the lambda below captures d, Clang 14)
    const int device = entry.first;
    const Device& d = entry.second;
    MemoryEventRecord r;
    r.id = next_id++;
    r.t_ns = t_ns;
    r.action = MemAction::resume;
    r.device = device;
    r.allocated = d.allocated;
    r.reserved = d.reserved;
    w.add(r);
    ++n;
    auto put = [&](MemoryEventRecord row, MemAction action) {
      row.id = next_id++;
      row.t_ns = t_ns;
      row.action = action;
      row.allocated = d.allocated;
      row.reserved = d.reserved;
      w.add(row);
      ++n;
    };
    for (const auto& [addr, seg] : d.segments) put(seg, MemAction::live_segment);
    for (const auto& [addr, block] : d.blocks) put(block, MemAction::live);
  }
  return n;
}

std::size_t LiveMemory::blocks() const {
  std::size_t n = 0;
  for (const auto& [device, d] : devices_) n += d.blocks.size();
  return n;
}

}  // namespace gb::trace::detail
