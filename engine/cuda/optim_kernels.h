// engine/cuda/optim_kernels.h — the optimizers' fused updates on cuda (Adam/AdamW, SGD, RMSprop, Adagrad) as the
// optimizers call them (internal; plain
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

// RMSprop's update (optim/rmsprop_update.h's formulas, the cpu pass's order and roundings: its bits) of up to
// kMaxRmspropTensors float32 contiguous parameters on one device per launch, blockIdx.y the parameter; one kernel
// variant (weight decay, centered, momentum) per launch.
constexpr int kMaxRmspropTensors = 24;
struct RmspropCoefsF {
  float sign = 1, wd = 0, alpha = 0, a1 = 0, eps = 0, momentum = 0, neg_lr = 0;
};
struct RmspropLaunch {
  int device = 0;
  int count = 0;
  bool wd = false, centered = false, momentum = false;
  float* p[kMaxRmspropTensors] = {};
  const float* g[kMaxRmspropTensors] = {};
  float* sq[kMaxRmspropTensors] = {};
  float* ga[kMaxRmspropTensors] = {};   // centered
  float* buf[kMaxRmspropTensors] = {};  // momentum
  int64_t n[kMaxRmspropTensors] = {};
  RmspropCoefsF k[kMaxRmspropTensors] = {};
};
void rmsprop_update(const RmspropLaunch& l);

// Adagrad's update (optim/adagrad_update.h's formulas, the cpu pass's bits) of up to kMaxAdagradTensors float32
// contiguous parameters on one device per launch; weight decay or not per launch.
constexpr int kMaxAdagradTensors = 32;
struct AdagradCoefsF {
  float sign = 1, wd = 0, eps = 0, neg_clr = 0;
};
struct AdagradLaunch {
  int device = 0;
  int count = 0;
  bool wd = false;
  float* p[kMaxAdagradTensors] = {};
  const float* g[kMaxAdagradTensors] = {};
  float* sum[kMaxAdagradTensors] = {};
  int64_t n[kMaxAdagradTensors] = {};
  AdagradCoefsF k[kMaxAdagradTensors] = {};
};
void adagrad_update(const AdagradLaunch& l);

}  // namespace gb::cuda_kernels
