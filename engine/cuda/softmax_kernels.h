// engine/cuda/softmax_kernels.h — softmax and log_softmax over the last dim on cuda, forward and backward, one
// kernel each (internal; plain C++, no CUDA types; engine/cuda/softmax.cu defines them, a build without nvcc
// engine/core/cuda_fallback.cpp). Rows are contiguous; arithmetic in float for the 16-bit dtypes, else the dtype.
#pragma once

#include <cstdint>

#include "glassbox/core/dtype.h"

namespace gb::cuda_kernels {

struct SoftmaxLaunch {
  int device = 0;
  ScalarType dtype = ScalarType::Float;
  int64_t rows = 0, len = 0;
  bool log = false;
  const char* in = nullptr;       // forward: x; backward: the gradient of the output
  const char* out_fwd = nullptr;  // backward: the forward's output y
  char* out = nullptr;            // forward: y; backward: the gradient of x
  // log backward only, or null: `in` holds one gradient per row, row r's entry at column onehot_target[r] and zero
  // elsewhere (cross_entropy's compact form, ops/log_softmax_onehot.h); a column outside the row matches nothing
  const int64_t* onehot_target = nullptr;
};
// y = softmax(x) (log: x - max - log(sum(exp(x - max)))) per row; a NaN in a row makes the row NaN, as on the CPU.
void softmax_forward(const SoftmaxLaunch& l);
// dx = y * (g - sum(g * y)) (log: g - exp(y) * sum(g)) per row; with onehot_target, g is that row's one entry
// (the same operations on the same values as the dense g, so the same bits).
void softmax_backward(const SoftmaxLaunch& l);

}  // namespace gb::cuda_kernels
