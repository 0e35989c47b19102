// tests/engine/nn/linear_test.cpp — Linear (default init statistics, values by hand, options, names, repr) and
// Identity.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "glassbox/glassbox.h"
#include "support/check.h"
#include "support/repr.h"
#include "support/module_scope.h"

using gbtest::repr;

TEST_CASE("Linear's default init: weight and bias in U(-1/sqrt(in), 1/sqrt(in))") {
  gb::manual_seed(0);
  gb::nn::Linear fc(400, 1000);
  const double bound = 1.0 / std::sqrt(400.0);
  auto w = gbtest::values(fc->weight);
  double lo = 1, hi = -1, s = 0, s2 = 0;
  for (double x : w) lo = std::min(lo, x), hi = std::max(hi, x), s += x, s2 += x * x;
  const double n = double(w.size()), mean = s / n, std = std::sqrt(s2 / n - mean * mean);
  CHECK(lo >= -bound);
  CHECK(hi <= bound);
  CHECK(hi > 0.99 * bound);
  CHECK(std == doctest::Approx(bound / std::sqrt(3.0)).epsilon(0.01));  // uniform's std, within 1%
  CHECK(std::fabs(mean) < 0.01 * bound);
  auto b = gbtest::values(fc->bias);
  for (double x : b) CHECK(std::fabs(x) <= bound);
  CHECK(gbtest::values(fc->bias.std()).at(0) == doctest::Approx(bound / std::sqrt(3.0)).epsilon(0.1));
  CHECK(fc->weight.requires_grad());
  CHECK(fc->weight.is_leaf());
  // reproducible
  gb::manual_seed(0);
  gb::nn::Linear again(400, 1000);
  CHECK(gb::equal(again->weight, fc->weight));
}

TEST_CASE("Linear computes x W^T + b over any leading dims; bias(false) registers no bias") {
  gb::nn::Linear fc(3, 2);
  {
    gb::NoGradGuard g;
    fc->weight.copy_(gb::tensor({{1.0, 2.0, 3.0}, {-1.0, 0.0, 1.0}}));
    fc->bias.copy_(gb::tensor({0.5, -0.5}));
  }
  gb::Tensor x = gb::tensor({{1.0, 1.0, 1.0}, {0.0, 1.0, 2.0}}).to(gb::kFloat);
  gbtest::expect(fc(x), {6.5, -0.5, 8.5, 1.5});
  CHECK(fc(gb::ones({4, 5, 3})).sizes() == gb::IntArrayRef({4, 5, 2}));
  CHECK(fc->named_parameters().keys() == std::vector<std::string>{"weight", "bias"});

  gb::nn::Linear nob(gb::nn::LinearOptions(3, 2).bias(false));
  CHECK(!nob->bias.defined());
  CHECK(nob->named_parameters().keys() == std::vector<std::string>{"weight"});
  CHECK(nob(gb::ones({1, 3})).sizes() == gb::IntArrayRef({1, 2}));
  CHECK_THROWS_AS(fc(gb::ones({2, 4})), gb::Error);

  // gradients: d(sum(y))/dW = sum over rows of x, d/db = number of rows
  fc(x).sum().backward();
  gbtest::expect(fc->weight.grad(), {1, 2, 3, 1, 2, 3});
  gbtest::expect(fc->bias.grad(), {2, 2});
}

TEST_CASE("Linear and Identity print PyTorch's repr; Identity returns its input") {
  CHECK(repr(*gb::nn::Linear(4, 8)) == "Linear(in_features=4, out_features=8, bias=true)");
  CHECK(repr(*gb::nn::Linear(gb::nn::LinearOptions(4, 8).bias(false))) ==
        "Linear(in_features=4, out_features=8, bias=false)");
  gb::nn::Identity id;
  gb::Tensor x = gb::randn({2, 3});
  CHECK(id(x).data_ptr() == x.data_ptr());
  CHECK(repr(*id) == "Identity()");
  CHECK(id->parameters().empty());
  gb::nn::Sequential seq(gb::nn::Linear(4, 8), gb::nn::Identity());
  std::ostringstream os;
  os << *seq;
  CHECK(os.str().find("(0): Linear(in_features=4, out_features=8, bias=true)") != std::string::npos);
  CHECK(os.str().find("(1): Identity()") != std::string::npos);
}

TEST_CASE("a raw forward attributes its allocations to the module (ModuleCallScope)") {
  gb::nn::Linear fc(3, 2);
  gb::Tensor x = gb::randn({4, 3});
  CHECK(gbtest::allocation_modules([&] { fc->forward(x); }) == std::set<std::string>{"Linear"});
  gb::nn::Sequential seq(gb::nn::Linear(3, 2));
  auto& inner = seq->at<gb::nn::LinearImpl>(0);
  CHECK(gbtest::allocation_modules([&] { inner.forward(x); }) == std::set<std::string>{"0"});
  CHECK(gbtest::allocation_modules([&] { gb::linear(x, fc->weight); }) == std::set<std::string>{""});
}
