// engine/memory/memory.cpp — one caching allocator per device, made on first use from GLASSBOX_ALLOC_CONF and
// never destroyed (storages freed during static destruction still find theirs), and the memory.h functions.
#include "glassbox/memory/memory.h"

#include <array>
#include <atomic>
#include <mutex>

#include "glassbox/core/cuda.h"
#include "glassbox/core/error.h"

namespace gb::memory {
namespace {

constexpr int kMaxCudaDevices = 64;

CachingAllocator* make_allocator(Device d) {
  AllocatorConfig conf = alloc_conf_from_env();
  if (d.is_cpu()) return new CachingAllocator(make_host_raw_allocator(), conf);
  if (d.is_meta()) return new CachingAllocator(make_meta_raw_allocator(), conf);
  return new CachingAllocator(make_cuda_raw_allocator(d.index()), conf);
}

// A slot made once (a failed attempt, e.g. a bad GLASSBOX_ALLOC_CONF, throws and is retried next time). The
// first allocator connects the tracer (trace_events.cpp); one made while a trace records writes its meta rows.
CachingAllocator& get_or_make(std::atomic<CachingAllocator*>& slot, Device d) {
  if (CachingAllocator* a = slot.load(std::memory_order_acquire)) return *a;
  static std::mutex mu;
  CachingAllocator* a = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (CachingAllocator* made = slot.load(std::memory_order_relaxed)) return *made;
    a = make_allocator(d);
    slot.store(a, std::memory_order_release);
  }
  detail::connect_tracer();
  detail::trace_allocator_made(d);
  return *a;
}

std::atomic<CachingAllocator*> g_cpu{nullptr}, g_meta{nullptr};
std::array<std::atomic<CachingAllocator*>, kMaxCudaDevices> g_cuda{};

}  // namespace

namespace detail {
void for_each_allocator(void (*f)(CachingAllocator&)) {
  for (auto* slot : {&g_cpu, &g_meta})
    if (CachingAllocator* a = slot->load(std::memory_order_acquire)) f(*a);
  for (auto& slot : g_cuda)
    if (CachingAllocator* a = slot.load(std::memory_order_acquire)) f(*a);
}
}  // namespace detail

CachingAllocator& caching_allocator(Device device) {
  switch (device.type()) {
    case DeviceType::CPU: return get_or_make(g_cpu, Device(kCPU));
    case DeviceType::Meta: return get_or_make(g_meta, Device(kMeta));
    case DeviceType::CUDA: {
      int index = device.has_index() ? device.index() : 0;
      GB_CHECK(index < kMaxCudaDevices, "cuda:", index, ": glassbox supports up to ", kMaxCudaDevices, " devices");
      return get_or_make(g_cuda[size_t(index)], Device(kCUDA, index));
    }
  }
  throw Error("caching_allocator: unknown device type");
}

MemoryStats memory_stats(Device device) { return caching_allocator(device).stats(); }
std::map<std::string, int64_t> memory_stats_map(Device device) { return memory_stats(device).to_map(); }
void reset_peak_stats(Device device) { caching_allocator(device).reset_peak_stats(); }
void empty_cache(Device device) { caching_allocator(device).empty_cache(); }
Snapshot snapshot(Device device) { return caching_allocator(device).snapshot(); }
std::string summary(Device device) { return summary(memory_stats(device), device); }
void set_capacity(Device device, int64_t bytes) {
  caching_allocator(device).set_capacity(bytes);
  detail::trace_device_changed(device);
}
int64_t capacity(Device device) { return caching_allocator(device).capacity(); }
void set_context_bytes(Device device, int64_t bytes) {
  caching_allocator(device).set_context_bytes(bytes);
  detail::trace_device_changed(device);
}
bool set_category(Device device, const void* ptr, Category c) { return caching_allocator(device).set_category(ptr, c); }

}  // namespace gb::memory
