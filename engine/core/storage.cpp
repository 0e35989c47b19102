// engine/core/storage.cpp — the default CPU allocator (64-byte aligned host memory) and storage creation.
#include "glassbox/core/storage.h"

#include <cstdlib>
#include <new>

#include "glassbox/core/error.h"

namespace gb {
namespace {

class CpuAllocator final : public Allocator {
 public:
  DataPtr allocate(int64_t nbytes) override {
    if (nbytes == 0) return DataPtr{nullptr, {}};
    size_t rounded = (size_t(nbytes) + 63) & ~size_t(63);
    void* p = std::aligned_alloc(64, rounded);
    if (!p)
      throw Error(detail::str_cat("CPU out of memory: tried to allocate ", nbytes,
                                  " bytes. Reduce the batch size or free tensors you no longer need."));
    return DataPtr{p, [](void* q) { std::free(q); }};
  }
};

CpuAllocator g_cpu_allocator;
Allocator* g_allocators[3] = {&g_cpu_allocator, nullptr, nullptr};

}  // namespace

Allocator* get_allocator(DeviceType type) { return g_allocators[int(type)]; }
void set_allocator(DeviceType type, Allocator* allocator) { g_allocators[int(type)] = allocator; }

std::shared_ptr<StorageImpl> new_storage(int64_t nbytes, Device device) {
  Allocator* a = get_allocator(device.type);
  GB_CHECK(a != nullptr, "no allocator for device ", device.str(),
           ": this build has no allocator (and no kernels) for it yet; use device cpu");
  return std::make_shared<StorageImpl>(a->allocate(nbytes), nbytes, device);
}

}  // namespace gb
