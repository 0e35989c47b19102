// glassbox/nn/utils/clip_grad.h — gradient clipping (torch.nn.utils.clip_grad_norm_ / clip_grad_value_, 1.13).
//
//   loss.backward();
//   gb::Tensor norm = gb::nn::utils::clip_grad_norm_(net->parameters(), /*max_norm=*/1.0);
//   opt.step();
//
// clip_grad_norm_ takes the norm of all gradients together (the norm of the per-parameter norms; the largest |g|
// for norm_type = inf), scales every gradient in place by min(1, max_norm / (total + 1e-6)), and returns the
// total norm before clipping as a 0-dim tensor (0. when no parameter has a gradient). Parameters without .grad are
// skipped. With error_if_nonfinite a NaN/inf total is PyTorch's error instead of a scaling by it.
// clip_grad_value_ clamps every gradient to [-clip_value, clip_value] in place.
#pragma once

#include <vector>

#include "glassbox/core/tensor.h"

namespace gb::nn::utils {

Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
Tensor clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);
void clip_grad_value_(const Tensor& parameter, double clip_value);

}  // namespace gb::nn::utils
