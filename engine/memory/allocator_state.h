// engine/memory/allocator_state.h — CachingAllocator's state (its Impl), shared by the files that implement it:
// caching_allocator.cpp (malloc, free, split, merge, segments), snapshot.cpp and oom_report.cpp (reading it).
// Every *_locked function expects `mu` held.
#pragma once

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "glassbox/memory/caching_allocator.h"
#include "glassbox/memory/events.h"
#include "glassbox/memory/oom.h"
#include "memory/block.h"

namespace gb::memory {

struct CachingAllocator::Impl {
  std::unique_ptr<RawAllocator> raw;
  Device device;
  mutable std::mutex mu;
  detail::Pool small_pool, large_pool;
  std::vector<detail::Block*> spare_blocks;      // Block objects kept for reuse by splits
  std::map<int64_t, std::unique_ptr<detail::Segment>> segments;  // by id: snapshot order
  std::map<uintptr_t, detail::Segment*> by_addr;                  // for pointer lookups
  int64_t next_segment_id = 1;
  int64_t capacity = 0;        // 0 = unlimited
  int64_t max_split = 0;       // 0 = no limit
  MemoryStats stats;
  WindowPeaks window;  // peaks since take_window_peaks() (allocated and reserved current: filled when taken)
  std::deque<std::pair<void*, detail::Block*>> pending_events;  // freed blocks used on other streams, in order

  int64_t max_split_or_inf() const { return max_split ? max_split : INT64_MAX; }
  // After bytes were added: the window's peaks of allocated, reserved and category c's bytes.
  void note_window_locked(Category c) {
    window.allocated_peak = std::max(window.allocated_peak, stats.allocated_bytes[kAll].current);
    window.reserved_peak = std::max(window.reserved_peak, stats.reserved_bytes[kAll].current);
    int64_t& cp = window.category_peak[size_t(c)];
    cp = std::max(cp, stats.allocated_bytes_by_category[size_t(c)].current);
  }
  detail::Pool& pool_of(const detail::Segment* s) { return s->small ? small_pool : large_pool; }

  // An allocated block of round_size(nbytes) bytes; throws OutOfMemoryError.
  detail::Block* malloc(int64_t nbytes, int64_t stream);
  void free(detail::Block* b);
  // b (not allocated, no pending event) back into its pool, merged with free neighbours.
  void free_block_locked(detail::Block* b);
  // Blocks whose events have all completed rejoin their pool (in order; stops at the first pending one). With
  // `wait`, waits for every event first (empty_cache, and before releasing segments to retry an allocation).
  void process_events_locked(bool wait);

  detail::Block* new_block_locked();
  void recycle_block_locked(detail::Block* b);
  ~Impl();
  detail::Block* find_free_locked(detail::Pool& pool, int64_t size, int64_t stream);
  detail::Block* new_segment_locked(int64_t alloc_size, int64_t stream, bool small);
  void release_segment_locked(detail::Block* whole);
  int64_t release_cached_locked();  // returns bytes released
  // Tree nodes move between erase and insert (node handles), so a split or merge allocates no node.
  void pool_insert_locked(detail::Pool& pool, detail::Block* b, detail::Pool::node_type node = {});
  detail::Pool::node_type pool_erase_locked(detail::Pool& pool, detail::Block* b);
  detail::Block* block_at_locked(uintptr_t addr) const;  // the block (free or not) containing addr
  void emit_locked(MemoryAction a, uintptr_t addr, int64_t size, int64_t requested, int64_t segment_id,
                   int64_t stream, Category c, uint32_t op, uint32_t module) const;

  Snapshot snapshot_locked() const;                                  // snapshot.cpp
  // step: the training step that asked (trace::current_step() at the failed malloc; -1 outside a step).
  OomReport oom_report_locked(int64_t requested, int64_t alloc_size, int64_t step) const;  // oom_report.cpp
};

}  // namespace gb::memory
