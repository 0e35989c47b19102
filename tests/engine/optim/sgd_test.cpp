// tests/engine/optim/sgd_test.cpp — SGD: hand-computed updates for each option, option checks, groups, zero_grad,
// closures, and a state dict that resumes bit for bit.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include "instrument/session.h"
#include "traces/reader.h"
#include "traces/temp_dir.h"

#include "support/check.h"
#include "engine/optim/optim_test_util.h"

using optim_test::param;
using optim_test::set_grad;
using optim_test::error_of;

using gb::optim::SGD;
using gb::optim::SGDOptions;

TEST_CASE("plain SGD: p -= lr * g; weight decay and maximize") {
  auto p = param({1, -2});
  SGD opt({p}, SGDOptions(0.1));
  set_grad(p, {0.5, 1});
  opt.step();
  gbtest::expect(p, {1 - 0.1 * 0.5, -2 - 0.1 * 1}, 0, 1e-15);
  CHECK(opt.state().empty());  // no momentum, no state

  auto q = param({1, -2});
  SGD wd({q}, SGDOptions(0.1).weight_decay(0.5).maximize(true));
  set_grad(q, {0.5, 1});
  wd.step();  // d = -g + 0.5 p
  gbtest::expect(q, {1 - 0.1 * (-0.5 + 0.5), -2 - 0.1 * (-1 - 1)}, 0, 1e-15);
}

TEST_CASE("momentum, dampening and Nesterov follow PyTorch's buffer rules") {
  auto p = param({1}), q = param({1}), r = param({1});
  SGD mom({p}, SGDOptions(0.1).momentum(0.9));
  SGD damp({q}, SGDOptions(0.1).momentum(0.9).dampening(0.5));
  SGD nest({r}, SGDOptions(0.1).momentum(0.9).nesterov(true));
  for (int i = 0; i < 2; ++i) {
    set_grad(p, {2});
    set_grad(q, {2});
    set_grad(r, {2});
    mom.step();
    damp.step();
    nest.step();
  }
  // buffers: first step buf = g (no dampening on the first step), then buf = 0.9 buf + (1 - d) g
  gbtest::expect(p, {1 - 0.1 * 2 - 0.1 * (0.9 * 2 + 2)}, 0, 1e-15);
  gbtest::expect(q, {1 - 0.1 * 2 - 0.1 * (0.9 * 2 + 0.5 * 2)}, 0, 1e-15);
  // Nesterov: d = g + 0.9 buf
  gbtest::expect(r, {1 - 0.1 * (2 + 0.9 * 2) - 0.1 * (2 + 0.9 * (0.9 * 2 + 2))}, 0, 1e-15);
  auto& st = static_cast<gb::optim::SGDParamState&>(*mom.state().at(p.unsafe_impl()));
  gbtest::expect(st.momentum_buffer(), {0.9 * 2 + 2}, 0, 1e-15);
}

TEST_CASE("option checks use PyTorch's messages") {
  auto p = param({1});
  CHECK(error_of([&] { SGD opt({p}, SGDOptions(-0.1)); }).find("Invalid learning rate: -0.1") == 0);
  CHECK(error_of([&] { SGD opt({p}, SGDOptions(0.1).momentum(-1)); }).find("Invalid momentum value: -1") == 0);
  CHECK(error_of([&] { SGD opt({p}, SGDOptions(0.1).weight_decay(-1)); }).find("Invalid weight_decay value: -1") == 0);
  CHECK(error_of([&] {
          SGD opt({p}, SGDOptions(0.1).nesterov(true));
        }).find("Nesterov momentum requires a momentum and zero dampening") == 0);
  CHECK(error_of([&] {
          SGD opt({p}, SGDOptions(0.1).momentum(0.9).dampening(0.1).nesterov(true));
        }).find("Nesterov momentum requires a momentum and zero dampening") == 0);
  CHECK(error_of([&] { SGD opt({p, p}, SGDOptions(0.1)); }) == "");  // same tensor twice in one group is allowed
}

TEST_CASE("parameter groups keep their own learning rates; parameters without a gradient are skipped") {
  auto a = param({1}), b = param({1}), c = param({1});
  std::vector<gb::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<gb::Tensor>{a});
  groups.emplace_back(std::vector<gb::Tensor>{b, c}, std::make_unique<SGDOptions>(0.5));
  SGD opt(groups, SGDOptions(0.1));
  set_grad(a, {1});
  set_grad(b, {1});
  opt.step();
  gbtest::expect(a, {0.9}, 0, 1e-15);
  gbtest::expect(b, {0.5}, 0, 1e-15);
  gbtest::expect(c, {1}, 0, 0);
  CHECK(opt.param_groups()[1].options().get_lr() == 0.5);
  CHECK(opt.size() == 3);
}

TEST_CASE("zero_grad drops or zeroes the gradients") {
  auto p = param({1, 2});
  SGD opt({p}, SGDOptions(0.1));
  set_grad(p, {3, 4});
  opt.zero_grad(/*set_to_none=*/false);
  REQUIRE(p.grad().defined());
  gbtest::expect(p.grad(), {0, 0}, 0, 0);
  opt.zero_grad();
  CHECK(!p.grad().defined());
}

TEST_CASE("step(closure) evaluates the loss with grad mode on and returns it") {
  auto p = param({3});
  SGD opt({p}, SGDOptions(0.1));
  bool grad_mode_inside = false;
  gb::Tensor loss;
  {
    gb::NoGradGuard outside;
    loss = opt.step([&] {
      grad_mode_inside = gb::GradMode::is_enabled();
      opt.zero_grad();
      auto l = (p * p).sum();
      l.backward();
      return l;
    });
  }
  CHECK(grad_mode_inside);
  CHECK(loss.item<double>() == 9);
  gbtest::expect(p, {3 - 0.1 * 6}, 0, 1e-15);  // dl/dp = 2p
  CHECK(!opt.step().defined());                // no closure, no loss
}

TEST_CASE("state_dict -> a fresh optimizer continues bit for bit") {
  auto run = [](SGD& opt, gb::Tensor& p, int from, int to) {
    for (int i = from; i < to; ++i) {
      opt.zero_grad();
      auto l = (p * p * (1.0 + 0.1 * i)).sum();
      l.backward();
      opt.step();
    }
  };
  auto opts = SGDOptions(0.05).momentum(0.9).dampening(0.1).weight_decay(0.01);
  auto p = gb::randn({5}, gb::TensorOptions().dtype(gb::kFloat32)).requires_grad_();
  auto q = p.detach().clone().requires_grad_();
  SGD straight({p}, opts);
  run(straight, p, 0, 6);

  SGD first({q}, opts);
  run(first, q, 0, 3);
  auto sd = first.state_dict();
  CHECK(sd.contains("state.0.momentum_buffer"));
  CHECK(sd["param_groups.0.momentum"].item<double>() == 0.9);
  CHECK(sd["param_groups.0.nesterov"].item<double>() == 0);
  auto q2 = q.detach().clone().requires_grad_();
  SGD resumed({q2}, SGDOptions(1.0));  // hyperparameters come from the state dict
  resumed.load_state_dict(sd);
  CHECK(resumed.param_groups()[0].options().get_lr() == 0.05);
  run(resumed, q2, 3, 6);
  CHECK(gb::equal(p, q2));
}

TEST_CASE("each step is one optimizer span named SGD.step; its ops nest inside") {
  optim_test::check_step_spans("SGD.step", [](gb::Tensor w) {
    return std::unique_ptr<gb::optim::Optimizer>(new gb::optim::SGD({w}, gb::optim::SGDOptions(0.1).momentum(0.9)));
  });
}
