// glassbox/data/pin_memory.h — page-locked host copies of tensors (Tensor.pin_memory() in PyTorch).
//
// pin_memory(t) copies t into a new contiguous buffer that the GPU can read by DMA: cudaHostAlloc when glassbox
// is built with CUDA and a device is present, plain 64-byte aligned host memory otherwise (a CPU-only run pays
// the copy, so the trace's pin stage shows what pinning would cost). is_pinned(t) says whether t's storage came
// from pin_memory.
//
// The buffers are cached, as PyTorch's pinned memory is (CachingHostAllocator): a freed one is kept, in size classes
// of powers of two, and handed out again once every asynchronous copy that used it has completed (an event recorded
// on the copy's stream when `to(cuda, non_blocking=true)` or a copy into a pinned tensor is queued). So a DataLoader
// with pin_memory pays cudaHostAlloc for its first batches only. empty_pinned_cache() returns the free ones;
// pinned_memory_stats() counts them.
#pragma once

#include <cstdint>

#include "glassbox/core/tensor.h"

namespace gb::data {

Tensor pin_memory(const Tensor& t);
bool is_pinned(const Tensor& t);
// True when pin_memory() gets page-locked memory from CUDA (else plain host memory).
bool pinned_memory_is_page_locked();

struct PinnedMemoryStats {
  int64_t allocated_bytes = 0;      // in pinned tensors alive now (rounded to their size class)
  int64_t reserved_bytes = 0;       // held from the system: allocated + cached
  int64_t allocations = 0;          // pin_memory buffers handed out
  int64_t cache_hits = 0;           // of them, reused from the cache
  int64_t backend_allocations = 0;  // buffers made (cudaHostAlloc calls)
  int64_t backend_frees = 0;        // buffers returned (cudaFreeHost calls)
};
PinnedMemoryStats pinned_memory_stats();
// Returns the cached buffers no copy still uses to the system (torch._C._host_emptyCache()).
void empty_pinned_cache();
// Records that an asynchronous copy just queued on device's current stream reads or writes t's pinned buffer, so the
// buffer is not reused before the copy completes. The copy code calls it; a tensor that is not pinned is ignored.
void record_pinned_use(const Tensor& t, int device);

}  // namespace gb::data
