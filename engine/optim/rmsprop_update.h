// engine/optim/rmsprop_update.h — internal: RMSprop's whole update of a list of float32 CPU parameters in one pass
// (as adam_update.h does Adam's): each element of p, its gradient, its square average (and its gradient average when
// centered, its momentum buffer with momentum) read and written once, the list split across the pool as one range,
// and, when the training monitor asks, the step's statistics from the same pass. What _single_tensor_rmsprop does in
// six to nine ops and two temporaries (mul_, addcmul_, sqrt, add_, addcdiv_; mul_, add_, addcmul for centered;
// mul_, addcdiv_, add_ with momentum) is one loop here, compiled for the baseline, AVX2 and AVX-512
// (core/cpu_isa.h) and picked per call.
//
//   g   = maximize ? -grad : grad;   g = g + wd * p                 (weight_decay)
//   sq  = alpha * sq + (1 - alpha) * g * g
//   ga  = alpha * ga + (1 - alpha) * g;   avg = sqrt(sq - ga * ga)  (centered; else avg = sqrt(sq))
//   avg = avg + eps
//   buf = momentum * buf + g / avg;   p = p - lr * buf             (momentum > 0; else p = p - lr * g / avg)
//
// Arithmetic is float32 as in the unfused ops, in their order: the results are the ops' bit for bit.
#pragma once

#include <cstdint>
#include <vector>

#include "glassbox/core/tensor.h"
#include "glassbox/optim/rmsprop.h"
#include "optim/fused_list.h"

namespace gb::optim::detail {

struct RmspropCoefs {
  double lr = 0.01, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0;
  bool centered = false, maximize = false;
};

// One parameter's operands: grad_avg defined exactly when c.centered, momentum_buffer when c.momentum > 0.
struct RmspropTensors {
  Tensor p, grad, square_avg, grad_avg, momentum_buffer;
  RmspropCoefs c;
};

// True when the fused pass applies: every operand float32, on the cpu (or meta: the same state, nothing computed) or
// on one cuda device while no training monitor is active (cuda/optim.cu: the same bits, no statistics), contiguous,
// of p's shape, the state the options need defined.
bool rmsprop_fusable(const RmspropTensors& t);

// The statistics of one parameter's fused step (what the monitor's scans would have read).
using RmspropStepSums = FusedStepSums;

// Applies every item's update in place and bumps the version counters of what it wrote. `sums`: nullptr, or resized
// to items.size() and filled with each item's statistics. Requires rmsprop_fusable for every item.
void rmsprop_fused_update(const std::vector<RmspropTensors>& items, std::vector<RmspropStepSums>* sums);
// RMSprop::step's use of it: the pass as one op span, then each parameter's statistics to the monitor when due.
void rmsprop_fused_run(const std::vector<RmspropTensors>& items);

}  // namespace gb::optim::detail
