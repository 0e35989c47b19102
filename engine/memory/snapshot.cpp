// engine/memory/snapshot.cpp — the allocator's layout as plain structs: segments by id, their blocks in address
// order (glassbox/memory/snapshot.h).
#include "glassbox/memory/snapshot.h"

#include "memory/allocator_state.h"

namespace gb::memory {

const char* to_string(BlockState s) { return s == BlockState::active_allocated ? "active_allocated" : "inactive"; }

Snapshot CachingAllocator::Impl::snapshot_locked() const {
  Snapshot snap;
  snap.segments.reserve(segments.size());
  for (const auto& [id, seg] : segments) {
    SegmentSnapshot s;
    s.id = id;
    s.address = seg->base;
    s.total_size = seg->size;
    s.stream = seg->stream;
    s.is_small = seg->small;
    for (const detail::Block* b = seg->head; b; b = b->next) {
      BlockSnapshot bs;
      bs.address = b->addr();
      bs.offset = b->offset;
      bs.size = b->size;
      bs.requested_size = b->requested;
      bs.state = b->allocated ? BlockState::active_allocated : BlockState::inactive;
      bs.category = b->category;
      bs.op = name_of(b->op);
      bs.module = name_of(b->module);
      bs.step = b->allocated ? b->step : -1;
      if (b->allocated) {
        s.allocated_size += b->size;
        s.requested_size += b->requested;
      }
      s.blocks.push_back(std::move(bs));
    }
    snap.segments.push_back(std::move(s));
  }
  return snap;
}

}  // namespace gb::memory
