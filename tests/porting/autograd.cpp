// tests/porting/autograd.cpp — libtorch's autograd, spelled as libtorch's autograd tutorial spells it (torch::,
// torch::autograd::Function with AutogradContext, torch::autograd::grad, NoGradGuard, tensor_list). Never compiled
// as it stands: the build renames a copy with tools/port.sh, compiles it against glassbox and runs it; it fails
// (TORCH_CHECK) on any wrong gradient.
#include <torch/torch.h>

#include <iostream>

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

namespace {

// y = x W^T + b, with its backward written by hand.
struct LinearFunction : public torch::autograd::Function<LinearFunction> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor input, torch::Tensor weight, torch::Tensor bias) {
    ctx->save_for_backward({input, weight, bias});
    return input.mm(weight.t()) + bias;
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    const torch::Tensor& input = saved[0];
    const torch::Tensor& weight = saved[1];
    const torch::Tensor& grad = grad_outputs[0];
    return {grad.mm(weight), grad.t().mm(input), grad.sum(0)};
  }
};

// y = x * constant: a non-tensor argument kept in saved_data, no gradient for it.
struct MulConstant : public torch::autograd::Function<MulConstant> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x, double constant) {
    ctx->saved_data["constant"] = constant;
    return x * constant;
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    return {grad_outputs[0] * ctx->saved_data["constant"].toDouble(), torch::Tensor()};
  }
};

bool close(const torch::Tensor& a, const torch::Tensor& b) { return torch::allclose(a, b, 1e-6, 1e-6); }

}  // namespace

int main() {
  torch::manual_seed(0);
  // Basic: y = sum(x * x + 2x), dy/dx = 2x + 2.
  torch::Tensor x = torch::randn({3, 4}, torch::dtype(torch::kFloat64).requires_grad(true));
  torch::Tensor y = (x * x + 2 * x).sum();
  y.backward();
  TORCH_CHECK(close(x.grad(), 2 * x.detach() + 2), "d/dx sum(x^2 + 2x) is wrong");

  // Gradients accumulate; zero_() on the const grad() clears them, as in libtorch.
  y = (x * 3).sum();
  y.backward();
  TORCH_CHECK(close(x.grad(), 2 * x.detach() + 5), "accumulated gradient is wrong");
  x.grad().zero_();
  TORCH_CHECK(x.grad().abs().sum().item().toDouble() == 0, "zero_ did not clear the gradient");

  // No graph under NoGradGuard.
  {
    torch::NoGradGuard no_grad;
    TORCH_CHECK(!(x * 2).requires_grad(), "NoGradGuard still recorded a graph");
  }

  // Higher order: d/dx of (dy/dx . v) with create_graph.
  torch::Tensor a = torch::tensor({1.0, 2.0, 3.0}, torch::dtype(torch::kFloat64).requires_grad(true));
  torch::Tensor cube = (a * a * a).sum();
  tensor_list first = torch::autograd::grad({cube}, {a}, /*grad_outputs=*/{}, /*retain_graph=*/true,
                                            /*create_graph=*/true);
  TORCH_CHECK(close(first[0], 3 * a.detach() * a.detach()), "first derivative of a^3 is wrong");
  tensor_list second = torch::autograd::grad({first[0].sum()}, {a});
  TORCH_CHECK(close(second[0], 6 * a.detach()), "second derivative of a^3 is wrong");

  // Custom functions against autograd's own gradients.
  torch::Tensor in = torch::randn({5, 3}, torch::dtype(torch::kFloat64).requires_grad(true));
  torch::Tensor w = torch::randn({2, 3}, torch::dtype(torch::kFloat64).requires_grad(true));
  torch::Tensor b = torch::randn({2}, torch::dtype(torch::kFloat64).requires_grad(true));
  LinearFunction::apply(in, w, b).pow(2).sum().backward();
  const torch::Tensor gi = in.grad().clone(), gw = w.grad().clone(), gb_ = b.grad().clone();
  for (auto* t : {&in, &w, &b}) t->grad().zero_();
  (in.mm(w.t()) + b).pow(2).sum().backward();
  TORCH_CHECK(close(gi, in.grad()) && close(gw, w.grad()) && close(gb_, b.grad()), "LinearFunction's backward differs");

  torch::Tensor m = torch::randn({4}, torch::dtype(torch::kFloat64).requires_grad(true));
  MulConstant::apply(m, 5.5).sum().backward();
  TORCH_CHECK(close(m.grad(), torch::full({4}, 5.5, torch::kFloat64)), "MulConstant's backward is wrong");

  std::cout << "autograd: basic, accumulation, no_grad, second order and custom functions agree\n";
  return 0;
}
