// tests/engine/optim/one_cycle_lr_test.cpp — OneCycleLR: the phase boundaries by hand (cos and linear, two and
// three phases), momentum / beta1 cycling, per-group max_lr, PyTorch's errors.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

#include <glassbox/glassbox.h>
#include "engine/optim/optim_test_util.h"

using optim_test::error_of;
using optim_test::lr_of;

using namespace gb::optim;

namespace {
double hyper(Optimizer& o, const std::string& name, size_t g = 0) {
  for (const auto& [n, v] : o.param_groups()[g].options().hyperparameters())
    if (n == name) return v;
  FAIL("no hyperparameter " << name);
  return 0;
}
std::vector<gb::Tensor> one_param() { return {gb::zeros({1}).requires_grad_()}; }
}  // namespace

TEST_CASE("cos: initial lr, peak at pct_start, minimum at the end; momentum the other way") {
  SGD opt(one_param(), SGDOptions(0.5).momentum(0.0));
  OneCycleLR s(opt, OneCycleLROptions(1.0).total_steps(10));  // phases end at steps 2 and 9
  CHECK(s.total_steps() == 10);
  CHECK(lr_of(opt) == doctest::Approx(0.04).epsilon(1e-14));  // max_lr / div_factor
  CHECK(hyper(opt, "momentum") == doctest::Approx(0.95).epsilon(1e-14));
  CHECK(*opt.param_groups()[0].initial_lr() == 1.0 / 25);
  s.step();  // pct 0.5 of the warmup: halfway on the cosine
  CHECK(lr_of(opt) == doctest::Approx(0.52).epsilon(1e-14));
  CHECK(hyper(opt, "momentum") == doctest::Approx(0.90).epsilon(1e-14));
  s.step();
  CHECK(lr_of(opt) == 1.0);
  CHECK(hyper(opt, "momentum") == 0.85);
  for (int i = 0; i < 7; ++i) s.step();  // step 9: the end of the cycle
  CHECK(lr_of(opt) == doctest::Approx(0.04 / 1e4).epsilon(1e-12));
  CHECK(hyper(opt, "momentum") == doctest::Approx(0.95).epsilon(1e-14));
  s.step();  // step 10 is still allowed (PyTorch checks step > total_steps)
  CHECK(error_of([&] { s.step(); }).find("Tried to step 11 times. The specified number of total steps is 10") == 0);
}

TEST_CASE("linear, three phases, epochs * steps_per_epoch; Adam cycles beta1 and keeps beta2") {
  Adam opt(one_param(), AdamOptions(1e-3).betas(std::make_tuple(0.5, 0.99)));
  OneCycleLR s(opt, OneCycleLROptions(0.2)
                        .epochs(2)
                        .steps_per_epoch(5)
                        .pct_start(0.2)
                        .anneal_strategy("linear")
                        .div_factor(10)
                        .final_div_factor(2)
                        .three_phase(true)
                        .base_momentum({0.8})
                        .max_momentum({0.9}));
  // phases end at 1, 2, 9: 0.02 -> 0.2 -> 0.02 -> 0.01
  std::vector<double> want_lr = {0.02, 0.2, 0.02}, want_b1 = {0.9, 0.8, 0.9};
  for (size_t i = 0; i < want_lr.size(); ++i) {
    CAPTURE(i);
    CHECK(lr_of(opt) == doctest::Approx(want_lr[i]).epsilon(1e-14));
    CHECK(hyper(opt, "beta1") == doctest::Approx(want_b1[i]).epsilon(1e-14));
    CHECK(hyper(opt, "beta2") == 0.99);
    s.step();
  }
  // step 3 of the last phase (2 -> 9): 1/7 of the way from 0.02 to 0.01
  CHECK(lr_of(opt) == doctest::Approx(0.02 - 0.01 / 7).epsilon(1e-14));
  for (int i = 0; i < 6; ++i) s.step();
  CHECK(lr_of(opt) == doctest::Approx(0.01).epsilon(1e-14));
}

TEST_CASE("max_lr per group") {
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(one_param());
  groups.emplace_back(one_param());
  SGD opt(groups, SGDOptions(0.1).momentum(0.9));
  OneCycleLR s(opt, OneCycleLROptions(std::vector<double>{1.0, 0.5}).total_steps(4).cycle_momentum(false));
  CHECK(lr_of(opt, 0) == doctest::Approx(0.04));
  CHECK(lr_of(opt, 1) == doctest::Approx(0.02));
  CHECK(hyper(opt, "momentum") == 0.9);  // not cycled
  CHECK(error_of([&] {
          OneCycleLR bad(opt, OneCycleLROptions(std::vector<double>{1, 2, 3}).total_steps(4));
        }).find("expected 2 values for max_lr, got 3") == 0);
}

TEST_CASE("PyTorch's argument errors") {
  SGD opt(one_param(), SGDOptions(0.1));
  CHECK(error_of([&] {
          OneCycleLR s(opt, OneCycleLROptions(1.0));
        }).find("You must define either total_steps OR (epochs AND steps_per_epoch)") == 0);
  CHECK(error_of([&] {
          OneCycleLR s(opt, OneCycleLROptions(1.0).total_steps(0));
        }).find("Expected positive integer total_steps, but got 0") == 0);
  CHECK(error_of([&] {
          OneCycleLR s(opt, OneCycleLROptions(1.0).epochs(0).steps_per_epoch(3));
        }).find("Expected positive integer epochs, but got 0") == 0);
  CHECK(error_of([&] {
          OneCycleLR s(opt, OneCycleLROptions(1.0).total_steps(5).pct_start(1.5));
        }).find("Expected float between 0 and 1 pct_start, but got 1.5") == 0);
  CHECK(error_of([&] {
          OneCycleLR s(opt, OneCycleLROptions(1.0).total_steps(5).anneal_strategy("exp"));
        }).find("anneal_strategy must by one of 'cos' or 'linear', instead got exp") == 0);
}
