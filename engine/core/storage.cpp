// engine/core/storage.cpp — storage creation: each device's caching allocator (engine/memory/), unless a test or
// a user plugged in another allocator with set_allocator.
#include "glassbox/core/storage.h"

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
  Allocator* a = g_allocators[int(device.type)];
  if (!a) a = &memory::caching_allocator(device);
  return std::make_shared<StorageImpl>(a->allocate(nbytes), nbytes, device);
}

}  // namespace gb
