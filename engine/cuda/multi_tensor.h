// engine/cuda/multi_tensor.h — the grid of a multi-tensor launch (internal; .cu files): blockIdx.y the tensor,
// blockIdx.x enough blocks of `threads` for the longest tensor (at most 1024, the rest by grid-stride loops).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gb::cuda_kernels {

inline dim3 multi_tensor_grid(const int64_t* numel, int count, int threads) {
  int64_t longest = 0;
  for (int i = 0; i < count; ++i) longest = numel[i] > longest ? numel[i] : longest;
  const int64_t want = (longest + threads - 1) / threads;
  return dim3(unsigned(want < 1 ? 1 : want > 1024 ? 1024 : want), unsigned(count));
}

}  // namespace gb::cuda_kernels
