// glassbox/memory/oom.h — gb::OutOfMemoryError: PyTorch's OOM message, plus what held the memory and what to do.
//
// Thrown by a caching allocator when a request cannot be met even after returning every cached segment to the
// device and retrying. The message starts like PyTorch's:
//   CPU out of memory. Tried to allocate 20.00 MiB. Device cpu has a total capacity of 8.00 GiB of which 1.50 MiB
//   is free. Of the allocated memory 7.80 GiB is allocated by glassbox, and 180.00 MiB is reserved by glassbox but
//   unallocated. If reserved but unallocated memory is large try setting GLASSBOX_ALLOC_CONF=max_split_size_mb:...
// and goes on with: allocated bytes by category, the device context, the largest free block and the
// fragmentation ratio, the live memory by the step that allocated it (this step, earlier steps, outside any step;
// glassbox/memory/age.h) when a step is running, the five largest live allocations (size, category, op, module),
// and next steps computed from these numbers. The same numbers are fields, so tests and the tracer read them
// without parsing.
//
// A leak across steps (by_age.leak(): earlier steps' kept bytes are more than half of the allocated ones) is said
// as one: the ops and modules that made the kept tensors, and what ends a leak (loss.item(), .detach(),
// gb::NoGradGuard for evaluation, no list of outputs); the advice for one step's peak (activation checkpointing, a
// smaller batch) is given only when the step's own allocations are what fills the device.
//
// fragmentation = 1 - largest_free_block / (reserved - allocated): 0 when the cached free memory is one block (or
// there is none), near 1 when it is scattered in pieces too small for the request.
//
// The allocator stays consistent: catch it, drop references, and retry smaller.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "glassbox/core/device.h"
#include "glassbox/core/error.h"
#include "glassbox/memory/age.h"
#include "glassbox/memory/category.h"

namespace gb {

struct LiveAllocation {
  uint64_t address = 0;
  int64_t size = 0, requested = 0, stream = 0;
  memory::Category category = memory::Category::unknown;
  std::string op, module;
};

struct OomReport {
  Device device;
  int64_t requested = 0;           // what the caller asked for
  int64_t alloc_size = 0;          // the segment the allocator tried to get for it ("Tried to allocate")
  int64_t capacity = 0;            // 0 = unlimited
  int64_t free = 0;                // capacity - context - reserved (0 when unlimited)
  int64_t context = 0;
  int64_t allocated = 0;           // allocated_bytes.all.current
  int64_t reserved = 0;            // reserved_bytes.all.current
  int64_t largest_free_block = 0;  // the largest inactive block in the cache
  double fragmentation = 0;        // 1 - largest_free_block / (reserved - allocated)
  int64_t max_split_size = 0;      // 0 = no limit
  std::array<int64_t, memory::kNumCategories> allocated_by_category{};
  std::vector<LiveAllocation> largest_allocations;  // up to 5, largest first
  // Live activation bytes per module path (gb::memory::AllocationContext), up to 3, largest first: where
  // activation checkpointing would pay.
  std::vector<std::pair<std::string, int64_t>> activations_by_module;
  // The live blocks by the step that allocated them, split at the step that ran out (by_age.step; -1 outside a
  // step: no split) and what earlier steps kept (by_age.kept, by_age.kept_origins).
  memory::MemoryByAge by_age{};

  std::string message() const;  // the full text (what() of the error)
};

class OutOfMemoryError : public Error {
 public:
  explicit OutOfMemoryError(OomReport report) : Error(report.message()), report_(std::move(report)) {}
  const OomReport& report() const { return report_; }
  int64_t requested() const { return report_.requested; }
  int64_t capacity() const { return report_.capacity; }
  int64_t free() const { return report_.free; }
  int64_t allocated() const { return report_.allocated; }
  int64_t reserved() const { return report_.reserved; }
  int64_t largest_free_block() const { return report_.largest_free_block; }

 private:
  OomReport report_;
};

}  // namespace gb
