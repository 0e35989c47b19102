// engine/memory/cuda_allocator_fallback.cpp — make_cuda_raw_allocator in a build without nvcc: a clear error.
#include "glassbox/core/error.h"
#include "glassbox/memory/raw_allocator.h"

#ifndef GLASSBOX_WITH_CUDA
namespace gb::memory {
std::unique_ptr<RawAllocator> make_cuda_raw_allocator(int index) {
  throw Error(detail::str_cat("cannot allocate on cuda:", index,
                              ": this build of glassbox has no CUDA (configure with -DGLASSBOX_CUDA=ON where nvcc is ",
                              "installed); use gb::kCPU, or gb::kMeta to plan memory without a GPU"));
}
}  // namespace gb::memory
#endif
