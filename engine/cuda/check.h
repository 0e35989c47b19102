// engine/cuda/check.h — every CUDA runtime and cuBLAS call is checked: GB_CUDA_CHECK(cudaMemcpyAsync(...)) throws
// gb::Error naming the call, its site and CUDA's own message (internal; .cu files only). DeviceGuard makes a device
// current for a scope and restores the previous one.
#pragma once

#include <cuda_runtime.h>

#include "glassbox/core/error.h"

namespace gb::cuda_kernels {

inline void check_cuda(cudaError_t err, const char* call, const char* file, int line) {
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a sticky-free error so the next call does not report it again
  throw Error(detail::str_cat(call, " failed at ", file, ":", line, ": ", cudaGetErrorName(err), " (",
                              cudaGetErrorString(err), ")"));
}

class DeviceGuard {
 public:
  explicit DeviceGuard(int index) {
    check_cuda(cudaGetDevice(&prev_), "cudaGetDevice", __FILE__, __LINE__);
    if (prev_ != index) check_cuda(cudaSetDevice(index), "cudaSetDevice", __FILE__, __LINE__);
  }
  ~DeviceGuard() { (void)cudaSetDevice(prev_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_ = 0;
};

// The calling thread's current stream on `device` (glassbox/core/cuda_stream.h), as the runtime's handle.
cudaStream_t current_stream(int device);

}  // namespace gb::cuda_kernels

#define GB_CUDA_CHECK(expr) ::gb::cuda_kernels::check_cuda((expr), #expr, __FILE__, __LINE__)
