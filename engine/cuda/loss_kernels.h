// engine/cuda/loss_kernels.h — nll_loss's kernels on cuda, forward and backward (internal; plain C++, no CUDA types;
// engine/cuda/loss.cu defines them, a build without nvcc engine/core/cuda_fallback.cpp). cross_entropy is
// log_softmax (cuda/softmax.cu) and these, as PyTorch composes it.
//
// The input is seen as (B, C, S): B the batch, C the classes, S the positions per sample (1 for 1-D and 2-D input);
// the target holds one class per (b, s), n = B * S of them. A target outside [0, C) that is not ignore_index goes to
// the device's error record (cuda/device_error.h: raised at the next synchronization) and counts as ignored.
#pragma once

#include <cstdint>

#include "glassbox/core/dtype.h"

namespace gb::cuda_kernels {

struct NllLaunch {
  int device = 0;
  ScalarType dtype = ScalarType::Float;  // of x, weight, loss, g, gx: float32 or float64
  int64_t B = 1, C = 1, S = 1;
  int64_t ignore_index = -100;
  // the op a bad target is reported for: a host string's address, set on the host (a literal written in device code
  // would be a device address the host cannot read)
  const char* op = "nll_loss";
  const int64_t* target = nullptr;  // n, contiguous
  const void* weight = nullptr;     // C class weights, or null (all 1)
  // forward
  const void* x = nullptr;  // (B, C, S) contiguous
  void* loss = nullptr;     // n: -w_t * x[b, t, s], 0 where ignored
  void* w_out = nullptr;    // n: w_t, 0 where ignored (their sum divides the mean)
  // backward
  const void* g = nullptr;  // n gradients, or one (g_scalar: a reduced loss's)
  bool g_scalar = false;
  const void* divisor = nullptr;  // a 0-dim divisor of g (the mean's total weight), or null
  void* gx = nullptr;             // (B, C, S) contiguous, zero: gx[b, t, s] = -w_t * g / divisor
  bool compact = false;           // gx is n values instead, zero: gx[i] (ops/log_softmax_onehot.h)
};
void nll_forward(const NllLaunch& l);
void nll_backward(const NllLaunch& l);

}  // namespace gb::cuda_kernels
