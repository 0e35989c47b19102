// glassbox/memory/stats.h — an allocator's counters, shaped like torch.cuda.memory_stats().
//
// Every Stat keeps current, peak (since the last reset_peak_stats), and the running totals allocated and freed.
// Each metric exists for all blocks and per pool (small: requests <= 1 MiB, large: the rest). What they count:
//   allocated_bytes   sizes (rounded to 512 B) of blocks handed out and not yet freed; allocation = their count
//   requested_bytes   the sizes callers asked for, of the same blocks (allocated - requested = rounding waste)
//   active_bytes      allocated blocks (glassbox frees at once, so active == allocated; kept for PyTorch's shape)
//   reserved_bytes    segments obtained from the raw allocator; segment = their count
//   inactive_split_bytes  free blocks inside segments that are partly in use: cached, but empty_cache() cannot
//                     return them ("non-releasable" in the summary); inactive_split = their count
//   oversize_*        allocations / segments of at least max_split_size (only when max_split_size_mb is set)
// plus allocated bytes per Category, the device's context and capacity, num_alloc_retries (a failed segment
// allocation that freed the cache and tried again) and num_ooms.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "glassbox/memory/category.h"

namespace gb::memory {

struct Stat {
  int64_t current = 0, peak = 0, allocated = 0, freed = 0;
  void increase(int64_t n) {
    current += n;
    allocated += n;
    if (current > peak) peak = current;
  }
  void decrease(int64_t n) {
    current -= n;
    freed += n;
  }
  void reset_peak() { peak = current; }
};

enum StatType { kAll = 0, kSmallPool = 1, kLargePool = 2 };
using StatArray = std::array<Stat, 3>;  // indexed by StatType

struct MemoryStats {
  StatArray allocation, segment, active, inactive_split;                                       // counts
  StatArray allocated_bytes, reserved_bytes, active_bytes, inactive_split_bytes, requested_bytes;  // bytes
  Stat oversize_allocations, oversize_segments;
  std::array<Stat, kNumCategories> allocated_bytes_by_category;
  int64_t num_alloc_retries = 0, num_ooms = 0;
  int64_t max_split_size = 0;   // bytes; 0 = no limit (PyTorch reports SIZE_MAX)
  int64_t capacity_bytes = 0;   // 0 = unlimited
  int64_t context_bytes = 0;

  void reset_peak();
  // The flat form of torch.cuda.memory_stats(): "allocated_bytes.all.current", "segment.small_pool.peak",
  // "num_ooms", ... and ours: "allocated_bytes.by_category.activation.current", "capacity_bytes", "context_bytes".
  std::map<std::string, int64_t> to_map() const;
};

// The peaks of one window of time (a training step, for the trace's step_memory rows): allocated and reserved
// bytes and each category's allocated bytes at their highest since the window began, and the totals now.
struct WindowPeaks {
  int64_t allocated_peak = 0, reserved_peak = 0;
  int64_t allocated = 0, reserved = 0;
  std::array<int64_t, kNumCategories> category_peak{};
};

// PyTorch's format_size: "512 bytes", "1.50 KiB", "20.00 MiB", "8.00 GiB".
std::string format_size(int64_t bytes);

}  // namespace gb::memory
