// engine/optim/sgd_update.h — internal: SGD's whole update of one float32 CPU parameter in one pass over p, its
// gradient and its momentum buffer (PyTorch's fused SGD), and, when the training monitor asks, the statistics of
// that step from the same pass: the gradient's NaN/Inf/zero counts, sum of squares and largest |g|, the update's
// norm and the parameter's norm after it. What torch.optim.SGD does in three to five ops (add, mul_, add_, add_)
// reads and writes each tensor once here, and the monitor reads nothing again.
//
//   d   = (maximize ? -g : g) + weight_decay * p
//   buf = momentum * buf + (1 - dampening) * d          (no buffer: momentum 0)
//   dp  = nesterov ? d + momentum * buf : buf            (no buffer: d)
//   p   = p - lr * dp
//
// Arithmetic is float32 as in the unfused ops (rounding may differ in the last bit: a fused multiply-add). The first
// step with momentum (the buffer starts as a copy of d) is the caller's: the unfused path.
#pragma once

#include <cstdint>

#include "glassbox/core/tensor.h"
#include "monitor/scan.h"

namespace gb::optim::detail {

struct SgdCoefs {
  double lr = 0, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false;
};

// The statistics of one fused step (what the monitor's scans would have read).
struct SgdStepSums {
  monitor::detail::ScanResult grad;  // of g as it is in .grad
  double update_sumsq = 0;           // sum (lr * dp)^2
  double param_sumsq = 0;            // sum p^2 before the update
};

// True when the fused pass applies: p, g (and buf when given) float32, on the cpu (or meta: the same allocations,
// nothing computed), contiguous, of one shape; or all on p's cuda device the same way while no training monitor is
// active (cuda/optim.cu's kernel: the plain loop's bits; no statistics).
bool sgd_fusable(const Tensor& p, const Tensor& g, const Tensor& buf);

// Applies the update in place (p, and buf when defined) and bumps their version counters. `sums`: nullptr, or
// filled with the step's statistics. Requires sgd_fusable(p, g, buf).
void sgd_update(const Tensor& p, const Tensor& g, const Tensor& buf, const SgdCoefs& c, SgdStepSums* sums);

}  // namespace gb::optim::detail
