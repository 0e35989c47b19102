// tests/engine/nn/normalization_test.cpp — LayerNorm and GroupNorm: init, values, options, errors, repr, gradcheck.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "glassbox/glassbox.h"
#include "support/check.h"
#include "support/repr.h"
#include "support/module_scope.h"

using gbtest::repr;

TEST_CASE("LayerNorm normalizes the trailing dims; affine starts at ones/zeros") {
  gb::nn::LayerNorm ln(gb::nn::LayerNormOptions({4}));
  gbtest::expect(ln->weight, {1, 1, 1, 1});
  gbtest::expect(ln->bias, {0, 0, 0, 0});
  gb::Tensor x = gb::tensor({{1.0, 2.0, 3.0, 4.0}, {2.0, 2.0, 2.0, 6.0}}).to(gb::kFloat);
  // row 0: mean 2.5, var 1.25; row 1: mean 3, var 3
  const double a = std::sqrt(1.25 + 1e-5), b = std::sqrt(3 + 1e-5);
  gbtest::expect(ln(x), {-1.5 / a, -0.5 / a, 0.5 / a, 1.5 / a, -1 / b, -1 / b, -1 / b, 3 / b}, 1e-5, 1e-5);

  gb::nn::LayerNorm ln2(gb::nn::LayerNormOptions({3, 4}).eps(1e-3).elementwise_affine(false));
  CHECK(ln2->parameters().empty());
  gb::Tensor y = ln2(gb::randn({2, 3, 4}) * 4 + 1);
  gbtest::expect(y.mean({1, 2}), {0, 0}, 1e-5, 1e-5);
  CHECK(repr(*ln) == "LayerNorm([4], eps=1e-05, elementwise_affine=true)");
  CHECK(repr(*ln2) == "LayerNorm([3, 4], eps=0.001, elementwise_affine=false)");
  CHECK_THROWS_AS(ln(gb::randn({2, 5})), gb::Error);
}

TEST_CASE("GroupNorm normalizes each group of channels per sample") {
  gb::nn::GroupNorm gn(2, 4);
  CHECK(gn->weight.sizes() == gb::IntArrayRef({4}));
  gbtest::expect(gn->weight, {1, 1, 1, 1});
  gb::manual_seed(2);
  gb::Tensor x = gb::randn({3, 4, 5}) * 2 + 3;
  gb::Tensor y = gn(x).view({3, 2, 10});
  gbtest::expect(y.mean({2}), {0, 0, 0, 0, 0, 0}, 1e-5, 1e-5);
  gbtest::expect(y.var({2}, false), {1, 1, 1, 1, 1, 1}, 1e-3, 1e-3);
  CHECK_THROWS_WITH_AS(gb::nn::GroupNorm(3, 4), doctest::Contains("num_channels must be divisible by num_groups"),
                       gb::Error);
  CHECK(repr(*gn) == "GroupNorm(2, 4, eps=1e-05, affine=true)");
  gb::nn::GroupNorm plain(gb::nn::GroupNormOptions(1, 4).affine(false).eps(0.1));
  CHECK(plain->parameters().empty());
  CHECK(repr(*plain) == "GroupNorm(1, 4, eps=0.1, affine=false)");
}

TEST_CASE("LayerNorm and GroupNorm gradients pass gradcheck in double") {
  gb::manual_seed(12);
  gb::nn::LayerNorm ln(gb::nn::LayerNormOptions({3}));
  ln->to(gb::kFloat64);
  {
    gb::NoGradGuard g;
    ln->weight.copy_(gb::tensor({1.5, -0.5, 2.0}, gb::kFloat64));
    ln->bias.copy_(gb::tensor({0.1, 0.2, 0.3}, gb::kFloat64));
  }
  gb::Tensor x = gb::randn({2, 3}, gbtest::f64_grad());
  CHECK(gb::autograd::gradcheck([&](const gb::variable_list& in) { return gb::variable_list{ln->forward(in[0])}; },
                                {x, ln->weight, ln->bias}));
  gb::nn::GroupNorm gn(2, 4);
  gn->to(gb::kFloat64);
  {
    gb::NoGradGuard g;
    gn->weight.copy_(gb::tensor({1.5, -0.5, 2.0, 0.7}, gb::kFloat64));
  }
  gb::Tensor z = gb::randn({2, 4, 3}, gbtest::f64_grad());
  CHECK(gb::autograd::gradcheck([&](const gb::variable_list& in) { return gb::variable_list{gn->forward(in[0])}; },
                                {z, gn->weight, gn->bias}));
}

TEST_CASE("LayerNorm's and GroupNorm's raw forwards attribute their allocations to the module") {
  gb::nn::LayerNorm ln(gb::nn::LayerNormOptions({4}));
  gb::nn::GroupNorm gn(2, 4);
  gb::Tensor x = gb::randn({2, 4, 4});
  CHECK(gbtest::allocation_modules([&] { ln->forward(x); }) == std::set<std::string>{"LayerNorm"});
  CHECK(gbtest::allocation_modules([&] { gn->forward(x); }) == std::set<std::string>{"GroupNorm"});
}
