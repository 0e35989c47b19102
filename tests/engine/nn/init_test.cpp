// tests/engine/nn/init_test.cpp — gb::nn::init: gains, fans, each initializer's bounds and statistics over large
// tensors, PyTorch's errors, reproducibility under gb::manual_seed, and no autograd history.
#include <doctest/doctest.h>

#include <cmath>

#include "glassbox/glassbox.h"
#include "support/check.h"

namespace init = gb::nn::init;

namespace {

struct Stats {
  double mean, std, min, max;
};
Stats stats_of(const gb::Tensor& t) {
  auto v = gbtest::values(t);
  double s = 0, s2 = 0, lo = v[0], hi = v[0];
  for (double x : v) s += x, s2 += x * x, lo = std::min(lo, x), hi = std::max(hi, x);
  double m = s / double(v.size());
  return {m, std::sqrt(s2 / double(v.size()) - m * m), lo, hi};
}

}  // namespace

TEST_CASE("calculate_gain: PyTorch's table; unknown nonlinearities are refused") {
  CHECK(init::calculate_gain(gb::kLinear) == 1.0);
  CHECK(init::calculate_gain("conv2d") == 1.0);
  CHECK(init::calculate_gain(gb::kSigmoid) == 1.0);
  CHECK(init::calculate_gain(gb::kTanh) == doctest::Approx(5.0 / 3));
  CHECK(init::calculate_gain(gb::kReLU) == doctest::Approx(std::sqrt(2.0)));
  CHECK(init::calculate_gain(gb::kLeakyReLU) == doctest::Approx(std::sqrt(2.0 / (1 + 0.0001))));
  CHECK(init::calculate_gain("leaky_relu", std::sqrt(5.0)) == doctest::Approx(std::sqrt(2.0 / 6)));
  CHECK(init::calculate_gain(gb::kSELU) == 0.75);
  CHECK_THROWS_WITH_AS(init::calculate_gain("swish"), doctest::Contains("Unsupported nonlinearity swish"), gb::Error);
}

TEST_CASE("calculate_fan_in_and_fan_out: receptive field times channels; fewer than 2 dims is an error") {
  auto [fi, fo] = init::calculate_fan_in_and_fan_out(gb::empty({8, 4, 3, 3}));
  CHECK(fi == 36);
  CHECK(fo == 72);
  auto [li, lo] = init::_calculate_fan_in_and_fan_out(gb::empty({5, 7}));
  CHECK(li == 7);
  CHECK(lo == 5);
  CHECK_THROWS_WITH_AS(
      init::calculate_fan_in_and_fan_out(gb::empty({5})),
      doctest::Contains("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"), gb::Error);
  CHECK_THROWS_WITH_AS(init::kaiming_uniform_(gb::empty({5})), doctest::Contains("fewer than 2 dimensions"), gb::Error);
  CHECK_THROWS_WITH_AS(init::kaiming_uniform_(gb::empty({5, 5}), 0, "fan_avg"),
                       doctest::Contains("Mode fan_avg not supported"), gb::Error);
}

TEST_CASE("kaiming_uniform_ and kaiming_normal_: bounds and std from gain / sqrt(fan)") {
  gb::manual_seed(1);
  gb::Tensor w = gb::empty({800, 500});
  init::kaiming_uniform_(w, 0, gb::kFanIn, gb::kReLU);
  const double bound = std::sqrt(2.0) * std::sqrt(3.0 / 500);
  Stats s = stats_of(w);
  CHECK(s.max <= bound);
  CHECK(s.min >= -bound);
  CHECK(s.max > 0.99 * bound);  // 400k draws reach the edges
  CHECK(s.std == doctest::Approx(bound / std::sqrt(3.0)).epsilon(0.01));
  CHECK(std::fabs(s.mean) < 0.01 * bound);

  init::kaiming_normal_(w, 0, "fan_out", "relu");
  s = stats_of(w);
  CHECK(s.std == doctest::Approx(std::sqrt(2.0 / 800)).epsilon(0.01));
  CHECK(std::fabs(s.mean) < 0.01 * s.std);

  // the default: leaky_relu with a = 0 -> gain sqrt(2), fan_in
  init::kaiming_normal_(w);
  CHECK(stats_of(w).std == doctest::Approx(std::sqrt(2.0 / 500)).epsilon(0.01));
  // a zero-element tensor is left alone (PyTorch warns and returns)
  gb::Tensor empty = gb::empty({0, 3});
  CHECK(init::kaiming_uniform_(empty).numel() == 0);
}

TEST_CASE("xavier_uniform_ and xavier_normal_: gain * sqrt(2 / (fan_in + fan_out))") {
  gb::manual_seed(2);
  gb::Tensor w = gb::empty({300, 700});
  init::xavier_uniform_(w, 2.0);
  const double std = 2.0 * std::sqrt(2.0 / 1000), a = std::sqrt(3.0) * std;
  Stats s = stats_of(w);
  CHECK(s.max <= a);
  CHECK(s.min >= -a);
  CHECK(s.std == doctest::Approx(std).epsilon(0.01));
  init::xavier_normal_(w);
  CHECK(stats_of(w).std == doctest::Approx(std::sqrt(2.0 / 1000)).epsilon(0.01));
}

TEST_CASE("uniform_, normal_, constant_, ones_, zeros_, eye_") {
  gb::manual_seed(3);
  gb::Tensor t = gb::empty({200, 500});
  init::uniform_(t, -3, 5);
  Stats s = stats_of(t);
  CHECK(s.min >= -3);
  CHECK(s.max < 5);
  CHECK(s.mean == doctest::Approx(1.0).epsilon(0.02));
  init::normal_(t, 2, 0.5);
  s = stats_of(t);
  CHECK(s.mean == doctest::Approx(2.0).epsilon(0.01));
  CHECK(s.std == doctest::Approx(0.5).epsilon(0.01));
  gb::Tensor small = gb::empty({2, 3});
  gbtest::expect(init::constant_(small, 1.5), {1.5, 1.5, 1.5, 1.5, 1.5, 1.5});
  gbtest::expect(init::ones_(small), {1, 1, 1, 1, 1, 1});
  gbtest::expect(init::zeros_(small), {0, 0, 0, 0, 0, 0});
  gbtest::expect(init::eye_(small), {1, 0, 0, 0, 1, 0});
  CHECK_THROWS_WITH_AS(init::eye_(gb::empty({2, 2, 2})),
                       doctest::Contains("Only tensors with 2 dimensions are supported"), gb::Error);
}

TEST_CASE("trunc_normal_: inside [a, b] with the truncated normal's moments and CDF") {
  gb::manual_seed(4);
  gb::Tensor t = gb::empty({400, 500});
  init::trunc_normal_(t);  // N(0, 1) on [-2, 2]
  Stats s = stats_of(t);
  CHECK(s.min >= -2);
  CHECK(s.max <= 2);
  // variance of N(0,1) truncated to [-2, 2]: 1 - 2*2*phi(2) / (Phi(2) - Phi(-2)) = 0.77374
  CHECK(s.std == doctest::Approx(std::sqrt(0.773741)).epsilon(0.005));
  CHECK(std::fabs(s.mean) < 0.005);
  // P(x < 1) = (Phi(1) - Phi(-2)) / (Phi(2) - Phi(-2)) = 0.857615
  double below = (t < 1.0).to(gb::kFloat64).mean().item<double>();
  CHECK(below == doctest::Approx(0.857615).epsilon(0.005));

  init::trunc_normal_(t, 1.0, 0.5, 0.0, 1.25);  // asymmetric window
  s = stats_of(t);
  CHECK(s.min >= 0.0);
  CHECK(s.max <= 1.25);
  CHECK(s.max > 1.24);
  CHECK_THROWS_AS(init::trunc_normal_(t, 0, 1, 2, 1), gb::Error);
}

TEST_CASE("initializers are reproducible under manual_seed and record no autograd history") {
  gb::Tensor w = gb::empty({4, 5}).requires_grad_();
  gb::manual_seed(7);
  init::kaiming_uniform_(w, std::sqrt(5.0));
  gb::Tensor first = w.detach().clone();
  gb::manual_seed(7);
  init::kaiming_uniform_(w, std::sqrt(5.0));
  CHECK(gb::equal(first, w.detach()));
  CHECK(w.is_leaf());
  CHECK(w.requires_grad());
  CHECK(w.grad_fn() == nullptr);
  gb::manual_seed(7);
  init::trunc_normal_(w);
  gb::Tensor tn = w.detach().clone();
  gb::manual_seed(7);
  init::trunc_normal_(w);
  CHECK(gb::equal(tn, w.detach()));
  CHECK(w.grad_fn() == nullptr);
}
