// glassbox/core/cuda.h — whether this build and this machine can run CUDA (torch::cuda::is_available).
//
// A build with nvcc compiles the CUDA sources; the machine still needs a driver and a device. Both questions are
// answered without throwing, so code and tests can branch: if (gb::cuda::is_available()) { ... }.
#pragma once

#include <cstdint>
#include <string>

namespace gb::cuda {

bool compiled_with_cuda();   // built with nvcc (GLASSBOX_CUDA=ON and nvcc found)
int64_t device_count();      // 0 without a driver or device, or in a CPU-only build
bool is_available();         // device_count() > 0
// Why is_available() is false, in one line naming the missing piece ("no NVIDIA driver: libcuda.so.1 is not on this
// machine ..."); empty when it is true. `glassbox env` gives the whole picture (driver, libraries, GPUs).
std::string unavailable_reason();

}  // namespace gb::cuda
