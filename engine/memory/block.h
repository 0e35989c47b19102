// engine/memory/block.h — the caching allocator's bookkeeping: segments, the blocks that tile them, and the
// pools of free blocks ordered for best fit. Internal to engine/memory/.
#pragma once

#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

#include "glassbox/memory/category.h"

namespace gb::memory::detail {

struct Block;

// One raw allocation. Its blocks form a doubly linked list in address order, starting at `head`.
struct Segment {
  int64_t id = 0;
  uintptr_t base = 0;
  int64_t size = 0;
  int64_t stream = 0;
  bool small = false;
  bool oversize = false;  // size >= max_split_size when it was made
  Block* head = nullptr;
};

struct Block {
  Segment* segment = nullptr;
  int64_t offset = 0;     // from segment->base
  int64_t size = 0;       // a multiple of kMinBlockSize
  int64_t requested = 0;  // caller's bytes while allocated
  Block* prev = nullptr;  // neighbours in the segment
  Block* next = nullptr;
  bool allocated = false;
  bool oversize = false;  // counted in oversize_allocations
  Category category = Category::unknown;
  uint32_t op = 0, module = 0;
  int64_t step = -1;  // while allocated: the training step that allocated it (trace::current_step()); -1 outside a step
  std::vector<int64_t> stream_uses;  // other streams the block was used on while allocated (record_stream)
  int event_count = 0;               // freed, waiting for this many events before it rejoins its pool

  uintptr_t addr() const { return segment->base + uintptr_t(offset); }
  bool is_split() const { return prev != nullptr || next != nullptr; }
};

// Best fit: by stream, then size, then segment age and offset (not the address: meta and cpu must agree).
struct BlockLess {
  bool operator()(const Block* a, const Block* b) const {
    return std::tuple(a->segment->stream, a->size, a->segment->id, a->offset) <
           std::tuple(b->segment->stream, b->size, b->segment->id, b->offset);
  }
};

using Pool = std::set<Block*, BlockLess>;

}  // namespace gb::memory::detail
