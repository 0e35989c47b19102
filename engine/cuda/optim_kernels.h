// engine/cuda/optim_kernels.h — the optimizers' fused updates on cuda as the optimizers call them (internal; plain
// C++, no CUDA types). engine/cuda/optim.cu defines them; a build without nvcc, engine/core/cuda_fallback.cpp.
#pragma once

#include <cstdint>

namespace gb::cuda_kernels {

// Adam's / AdamW's update (optim/adam_update.h's formulas, each operation rounded to float in the CPU pass's
// order, none fused into a multiply-add: the CPU's bits) of up to kMaxAdamTensors float32 contiguous parameters on
// one device per launch, blockIdx.y the parameter. Per parameter the coefficients as the CPU pass computes them.
constexpr int kMaxAdamTensors = 24;
struct AdamCoefsF {
  float sign = 1, decay = 1, wd = 0, b1 = 0, a1 = 0, b2 = 0, a2 = 0, bc2s = 1, eps = 0, neg_step = 0;
};
struct AdamLaunch {
  int device = 0;
  int count = 0;
  bool amsgrad = false, l2 = false;  // one kernel variant per launch
  float* p[kMaxAdamTensors] = {};
  const float* g[kMaxAdamTensors] = {};
  float* m[kMaxAdamTensors] = {};
  float* v[kMaxAdamTensors] = {};
  float* vm[kMaxAdamTensors] = {};  // amsgrad's running maximum
  int64_t n[kMaxAdamTensors] = {};
  AdamCoefsF k[kMaxAdamTensors] = {};
};
void adam_update(const AdamLaunch& l);

// SGD's update of one float32 contiguous parameter (optim/sgd_update.h's formulas as its cpu pass without
// statistics computes them, the same bits): with buf, d = sign * g + wd * p, buf = momentum * buf + damp1 * d,
// p -= lr * (nest_d * d + nest_buf * buf); without, p -= lr * (sign * g + wd * p).
struct SgdLaunch {
  int device = 0;
  int64_t n = 0;
  float lr = 0, momentum = 0, damp1 = 1, wd = 0, sign = 1, nest_d = 0, nest_buf = 1;
  float* p = nullptr;
  const float* g = nullptr;
  float* buf = nullptr;
};
void sgd_update(const SgdLaunch& l);

}  // namespace gb::cuda_kernels
