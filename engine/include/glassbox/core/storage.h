// glassbox/core/storage.h — the bytes behind tensors, shared by every view, and the allocator that makes them.
//
// A Storage owns one allocation (or borrows one, for from_blob) and carries the version counter that in-place
// ops bump and autograd checks: all views of one storage share it, as in PyTorch. The Allocator is the seam
// where allocators plug in; by default every device's storages come from its caching allocator
// (glassbox/memory/caching_allocator.h), and freeing the last reference returns the block to that cache.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "glassbox/core/device.h"

namespace gb {

// One allocation: the pointer and how to give it back.
struct DataPtr {
  void* ptr = nullptr;
  std::function<void(void*)> deleter;  // empty = borrowed memory, nothing to free
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual DataPtr allocate(int64_t nbytes) = 0;
};

// The allocator new storages on `type` come from: the device's caching allocator (cuda: cuda:0's; made on first
// use, so asking for cuda's throws gb::Error where there is none) unless set_allocator replaced it.
// set_allocator(type, nullptr) restores the caching allocator.
Allocator* get_allocator(DeviceType type);
void set_allocator(DeviceType type, Allocator* allocator);

struct StorageImpl {
  StorageImpl(DataPtr data, int64_t nbytes, Device device)
      : data_ptr(std::move(data)), nbytes(nbytes), device(device) {}
  StorageImpl(const StorageImpl&) = delete;
  StorageImpl& operator=(const StorageImpl&) = delete;
  ~StorageImpl() {
    if (data_ptr.deleter) data_ptr.deleter(data_ptr.ptr);
  }

  void* data() const { return data_ptr.ptr; }

  DataPtr data_ptr;
  int64_t nbytes;
  Device device;
  uint32_t version = 0;  // bumped by every in-place write through any view
  // Autograd's bookkeeping for memory categories (engine/autograd/memory_roles.h): how many saved variables hold
  // this storage, and whether that made its block an activation.
  int32_t saved_marks = 0;
  bool saved_retagged = false;
};

// A new storage of nbytes from the device's allocator (0 bytes: a null data pointer, no block).
std::shared_ptr<StorageImpl> new_storage(int64_t nbytes, Device device);

}  // namespace gb
