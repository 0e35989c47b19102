// engine/core/cuda_fallback.cpp — answers for a build without nvcc: no CUDA, zero devices.
#include "glassbox/core/cuda.h"

#ifndef GLASSBOX_WITH_CUDA
namespace gb::cuda {
bool compiled_with_cuda() { return false; }
int64_t device_count() { return 0; }
bool is_available() { return false; }
}  // namespace gb::cuda
#endif
