// glassbox/memory/raw_allocator.h — where a caching allocator's segments come from: host memory, cudaMalloc, or
// the meta device's address space (addresses and sizes, no memory).
//
// A raw allocator hands out whole segments (2 MiB and up) and never caches: the CachingAllocator above it does.
// It does not enforce the user's capacity either (the caching layer does, so cpu and meta behave the same); it
// returns nullptr only when the device itself is out of memory. This header compiles as C++17 (the .cu files
// include it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "glassbox/core/device.h"

namespace gb::memory {

class RawAllocator {
 public:
  virtual ~RawAllocator() = default;
  // nbytes (> 0, a multiple of 512) of device memory aligned to at least 512 bytes, or nullptr when the device
  // has no room. Throws gb::Error for anything else (a CUDA error that is not "out of memory").
  virtual void* allocate(size_t nbytes) = 0;
  virtual void deallocate(void* ptr, size_t nbytes) = 0;
  virtual Device device() const = 0;
  // The device's physical size in bytes (host RAM, the GPU's total), or 0 where it has none (meta).
  virtual int64_t total_bytes() const = 0;
  // Bytes the device uses before we allocate anything (the CUDA context, measured with cudaMemGetInfo when the
  // allocator is made). cpu and meta have none of their own: 0 unless set_context_bytes() says otherwise.
  virtual int64_t context_bytes() const = 0;
  // cpu and meta: pretend this much is taken by a context (to model a GPU). cuda: throws (it is measured).
  virtual void set_context_bytes(int64_t bytes) = 0;

  // Events for blocks used on other streams than their own (CachingAllocator::record_stream): an event recorded
  // now on `stream` (an opaque handle; nullptr when the device has no streams: cpu and meta, whose work is done by
  // the time a tensor is freed), whether it has completed, waiting for it, and releasing it.
  virtual void* record_event(int64_t stream) {
    (void)stream;
    return nullptr;
  }
  virtual bool event_done(void* event) {
    (void)event;
    return true;
  }
  virtual void wait_event(void* event) { (void)event; }
  virtual void destroy_event(void* event) { (void)event; }
};

// aligned_alloc(64)/free; total_bytes() is the machine's RAM.
std::unique_ptr<RawAllocator> make_host_raw_allocator();
// Fake, increasing, 512-byte aligned addresses starting at 0x100000000000 that are never reused and never
// dereferenced: the meta device computes nothing, it only lays memory out.
std::unique_ptr<RawAllocator> make_meta_raw_allocator();
// cudaMalloc/cudaFree on device `index`; measures the context on creation. Throws gb::Error in a build without
// CUDA or on a machine where cuda:index does not exist.
std::unique_ptr<RawAllocator> make_cuda_raw_allocator(int index);

}  // namespace gb::memory
