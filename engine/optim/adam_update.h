// engine/optim/adam_update.h — internal: Adam's and AdamW's whole update of a list of float32 CPU parameters in one
// pass (PyTorch's fused=True Adam): each element of p, its gradient and its moments read and written once, the
// list split across the pool as one range (small parameters share a thread instead of one task each), and, when the
// training monitor asks, the statistics of that step from the same pass: the gradient's NaN/Inf/zero counts, sum of
// squares and largest |g|, the update's norm and the parameter's norm after it. What _single_tensor_adam does in
// eight ops and two temporaries (mul_, add_, mul_, addcmul_, sqrt, div, add_, addcdiv_) is one loop here, compiled
// for the baseline, AVX2 and AVX-512 (core/cpu_isa.h) and picked per call.
//
//   g  = maximize ? -grad : grad
//   p  = p * (1 - lr * wd)                    (AdamW: decoupled)     g = g + wd * p   (Adam)
//   m  = beta1 * m + (1 - beta1) * g
//   v  = beta2 * v + (1 - beta2) * g * g
//   vm = max(vm, v)                           (amsgrad; NaN propagates as in gb::maximum)
//   p  = p - lr / (1 - beta1^step) * m / (sqrt(amsgrad ? vm : v) / sqrt(1 - beta2^step) + eps)
//
// Arithmetic is float32 as in the unfused ops, in their order (the last bit may differ: a fused multiply-add).
#pragma once

#include <cstdint>
#include <vector>

#include "glassbox/core/tensor.h"
#include "glassbox/optim/adam.h"
#include "optim/fused_list.h"

namespace gb::optim::detail {

struct AdamCoefs {
  double lr = 0, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool amsgrad = false, maximize = false;
  bool decoupled = false;  // AdamW: weight decay multiplies p; Adam: it is added to the gradient
  double step = 1;         // the step being taken (1 on the first), for the bias corrections
};

// One parameter's operands. max_exp_avg_sq is given exactly when c.amsgrad.
struct AdamTensors {
  Tensor p, grad, exp_avg, exp_avg_sq, max_exp_avg_sq;
  AdamCoefs c;
};

// The statistics of one parameter's fused step (what the monitor's scans would have read).
using AdamStepSums = FusedStepSums;

// True when the fused pass applies: every operand float32, on the cpu (or meta: the same state, nothing computed),
// contiguous, of p's shape; the moments defined (max_exp_avg_sq too under amsgrad). Or every operand on p's cuda
// device, the same way, while no training monitor is active (the device pass measures no statistics): those run
// as cuda/optim.cu's multi-tensor kernel, the same bits as the cpu pass.
bool adam_fusable(const AdamTensors& t);

// Applies every item's update in place and bumps the version counters of what it wrote. `sums`: nullptr, or resized
// to items.size() and filled with each item's statistics. Requires adam_fusable for every item. The split across
// threads never changes a result: the statistics are summed per block of 256 elements, then in block order.
void adam_fused_update(const std::vector<AdamTensors>& items, std::vector<AdamStepSums>* sums);

// Adam's and AdamW's use of the pass. adam_fused_item: when the pass takes p (its state made first, zeros in the
// optimizer_state category), advances st.step and fills `out`; false: the ops' path (detail::adam_update).
// adam_fused_run: the pass over what it took, then each parameter's statistics to the monitor when they are due.
bool adam_fused_item(const Tensor& p, AdamParamState& st, const AdamCoefs& c, AdamTensors& out);
void adam_fused_run(const std::vector<AdamTensors>& items);

}  // namespace gb::optim::detail
