// engine/cuda/device.cu — CUDA device discovery. Compiled only when the build found nvcc.
#include <cuda_runtime.h>

#include "glassbox/core/cuda.h"

namespace gb::cuda {

bool compiled_with_cuda() { return true; }

int64_t device_count() {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // no driver / no device: not an error for the caller, just zero devices
    return 0;
  }
  return n;
}

bool is_available() { return device_count() > 0; }

}  // namespace gb::cuda
