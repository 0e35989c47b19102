// engine/cuda/cumsum_kernels.h — cumsum on cuda (internal; plain C++, no CUDA types; engine/cuda/cumsum.cu defines
// it, a build without nvcc engine/core/cuda_fallback.cpp).
#pragma once

#include <cstdint>

#include "glassbox/core/dtype.h"

namespace gb::cuda_kernels {

// dst = running sums of src along the middle dim of (outer, n, inner), both contiguous and of `dtype` (any numeric
// dtype): one thread per line (o, j), accumulating in float64 (int64 for integers) in order, as the cpu's loop: the
// same bits.
struct CumsumLaunch {
  int device = 0;
  ScalarType dtype = ScalarType::Float;
  int64_t outer = 1, n = 1, inner = 1;
  const void* src = nullptr;
  void* dst = nullptr;
};
void cumsum(const CumsumLaunch& l);

}  // namespace gb::cuda_kernels
