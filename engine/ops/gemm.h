// engine/ops/gemm.h — the matrix product ops/linalg.cpp runs, for other op families that multiply inside one op
// (internal): no op span, no autograd node, the same backends (OpenBLAS, libxsmm's small and blocked kernels, cuBLAS
// on cuda) chosen the same way as for mm.
#pragma once

#include "glassbox/core/tensor.h"

namespace gb::detail {

// out = alpha * a @ b + beta * out: out (N, M) contiguous, a (N, K) and b (K, M) of out's dtype with any strides (a
// transposed view is read transposed, not copied), or all three batched (B, ., .). beta == 0 ignores out's contents.
// Nothing is computed on meta.
void gemm_into(const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta);

}  // namespace gb::detail
