// engine/cuda/device.cu — CUDA device discovery. Compiled only when the build found nvcc.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <string>

#include "glassbox/core/cuda.h"

namespace gb::cuda {

bool compiled_with_cuda() { return true; }

int64_t device_count() {
  // Asked once: the devices a process sees are fixed when the runtime starts (CUDA_VISIBLE_DEVICES), and every
  // cuda:N entry asks again (check_device_index).
  static const int64_t n = [] {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      (void)cudaGetLastError();  // no driver / no device: not an error for the caller, just zero devices
      return 0;
    }
    return count;
  }();
  return n;
}

bool is_available() { return device_count() > 0; }

std::string unavailable_reason() {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err == cudaSuccess && n > 0) return "";
  (void)cudaGetLastError();
  // Without a driver the runtime says "CUDA driver version is insufficient": the classic misleading message.
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!driver) driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!driver)
    return "no NVIDIA driver: libcuda.so.1 is not on this machine (the CUDA toolkit does not include it); "
           "`glassbox env` says which driver to install";
  if (err == cudaSuccess || err == cudaErrorNoDevice)
    return "the NVIDIA driver sees no CUDA device (check nvidia-smi and CUDA_VISIBLE_DEVICES); `glassbox env` lists "
           "what it sees";
  return std::string("the CUDA runtime cannot start: ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) +
         "); `glassbox env` compares the driver with the toolkit this glassbox was built with";
}

}  // namespace gb::cuda
