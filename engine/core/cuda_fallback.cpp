// engine/core/cuda_fallback.cpp — answers for a build without nvcc: no CUDA, zero devices.
#include "glassbox/core/cuda.h"

#ifndef GLASSBOX_WITH_CUDA
namespace gb::cuda {
bool compiled_with_cuda() { return false; }
int64_t device_count() { return 0; }
bool is_available() { return false; }
std::string unavailable_reason() {
  return "this glassbox was built without CUDA (nvcc was not on the PATH when it was configured, or "
         "-DGLASSBOX_CUDA=OFF): install the CUDA toolkit and build again in a fresh folder";
}
}  // namespace gb::cuda
#endif
