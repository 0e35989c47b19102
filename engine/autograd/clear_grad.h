// engine/autograd/clear_grad.h — internal: what Module::zero_grad and Optimizer::zero_grad do to one parameter.
//
// set_to_none drops .grad (PyTorch 2's default); otherwise .grad is zeroed in place, after detaching it when it has
// history (a create_graph backward left one), as PyTorch's zero_grad does.
#pragma once

#include "glassbox/core/tensor.h"

namespace gb::detail {

inline void clear_grad(const Tensor& param, bool set_to_none) {
  if (!param.defined() || !param.grad().defined()) return;
  Tensor& grad = param.unsafe_impl()->meta().grad;
  if (set_to_none) {
    grad = Tensor();
    return;
  }
  if (grad.grad_fn()) grad = grad.detach();
  grad.zero_();
}

}  // namespace gb::detail
