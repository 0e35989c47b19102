// engine/core/storage.cpp — storage creation: each device's caching allocator (engine/memory/), unless a test or
// a user plugged in another allocator with set_allocator.
#include "glassbox/core/storage.h"

#include "glassbox/core/cuda_stream.h"
#include "glassbox/core/error.h"
#include "glassbox/memory/memory.h"

namespace gb {
namespace {

Allocator* g_allocators[3] = {nullptr, nullptr, nullptr};  // overrides; nullptr = the device's caching allocator

}  // namespace

Allocator* get_allocator(DeviceType type) {
  if (Allocator* a = g_allocators[int(type)]) return a;
  return &memory::caching_allocator(Device(type));
}
void set_allocator(DeviceType type, Allocator* allocator) { g_allocators[int(type)] = allocator; }

std::shared_ptr<StorageImpl> new_storage(int64_t nbytes, Device device) {
  Allocator* a = g_allocators[int(device.type())];
  if (a) return std::make_shared<StorageImpl>(a->allocate(nbytes), nbytes, device);
  memory::CachingAllocator& c = memory::caching_allocator(device);
  // On cuda:N the block belongs to the current stream's pool: freed, it is reused only by work on that stream, which
  // runs after every kernel that used it (PyTorch's rule; record_stream is for the exceptions).
  const int64_t stream = device.is_cuda() ? cuda::getCurrentCUDAStream(device.index()).id() : 0;
  return std::make_shared<StorageImpl>(c.allocate(nbytes, stream), nbytes, device);
}

}  // namespace gb
