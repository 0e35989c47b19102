// engine/data/pinned_cache.cpp — the cache behind pin_memory (pinned_cache.h states the contract).
#include "data/pinned_cache.h"

#include <algorithm>
#include <bit>

namespace gb::data::detail {

PinnedCache::~PinnedCache() {
  std::lock_guard<std::mutex> lock(mu_);
  collect_locked();
  empty_locked();
}

size_t PinnedCache::size_class(size_t nbytes) { return std::bit_ceil(std::max<size_t>(nbytes, 512)); }

void PinnedCache::collect_locked() {
  // In release order: a block is ready once all its events have completed.
  auto ready = [this](void* p) {
    Block& b = blocks_.at(p);
    auto first_pending = std::remove_if(b.events.begin(), b.events.end(), [this](const std::pair<int, void*>& e) {
      if (!backend_.done(e.first, e.second)) return false;
      backend_.destroy(e.first, e.second);
      return true;
    });
    b.events.erase(first_pending, b.events.end());
    if (!b.events.empty()) return false;
    free_[b.size].push_back(p);
    return true;
  };
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(), ready), pending_.end());
}

void PinnedCache::empty_locked() {
  for (auto& [size, list] : free_) {
    for (void* p : list) {
      backend_.free(p);
      blocks_.erase(p);
      stats_.reserved_bytes -= int64_t(size);
      ++stats_.backend_frees;
    }
  }
  free_.clear();
}

void* PinnedCache::allocate(size_t nbytes) {
  const size_t size = size_class(nbytes);
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.allocations;
  if (!pending_.empty()) collect_locked();
  auto it = free_.find(size);
  void* p = nullptr;
  if (it != free_.end() && !it->second.empty()) {
    p = it->second.back();
    it->second.pop_back();
    ++stats_.cache_hits;
  } else {
    p = backend_.alloc(size);
    if (!p) {  // the cached blocks may be what the backend lacks
      empty_locked();
      p = backend_.alloc(size);
    }
    if (!p) return nullptr;
    blocks_[p].size = size;
    stats_.reserved_bytes += int64_t(size);
    ++stats_.backend_allocations;
  }
  blocks_.at(p).in_use = true;
  stats_.allocated_bytes += int64_t(size);
  return p;
}

void PinnedCache::release(void* block) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.find(block);
  if (it == blocks_.end() || !it->second.in_use) return;
  Block& b = it->second;
  b.in_use = false;
  stats_.allocated_bytes -= int64_t(b.size);
  if (b.events.empty()) {
    free_[b.size].push_back(block);
  } else {
    pending_.push_back(block);
  }
}

bool PinnedCache::record_use(void* block, int device, void* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.find(block);
  if (it == blocks_.end() || !it->second.in_use) return false;
  if (void* e = backend_.record(device, stream)) it->second.events.emplace_back(device, e);
  return true;
}

void PinnedCache::empty() {
  std::lock_guard<std::mutex> lock(mu_);
  collect_locked();
  empty_locked();
}

PinnedMemoryStats PinnedCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace gb::data::detail
