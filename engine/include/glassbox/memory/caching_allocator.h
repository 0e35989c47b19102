// glassbox/memory/caching_allocator.h — PyTorch's CUDA caching allocator, for any raw allocator (cpu, cuda, meta).
//
// Freed blocks stay cached and are handed out again without asking the device. The rules are PyTorch's, so the
// numbers compare with torch.cuda.memory_stats():
//   - a request is rounded up to a multiple of 512 B (kMinBlockSize); 0 bytes gives nullptr and no block;
//   - requests <= 1 MiB use the small pool, carved from 2 MiB segments; larger ones the large pool: 1-10 MiB
//     requests get 20 MiB segments, larger ones a segment of their size rounded up to 2 MiB;
//   - best fit: the smallest cached block >= the request, on the same stream (an int64 id; 0 by default), ties
//     broken by segment age then offset (PyTorch breaks them by address; segment age gives a meta run and a cpu
//     run the same layout);
//   - the block is split when the rest is worth keeping: >= 512 B in the small pool, > 1 MiB in the large pool;
//   - a freed block merges with free neighbours in its segment at once;
//   - max_split_size: requests >= it are never split and requests below it never take a block >= it;
//   - when the device (or the capacity) refuses a segment, every unsplit cached segment is returned and the
//     segment is asked for once more (num_alloc_retries); if that fails too, gb::OutOfMemoryError (num_ooms).
// The capacity counts the device context plus reserved segments. One mutex guards each allocator.
//
//   gb::memory::CachingAllocator a(gb::memory::make_meta_raw_allocator());
//   gb::DataPtr p = a.allocate(3000);          // a 3072-byte block in a new 2 MiB segment
//   p.deleter(p.ptr);                          // back to the cache: allocated 0, reserved 2 MiB
//   a.empty_cache();                           // reserved 0
//
// Blocks must be freed (their DataPtr deleter called) before the allocator is destroyed. The per-device
// allocators behind tensors (memory.h) live for the whole process.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "glassbox/core/storage.h"
#include "glassbox/memory/config.h"
#include "glassbox/memory/raw_allocator.h"
#include "glassbox/memory/snapshot.h"
#include "glassbox/memory/stats.h"

namespace gb::memory {

constexpr int64_t kMinBlockSize = 512;              // every block is a multiple of this
constexpr int64_t kSmallSize = 1 << 20;             // requests up to this use the small pool
constexpr int64_t kSmallBuffer = 2 << 20;           // small-pool segment size
constexpr int64_t kLargeBuffer = 20 << 20;          // segment size for 1-10 MiB requests
constexpr int64_t kMinLargeAlloc = 10 << 20;        // requests from here get a segment of their own size...
constexpr int64_t kRoundLarge = 2 << 20;            // ...rounded up to this

// 1 -> 512, 513 -> 1024, 1 MiB -> 1 MiB.
constexpr int64_t round_size(int64_t nbytes) {
  return nbytes < kMinBlockSize ? kMinBlockSize : (nbytes + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}
// The segment a rounded request of `size` bytes is carved from when nothing cached fits.
constexpr int64_t allocation_size(int64_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return (size + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

class CachingAllocator final : public Allocator {
 public:
  explicit CachingAllocator(std::unique_ptr<RawAllocator> raw, const AllocatorConfig& config = {});
  ~CachingAllocator() override;  // returns every cached segment to the raw allocator
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // nbytes on stream 0 / on `stream`, stamped with the thread's category, op and module (category.h). The
  // DataPtr's deleter returns the block to the cache. Throws gb::OutOfMemoryError.
  DataPtr allocate(int64_t nbytes) override;
  DataPtr allocate(int64_t nbytes, int64_t stream);

  Device device() const;
  RawAllocator& raw();

  // The live block holding `ptr` is also used on `stream` (not the one it was allocated on): once freed, it is
  // reused only after the work queued on `stream` by then has run (an event per stream; torch's record_stream).
  // Throws when no live block holds ptr.
  void record_stream(const void* ptr, int64_t stream);
  // Re-tags the live block holding `ptr` (any address inside it). False when no live block holds it.
  bool set_category(const void* ptr, Category c);
  // The category of the live block holding ptr; nullopt when no live block holds it.
  std::optional<Category> category_of(const void* ptr) const;

  // Returns every cached segment with no block in use to the raw allocator.
  void empty_cache();
  MemoryStats stats() const;
  void reset_peak_stats();
  // The peaks since the previous call (or since the allocator was made) and the totals now; the next window starts
  // at the totals now. Independent of reset_peak_stats (the training monitor takes one window per step).
  WindowPeaks take_window_peaks();
  Snapshot snapshot() const;

  void set_capacity(int64_t bytes);  // 0 = unlimited; takes effect for the next segment
  int64_t capacity() const;
  void set_context_bytes(int64_t bytes);  // cpu and meta; throws on cuda (measured)
  int64_t context_bytes() const;
  void set_max_split_size(int64_t bytes);  // 0 = no limit; must be > 20 MiB otherwise (PyTorch's rule)
  int64_t max_split_size() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gb::memory
