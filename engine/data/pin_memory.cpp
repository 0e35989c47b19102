// engine/data/pin_memory.cpp — page-locked staging copies: cudaHostAlloc with CUDA, aligned host memory without,
// both through the cache of pinned_cache.h (events on the copies' streams with CUDA; none are needed without).
#include "glassbox/data/pin_memory.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "data/pinned_cache.h"
#include "glassbox/core/cuda.h"
#include "glassbox/core/cuda_stream.h"
#include "glassbox/memory/caching_allocator.h"
#include "glassbox/memory/memory.h"
#include "glassbox/ops/factory.h"

#ifdef GLASSBOX_WITH_CUDA
#include <cuda_runtime.h>

#include "cuda/check.h"
#endif

namespace gb::data {
namespace {

bool use_cuda() {
#ifdef GLASSBOX_WITH_CUDA
  static const bool available = gb::cuda::is_available();
  return available;
#else
  return false;
#endif
}

detail::PinnedBackend host_backend() {
  detail::PinnedBackend b;
  b.alloc = [](size_t n) { return std::aligned_alloc(64, n); };  // n is a size class: a multiple of 64
  b.free = [](void* p) { std::free(p); };
  b.record = [](int, void*) -> void* { return nullptr; };  // no device: nothing runs asynchronously
  b.done = [](int, void*) { return true; };
  b.destroy = [](int, void*) {};
  return b;
}

#ifdef GLASSBOX_WITH_CUDA
// Buffers: a failure is cleared (never left for the next launch check to report as its own) and never throws (the
// deleter frees). Events: the device's caching allocator's raw allocator's, which record_stream uses too.
detail::PinnedBackend cuda_backend() {
  detail::PinnedBackend b;
  b.alloc = [](size_t n) -> void* {
    void* p = nullptr;
    return cuda_kernels::cuda_ok_or_clear(cudaHostAlloc(&p, n, cudaHostAllocDefault)) ? p : nullptr;
  };
  b.free = [](void* p) {
    if (!cuda_kernels::cuda_ok_or_clear(cudaFreeHost(p)))
      std::fprintf(stderr, "glassbox: warning: pin_memory: cudaFreeHost failed; the pinned buffer is leaked\n");
  };
  // the device's own events (memory/cuda_allocator.cu): without one it waits for the stream instead
  auto raw = [](int device) -> memory::RawAllocator& { return memory::caching_allocator(Device(kCUDA, device)).raw(); };
  b.record = [raw](int device, void* stream) { return raw(device).record_event(reinterpret_cast<int64_t>(stream)); };
  b.done = [raw](int device, void* e) { return raw(device).event_done(e); };
  b.destroy = [raw](int device, void* e) { raw(device).destroy_event(e); };
  return b;
}
#endif

// One cache per process, chosen at first use; never destroyed (the runtime may be gone at exit, and a pinned tensor
// freed by a static destructor still finds it).
detail::PinnedCache& cache() {
  static detail::PinnedCache* c = [] {
#ifdef GLASSBOX_WITH_CUDA
    if (use_cuda()) return new detail::PinnedCache(cuda_backend());
#endif
    return new detail::PinnedCache(host_backend());
  }();
  return *c;
}

// The deleter of a pinned storage; its type is how is_pinned() recognises one.
struct PinnedFree {
  void operator()(void* p) const { cache().release(p); }
};

}  // namespace

bool pinned_memory_is_page_locked() { return use_cuda(); }

Tensor pin_memory(const Tensor& t) {
  GB_CHECK(t.is_cpu(), "pin_memory: cannot pin a tensor on ", t.device(), "; only CPU tensors can be pinned");
  if (is_pinned(t) && t.is_contiguous()) return t;
  Tensor src = t.contiguous();
  const size_t nbytes = static_cast<size_t>(std::max<int64_t>(src.nbytes(), 1));
  void* p = cache().allocate(nbytes);
  if (use_cuda()) {
    GB_CHECK(p, "pin_memory: cudaHostAlloc of ", detail::PinnedCache::size_class(nbytes),
             " bytes failed, with the cache's free buffers returned; pinned memory is limited: lower batch_size or "
             "set pin_memory=false");
  } else {
    GB_CHECK(p, "pin_memory: out of host memory allocating ", nbytes, " bytes");
  }
  std::memcpy(p, src.data_ptr(), static_cast<size_t>(src.nbytes()));
  return gb::from_blob(p, src.sizes(), PinnedFree{}, TensorOptions().dtype(src.scalar_type()));
}

bool is_pinned(const Tensor& t) {
  return t.defined() && t.storage() && t.storage()->data_ptr.deleter.target<PinnedFree>() != nullptr;
}

PinnedMemoryStats pinned_memory_stats() { return cache().stats(); }

void empty_pinned_cache() { cache().empty(); }

void record_pinned_use(const Tensor& t, int device) {
  if (!is_pinned(t) || !use_cuda()) return;
#ifdef GLASSBOX_WITH_CUDA
  void* stream = gb::cuda::getCurrentCUDAStream(device).stream();
#else
  void* stream = nullptr;
#endif
  cache().record_use(t.storage()->data_ptr.ptr, device, stream);
}

}  // namespace gb::data
