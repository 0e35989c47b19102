// glassbox/autograd/gradcheck.h — checks autograd against central finite differences (torch.autograd.gradcheck).
//
//   auto x = gb::randn({3, 4}, gb::TensorOptions().dtype(gb::kFloat64).requires_grad(true));
//   CHECK(gb::autograd::gradcheck([](const gb::variable_list& in) { return gb::variable_list{in[0].tanh()}; }, {x}));
//
// Inputs that require grad must be float64 (finite differences in lower precision are noise). Every output
// element's vector-Jacobian product is compared with (f(x+eps) - f(x-eps)) / 2eps under |a - n| <= atol + rtol*|n|.
// On mismatch it throws (or returns false) with both Jacobians, in PyTorch's wording.
#pragma once

#include <functional>

#include "glassbox/core/tensor.h"

namespace gb::autograd {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
  bool raise_exception = true;
};

using GradcheckFn = std::function<variable_list(const variable_list&)>;

bool gradcheck(const GradcheckFn& fn, const variable_list& inputs, const GradcheckOptions& options = {});
// Checks second derivatives: gradcheck of (inputs, grad_outputs) -> grad(fn(inputs), inputs, grad_outputs,
// create_graph=true), with random grad_outputs.
bool gradgradcheck(const GradcheckFn& fn, const variable_list& inputs, const GradcheckOptions& options = {});

}  // namespace gb::autograd
