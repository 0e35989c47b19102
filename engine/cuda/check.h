// engine/cuda/check.h — every CUDA runtime and cuBLAS call is checked: GB_CUDA_CHECK(cudaMemcpyAsync(...)) throws
// gb::Error naming the call, its site and CUDA's own message (internal; .cu files, and host code of a CUDA build that
// includes cuda_runtime.h). A call whose failure its caller cannot act on (a destructor, a deleter, a cleanup) goes
// through cuda_ok_or_clear instead, never dropped: a failed runtime call stays the thread's last error, which the next
// launch check (GB_CUDA_CHECK(cudaGetLastError())) would report as its own failure. DeviceGuard makes a device
// current for a scope and restores the previous one; its std::nothrow form is the one for destructors.
#pragma once

#include <cuda_runtime.h>

#include <new>

#include "glassbox/core/error.h"

namespace gb::cuda_kernels {

inline void check_cuda(cudaError_t err, const char* call, const char* file, int line) {
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a sticky-free error so the next call does not report it again
  throw Error(detail::str_cat(call, " failed at ", file, ":", line, ": ", cudaGetErrorName(err), " (",
                              cudaGetErrorString(err), ")"));
}

// True when `err` is cudaSuccess; otherwise clears it from the thread's last error (a sticky error, which a context
// keeps for good, is left as it is: every later call reports it anyway) and returns false. Never throws.
inline bool cuda_ok_or_clear(cudaError_t err) noexcept {
  if (err == cudaSuccess) return true;
  (void)cudaGetLastError();
  return false;
}

class DeviceGuard {
 public:
  explicit DeviceGuard(int index) {
    check_cuda(cudaGetDevice(&prev_), "cudaGetDevice", __FILE__, __LINE__);
    if (prev_ != index) check_cuda(cudaSetDevice(index), "cudaSetDevice", __FILE__, __LINE__);
    restore_ = true;
  }
  // For destructors and cleanup: never throws; when the device cannot be switched (a context in error) the caller's
  // calls run on the current device, and fail there as they would have anyway.
  DeviceGuard(int index, std::nothrow_t) noexcept {
    restore_ = cuda_ok_or_clear(cudaGetDevice(&prev_));
    if (restore_ && prev_ != index) (void)cuda_ok_or_clear(cudaSetDevice(index));
  }
  ~DeviceGuard() {
    if (restore_) (void)cuda_ok_or_clear(cudaSetDevice(prev_));
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_ = 0;
  bool restore_ = false;
};

// The calling thread's current stream on `device` (glassbox/core/cuda_stream.h), as the runtime's handle.
cudaStream_t current_stream(int device);

}  // namespace gb::cuda_kernels

#define GB_CUDA_CHECK(expr) ::gb::cuda_kernels::check_cuda((expr), #expr, __FILE__, __LINE__)
