// tests/engine/optim/schedulers_test.cpp — StepLR, MultiStepLR, CosineAnnealingLR, LinearLR: hand-computed
// schedules, the closed form behind step(epoch), per-group base lrs, argument checks, and resuming from state dicts.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

#include <glassbox/glassbox.h>
#include "engine/optim/optim_test_util.h"

using optim_test::error_of;
using optim_test::lr_of;

using namespace gb::optim;

namespace {
std::unique_ptr<SGD> sgd(std::vector<double> lrs) {
  std::vector<OptimizerParamGroup> groups;
  for (double lr : lrs)
    groups.emplace_back(std::vector<gb::Tensor>{gb::zeros({1}).requires_grad_()}, std::make_unique<SGDOptions>(lr));
  return std::make_unique<SGD>(groups, SGDOptions(lrs[0]));
}

// The first group's lr after construction and after each of `steps` steps.
std::vector<double> schedule(Optimizer& o, LRScheduler& s, int steps) {
  std::vector<double> out{lr_of(o)};
  for (int i = 0; i < steps; ++i) {
    s.step();
    out.push_back(lr_of(o));
  }
  return out;
}

void check_schedule(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-15) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(std::fabs(got[i] - want[i]) <= tol);
  }
}

}  // namespace

TEST_CASE("StepLR halves every step_size epochs; every group from its own lr") {
  auto opt = sgd({1.0, 0.2});
  StepLR s(*opt, 2, 0.5);
  CHECK(s.last_epoch() == 0);
  CHECK(s.base_lrs() == std::vector<double>{1.0, 0.2});
  check_schedule(schedule(*opt, s, 6), {1, 1, 0.5, 0.5, 0.25, 0.25, 0.125});
  CHECK(lr_of(*opt, 1) == 0.2 * 0.125);
  CHECK(s.get_last_lr() == std::vector<double>{0.125, 0.025});
  s.step(int64_t{3});  // closed form: 1 * 0.5^(3 // 2)
  CHECK(lr_of(*opt) == 0.5);
  CHECK(s.last_epoch() == 3);
}

TEST_CASE("MultiStepLR multiplies by gamma once per listing of a milestone") {
  auto opt = sgd({1.0});
  MultiStepLR s(*opt, {4, 2, 4}, 0.1);
  check_schedule(schedule(*opt, s, 5), {1, 1, 0.1, 0.1, 0.001, 0.001}, 1e-17);
  s.step(int64_t{3});  // closed form: one milestone passed
  CHECK(std::fabs(lr_of(*opt) - 0.1) < 1e-17);
}

TEST_CASE("CosineAnnealingLR follows the half cosine, then climbs back") {
  auto opt = sgd({1.0});
  CosineAnnealingLR s(*opt, 4, 0.0);
  const double c = std::cos(std::numbers::pi / 4);
  check_schedule(schedule(*opt, s, 8), {1, (1 + c) / 2, 0.5, (1 - c) / 2, 0, (1 - c) / 2, 0.5, (1 + c) / 2, 1}, 1e-15);
  auto opt2 = sgd({0.5});
  CosineAnnealingLR floor(*opt2, 2, 0.1);
  floor.step();
  floor.step();
  CHECK(std::fabs(lr_of(*opt2) - 0.1) < 1e-16);
}

TEST_CASE("LinearLR warms up from start_factor to end_factor, then holds") {
  auto opt = sgd({1.0});
  LinearLR s(*opt, 0.5, 1.0, 4);
  check_schedule(schedule(*opt, s, 6), {0.5, 0.625, 0.75, 0.875, 1, 1, 1});
  s.step(int64_t{2});  // closed form: 0.5 + 0.5 * 2 / 4
  CHECK(lr_of(*opt) == 0.75);
  auto opt2 = sgd({0.3});
  LinearLR d(*opt2);  // 1/3 -> 1 over 5 epochs
  CHECK(std::fabs(lr_of(*opt2) - 0.1) < 1e-16);
  CHECK(error_of([&] {
          LinearLR bad(*opt2, 0.0);
        }).find("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.") == 0);
  CHECK(error_of([&] {
          LinearLR bad(*opt2, 0.5, 1.5);
        }).find("Ending multiplicative factor expected to be between 0 and 1.") == 0);
}

TEST_CASE("the first scheduler records initial_lr in the group; later ones and resumes read it") {
  auto opt = sgd({1.0});
  LinearLR warm(*opt, 0.5, 1.0, 4);
  CHECK(lr_of(*opt) == 0.5);
  REQUIRE(opt->param_groups()[0].initial_lr().has_value());
  CHECK(*opt->param_groups()[0].initial_lr() == 1.0);
  StepLR second(*opt, 2, 0.5);  // base lr = initial_lr, not the warmed-down 0.5
  CHECK(second.base_lrs() == std::vector<double>{1.0});
  auto fresh = sgd({1.0});
  CHECK(error_of([&] {
          StepLR resumed(*fresh, 2, 0.5, /*last_epoch=*/3);
        }).find("param 'initial_lr' is not specified in param_groups[0] when resuming an optimizer") == 0);
}

TEST_CASE("optimizer + scheduler state dicts resume the schedule exactly") {
  auto opt = sgd({0.1, 0.3});
  CosineAnnealingLR s(*opt, 7, 0.001);
  std::vector<double> straight = schedule(*opt, s, 12);

  auto opt_a = sgd({0.1, 0.3});
  CosineAnnealingLR a(*opt_a, 7, 0.001);
  std::vector<double> got = schedule(*opt_a, a, 5);
  auto osd = opt_a->state_dict();
  auto ssd = a.state_dict();
  CHECK(osd["param_groups.1.initial_lr"].item<double>() == 0.3);
  CHECK(ssd["last_epoch"].item<double>() == 5);

  auto opt_b = sgd({9.0, 9.0});
  CosineAnnealingLR b(*opt_b, 7, 0.001);
  opt_b->load_state_dict(osd);
  b.load_state_dict(ssd);
  CHECK(b.base_lrs() == std::vector<double>{0.1, 0.3});
  for (int i = 0; i < 7; ++i) {
    b.step();
    got.push_back(lr_of(*opt_b));
  }
  CHECK(got == straight);
}

TEST_CASE("argument checks") {
  auto opt = sgd({0.1});
  CHECK(error_of([&] { StepLR s(*opt, 0); }).find("StepLR: step_size must be a positive") == 0);
  CHECK(error_of([&] { CosineAnnealingLR s(*opt, 0); }).find("CosineAnnealingLR: T_max must be a positive") == 0);
}
