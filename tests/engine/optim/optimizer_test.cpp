// tests/engine/optim/optimizer_test.cpp — the Optimizer base through SGD: the flat state dict layout (with a
// group's initial_lr), load errors that change nothing, duplicate parameters, closures under grad mode.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>
#include "engine/optim/optim_test_util.h"

using optim_test::error_of;

using namespace gb::optim;

TEST_CASE("state dict layout: state.<i>.<name>, param_groups.<g>.<hyperparameter>, params, initial_lr") {
  auto a = gb::ones({2}).requires_grad_(), b = gb::ones({3}).requires_grad_();
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<gb::Tensor>{a});
  groups.emplace_back(std::vector<gb::Tensor>{b}, std::make_unique<SGDOptions>(SGDOptions(0.5).momentum(0.9)));
  SGD opt(groups, SGDOptions(0.1).momentum(0.8));
  b.set_grad(gb::ones({3}));
  opt.step();  // only b has a gradient, so only parameter 1 has state
  auto sd = opt.state_dict();
  CHECK(!sd.contains("state.0.momentum_buffer"));
  CHECK(sd["state.1.momentum_buffer"].numel() == 3);
  CHECK(sd["param_groups.0.momentum"].item<double>() == 0.8);
  CHECK(sd["param_groups.1.lr"].item<double>() == 0.5);
  CHECK(sd["param_groups.1.params"].item<int64_t>() == 1);
  CHECK(!sd.contains("param_groups.0.initial_lr"));
  StepLR sched(opt, 10);
  sd = opt.state_dict();
  CHECK(sd["param_groups.1.initial_lr"].item<double>() == 0.5);

  auto a2 = gb::ones({2}).requires_grad_(), b2 = gb::ones({3}).requires_grad_();
  std::vector<OptimizerParamGroup> groups2;
  groups2.emplace_back(std::vector<gb::Tensor>{a2});
  groups2.emplace_back(std::vector<gb::Tensor>{b2});
  SGD fresh(groups2, SGDOptions(1.0));
  fresh.load_state_dict(sd);
  CHECK(fresh.param_groups()[1].options().get_lr() == 0.5);
  CHECK(*fresh.param_groups()[0].initial_lr() == 0.1);
  CHECK(fresh.state().size() == 1);
  CHECK(fresh.state().count(b2.unsafe_impl()) == 1);
}

TEST_CASE("load errors name the mismatch and change nothing") {
  auto p = gb::ones({2}).requires_grad_();
  SGD one({p}, SGDOptions(0.1));
  auto q = gb::ones({2}).requires_grad_(), r = gb::ones({2}).requires_grad_();
  SGD two({q, r}, SGDOptions(0.3));
  CHECK(error_of([&] {
          two.load_state_dict(one.state_dict());
        }).find("loaded state dict contains a parameter group that doesn't match the size of optimizer's group") == 0);
  CHECK(two.param_groups()[0].options().get_lr() == 0.3);
  CHECK(error_of([&] {
          SGD dup(std::vector<OptimizerParamGroup>{{{p}}, {{p}}}, SGDOptions(0.1));
        }).find("some parameters appear in more than one parameter group") == 0);
}
