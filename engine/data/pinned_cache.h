// engine/data/pinned_cache.h — the cache behind pin_memory: page-locked blocks are kept and handed out again instead
// of being freed, as PyTorch's CachingHostAllocator does (cudaHostAlloc and cudaFreeHost each take milliseconds and
// cudaFreeHost synchronizes the whole device, once per batch of a DataLoader with pin_memory otherwise).
//
// The contract:
// - allocate(n) returns a block of at least n bytes: a cached free one of n's size class (powers of two from 512 B),
//   else a new one from the backend; when the backend fails, the cached free blocks are returned to it and the
//   allocation tried once more; nullptr when that fails too (the caller names the error).
// - A block an asynchronous copy reads or writes is recorded with record_use(block, device, stream) right after the
//   copy is queued: an event on that stream. release(block) (the storage's deleter) puts the block back in the
//   cache, but it is handed out again only once every event recorded on it has completed (checked at the next
//   allocate, in release order), so a copy still reading a freed batch is never overwritten by the next one.
// - empty() returns every free block whose uses have completed to the backend (gb::data::empty_pinned_cache()).
// - Thread-safe: the DataLoader's pin thread allocates while the training thread frees.
// The backend (how blocks and events are made) is CUDA's in pin_memory.cpp and a fake in the tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "glassbox/data/pin_memory.h"

namespace gb::data::detail {

struct PinnedBackend {
  std::function<void*(size_t)> alloc;                    // nullptr on failure
  std::function<void(void*)> free;                       // never throws
  // An event after the work queued on stream (nullptr: none needed, or the stream was waited for instead), whether
  // it has completed, and its release: the device's RawAllocator's own record_event / event_done / destroy_event.
  std::function<void*(int device, void* stream)> record;
  std::function<bool(int device, void* event)> done;
  std::function<void(int device, void* event)> destroy;
};

class PinnedCache {
 public:
  explicit PinnedCache(PinnedBackend backend) : backend_(std::move(backend)) {}
  ~PinnedCache();  // returns the free blocks; blocks still in use are the process's to reclaim
  PinnedCache(const PinnedCache&) = delete;
  PinnedCache& operator=(const PinnedCache&) = delete;

  static size_t size_class(size_t nbytes);
  void* allocate(size_t nbytes);
  void release(void* block);
  // false when block is not one of this cache's live blocks (nothing recorded)
  bool record_use(void* block, int device, void* stream);
  void empty();
  PinnedMemoryStats stats() const;

 private:
  struct Block {
    size_t size = 0;
    bool in_use = false;
    std::vector<std::pair<int, void*>> events;  // (device, event) of recorded uses not yet known to have completed
  };
  void collect_locked();  // moves released blocks whose events completed to the free lists
  void empty_locked();

  PinnedBackend backend_;
  mutable std::mutex mu_;
  std::unordered_map<void*, Block> blocks_;     // every block the cache holds, by its address
  std::map<size_t, std::vector<void*>> free_;   // size class -> free blocks ready for reuse
  std::vector<void*> pending_;                  // released, waiting for their events (release order)
  PinnedMemoryStats stats_;
};

}  // namespace gb::data::detail
