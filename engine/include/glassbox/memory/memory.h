// glassbox/memory/memory.h — the per-device caching allocators behind tensors, and torch.cuda.memory_*'s
// functions for them (stats, summary, snapshot, empty_cache, capacity, re-tagging).
//
// Every device has one CachingAllocator, made on first use with the settings of GLASSBOX_ALLOC_CONF (config.h)
// and kept for the whole process: cpu over host memory, meta over an address space (no memory: a meta run
// predicts a GPU's memory without one), cuda:N over cudaMalloc. new_storage() allocates from them, and freeing
// a tensor's last reference returns its block to the cache.
//
//   gb::memory::set_capacity(gb::kMeta, 80LL << 30);         // behave like an 80 GiB GPU
//   auto x = gb::empty({4096, 4096}, gb::TensorOptions().device(gb::kMeta));
//   std::cout << gb::memory::summary(gb::kMeta);             // torch.cuda.memory_summary()'s table
//   int64_t peak = gb::memory::memory_stats(gb::kMeta).allocated_bytes[gb::memory::kAll].peak;
#pragma once

#include <map>
#include <string>

#include "glassbox/memory/caching_allocator.h"
#include "glassbox/memory/category.h"
#include "glassbox/memory/events.h"
#include "glassbox/memory/oom.h"
#include "glassbox/memory/snapshot.h"
#include "glassbox/memory/stats.h"

namespace gb::memory {

// The device's allocator (cuda without an index: cuda:0). Throws gb::Error for cuda in a build or on a machine
// without it.
CachingAllocator& caching_allocator(Device device);

MemoryStats memory_stats(Device device);
std::map<std::string, int64_t> memory_stats_map(Device device);  // memory_stats(device).to_map()
void reset_peak_stats(Device device);
void empty_cache(Device device);
Snapshot snapshot(Device device);
// torch.cuda.memory_summary()'s table, then capacity, context and allocated bytes by category.
std::string summary(Device device);
std::string summary(const MemoryStats& stats, Device device);

void set_capacity(Device device, int64_t bytes);  // 0 = unlimited
int64_t capacity(Device device);
void set_context_bytes(Device device, int64_t bytes);  // cpu and meta

// Re-tags the live block on `device` that holds ptr (e.g. a tensor's storage data). False when none does.
bool set_category(Device device, const void* ptr, Category c);

}  // namespace gb::memory
