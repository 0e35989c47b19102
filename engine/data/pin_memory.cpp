// engine/data/pin_memory.cpp — page-locked staging copies: cudaHostAlloc with CUDA, aligned host memory without.
#include "glassbox/data/pin_memory.h"

#include <cstdlib>
#include <cstring>

#include "glassbox/core/cuda.h"
#include "glassbox/ops/factory.h"

#ifdef GLASSBOX_WITH_CUDA
#include <cuda_runtime.h>

#include <cstdio>

#include "cuda/check.h"
#endif

namespace gb::data {
namespace {

// The deleter of a pinned storage; its type is how is_pinned() recognises one.
struct PinnedFree {
  bool cuda = false;
  void operator()(void* p) const {
#ifdef GLASSBOX_WITH_CUDA
    if (cuda) {  // a deleter never throws; a failure (a context in error) leaks the buffer and is cleared
      if (!cuda_kernels::cuda_ok_or_clear(cudaFreeHost(p)))
        std::fprintf(stderr, "glassbox: warning: pin_memory: cudaFreeHost failed; the pinned buffer is leaked\n");
      return;
    }
#endif
    std::free(p);
  }
};

bool use_cuda() {
#ifdef GLASSBOX_WITH_CUDA
  static const bool available = gb::cuda::is_available();
  return available;
#else
  return false;
#endif
}

}  // namespace

bool pinned_memory_is_page_locked() { return use_cuda(); }

Tensor pin_memory(const Tensor& t) {
  GB_CHECK(t.is_cpu(), "pin_memory: cannot pin a tensor on ", t.device(), "; only CPU tensors can be pinned");
  if (is_pinned(t) && t.is_contiguous()) return t;
  Tensor src = t.contiguous();
  size_t nbytes = static_cast<size_t>(std::max<int64_t>(src.nbytes(), 1));
  void* p = nullptr;
  PinnedFree deleter;
#ifdef GLASSBOX_WITH_CUDA
  if (use_cuda()) {
    cudaError_t err = cudaHostAlloc(&p, nbytes, cudaHostAllocDefault);
    (void)cuda_kernels::cuda_ok_or_clear(err);  // not left for the next launch check to report as its own
    GB_CHECK(err == cudaSuccess, "pin_memory: cudaHostAlloc of ", nbytes, " bytes failed (",
             cudaGetErrorString(err), "); pinned memory is limited: lower batch_size or set pin_memory=false");
    deleter.cuda = true;
  }
#endif
  if (!p) {
    p = std::aligned_alloc(64, (nbytes + 63) / 64 * 64);
    GB_CHECK(p, "pin_memory: out of host memory allocating ", nbytes, " bytes");
  }
  std::memcpy(p, src.data_ptr(), static_cast<size_t>(src.nbytes()));
  return gb::from_blob(p, src.sizes(), deleter, TensorOptions().dtype(src.scalar_type()));
}

bool is_pinned(const Tensor& t) {
  return t.defined() && t.storage() && t.storage()->data_ptr.deleter.target<PinnedFree>() != nullptr;
}

}  // namespace gb::data
