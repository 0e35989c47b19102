// GPU tier for the activations on cuda (cuda/pointwise_ops.h): gelu in both forms (the tanh form had fallen back to
// the erf kernel), gelu's fused backward, leaky_relu, softplus and erf against the cpu, forward and backward.
#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("gpu: gelu (erf and tanh), leaky_relu, softplus and erf on cuda equal the cpu, with gradients") {
  gb::manual_seed(111);
  const gb::Tensor x = gb::randn({64, 33}, gb::kDouble) * 4;
  auto both = [&](const std::function<gb::Tensor(const gb::Tensor&)>& f) {
    gb::Tensor a = x.clone().requires_grad_(true), b = x.to(kGpu).requires_grad_(true);
    gb::Tensor ya = f(a), yb = f(b);
    gbtest::check_close(yb, ya, 1e-12, 1e-12);
    gb::Tensor ga = gb::autograd::grad({(ya * ya).sum()}, {a})[0], gbv = gb::autograd::grad({(yb * yb).sum()}, {b})[0];
    gbtest::check_close(gbv, ga, 1e-10, 1e-12);
  };
  both([](const gb::Tensor& t) { return gb::gelu(t, "none"); });
  both([](const gb::Tensor& t) { return gb::gelu(t, "tanh"); });
  both([](const gb::Tensor& t) { return gb::leaky_relu(t, 0.2); });
  both([](const gb::Tensor& t) { return gb::softplus(t, 2.0, 5.0); });
  both([](const gb::Tensor& t) { return gb::erf(t); });
  // float32 and bfloat16 through the same kernels
  gbtest::check_close(gb::gelu(x.to(gb::kFloat).to(kGpu), "tanh"), gb::gelu(x.to(gb::kFloat), "tanh"), 1e-5, 1e-5);
  gbtest::check_close(gb::gelu(x.to(gb::kBFloat16).to(kGpu)).to(gb::kFloat),
                      gb::gelu(x.to(gb::kBFloat16)).to(gb::kFloat), 2e-2, 2e-2);
}
