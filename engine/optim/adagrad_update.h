// engine/optim/adagrad_update.h — internal: Adagrad's whole update of a list of float32 CPU parameters in one pass
// (as adam_update.h does Adam's): each element of p, its gradient and its sum of squares read and written once, the
// list split across the pool as one range (optim/fused_list.h), and, when the training monitor asks, the step's
// statistics from the same pass. What _single_tensor_adagrad does in four to six ops and one or two temporaries
// (neg, add, addcmul_, sqrt, add_, addcdiv_) is one loop here, compiled for the baseline, AVX2 and AVX-512
// (core/cpu_isa.h) and picked per call.
//
//   g   = maximize ? -grad : grad;   g = g + wd * p                 (weight_decay)
//   sum = sum + g * g
//   p   = p - clr * g / (sqrt(sum) + eps),   clr = lr / (1 + (step - 1) * lr_decay)
//
// Arithmetic is float32 as in the unfused ops, in their order: the results are the ops' bit for bit.
#pragma once

#include <vector>

#include "glassbox/core/tensor.h"
#include "optim/fused_list.h"

namespace gb::optim::detail {

struct AdagradCoefs {
  double lr = 0.01, lr_decay = 0, weight_decay = 0, eps = 1e-10;
  bool maximize = false;
  double step = 1;  // the step being taken (1 on the first), for the decayed learning rate
};

// One parameter's operands.
struct AdagradTensors {
  Tensor p, grad, sum;
  AdagradCoefs c;
};

// True when the fused pass applies: every operand float32, on the cpu (or meta: the same state, nothing computed) or
// on one cuda device while no training monitor is active (cuda/optim.cu: the same bits, no statistics), contiguous,
// of p's shape.
bool adagrad_fusable(const AdagradTensors& t);

// Applies every item's update in place and bumps the version counters of what it wrote. `sums`: nullptr, or resized
// to items.size() and filled with each item's statistics. Requires adagrad_fusable for every item.
void adagrad_fused_update(const std::vector<AdagradTensors>& items, std::vector<FusedStepSums>* sums);
// Adagrad::step's use of it: the pass as one op span, then each parameter's statistics to the monitor when due.
void adagrad_fused_run(const std::vector<AdagradTensors>& items);

}  // namespace gb::optim::detail
