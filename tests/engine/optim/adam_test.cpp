// tests/engine/optim/adam_test.cpp — Adam: two hand-computed steps (plain, AMSGrad, L2 decay, maximize), option
// checks, the exact optimizer_state bytes, groups, closures, and a state dict that resumes bit for bit.
#include <doctest/doctest.h>

#include <cmath>

#include <glassbox/glassbox.h>

#include "instrument/session.h"
#include "traces/reader.h"
#include "traces/temp_dir.h"

#include "support/check.h"
#include "engine/optim/optim_test_util.h"

using optim_test::param;
using optim_test::set_grad;
using optim_test::error_of;

using gb::optim::Adam;
using gb::optim::AdamOptions;
namespace mem = gb::memory;

TEST_CASE("two Adam steps by hand, with and without AMSGrad") {
  // g1 = 0.5, g2 = 0: m1 = 0.05, v1 = 0.00025; m2 = 0.045, v2 = 0.00024975 (< v1, so AMSGrad keeps v1)
  auto p = param({1}), q = param({1});
  Adam plain({p}, AdamOptions(0.1));
  Adam ams({q}, AdamOptions(0.1).amsgrad(true));
  set_grad(p, {0.5});
  set_grad(q, {0.5});
  plain.step();
  ams.step();
  const double p1 = 1 - (0.1 / 0.1) * 0.05 / (std::sqrt(0.00025) / std::sqrt(0.001) + 1e-8);  // ~0.9
  gbtest::expect(p, {p1}, 0, 1e-14);
  gbtest::expect(q, {p1}, 0, 1e-14);
  CHECK(p1 == doctest::Approx(0.9).epsilon(1e-7));
  set_grad(p, {0});
  set_grad(q, {0});
  plain.step();
  ams.step();
  const double bc2 = 1 - 0.999 * 0.999;
  gbtest::expect(p, {p1 - (0.1 / 0.19) * 0.045 / (std::sqrt(0.00024975) / std::sqrt(bc2) + 1e-8)}, 0, 1e-14);
  gbtest::expect(q, {p1 - (0.1 / 0.19) * 0.045 / (std::sqrt(0.00025) / std::sqrt(bc2) + 1e-8)}, 0, 1e-14);
  auto& st = static_cast<gb::optim::AdamParamState&>(*ams.state().at(q.unsafe_impl()));
  CHECK(st.step() == 2);
  gbtest::expect(st.exp_avg(), {0.045}, 0, 1e-15);
  gbtest::expect(st.exp_avg_sq(), {0.00024975}, 0, 1e-15);
  gbtest::expect(st.max_exp_avg_sq(), {0.00025}, 0, 1e-15);
  CHECK(!static_cast<gb::optim::AdamParamState&>(*plain.state().at(p.unsafe_impl())).max_exp_avg_sq().defined());
}

TEST_CASE("L2 weight decay enters the gradient; maximize negates it") {
  auto p = param({1}), q = param({1});
  Adam wd({p}, AdamOptions(0.1).weight_decay(0.1));
  Adam mx({q}, AdamOptions(0.1).maximize(true));
  set_grad(p, {0.5});
  set_grad(q, {0.5});
  wd.step();
  mx.step();
  // g = 0.5 + 0.1 * 1 = 0.6; step 1 moves by (lr / (1 - beta1)) * m / (sqrt(v) / sqrt(1 - beta2) + eps) ~ lr
  gbtest::expect(p, {1 - (0.1 / 0.1) * 0.06 / (std::sqrt(0.00036) / std::sqrt(0.001) + 1e-8)}, 0, 1e-14);
  gbtest::expect(q, {1 + (0.1 / 0.1) * 0.05 / (std::sqrt(0.00025) / std::sqrt(0.001) + 1e-8)}, 0, 1e-14);
}

TEST_CASE("option checks use PyTorch's messages") {
  auto p = param({1});
  CHECK(error_of([&] { Adam o({p}, AdamOptions(-0.1)); }).find("Invalid learning rate: -0.1") == 0);
  CHECK(error_of([&] { Adam o({p}, AdamOptions().eps(-1)); }).find("Invalid epsilon value: -1") == 0);
  CHECK(error_of([&] {
          Adam o({p}, AdamOptions().betas(std::make_tuple(1.0, 0.999)));
        }).find("Invalid beta parameter at index 0: 1") == 0);
  CHECK(error_of([&] {
          Adam o({p}, AdamOptions().betas(std::make_tuple(0.9, -0.5)));
        }).find("Invalid beta parameter at index 1: -0.5") == 0);
  CHECK(error_of([&] { Adam o({p}, AdamOptions().weight_decay(-1)); }).find("Invalid weight_decay value: -1") == 0);
  CHECK(AdamOptions().lr() == 1e-3);
  CHECK(std::get<1>(AdamOptions().betas()) == 0.999);
}

TEST_CASE("after a step the allocator counts exactly the state tensors as optimizer_state") {
  const gb::Device cpu(gb::kCPU);
  auto by_state = [&] {
    return mem::memory_stats(cpu).allocated_bytes_by_category[int(mem::Category::optimizer_state)].current;
  };
  const int64_t before = by_state();
  auto w = gb::randn({128}).requires_grad_();    // 512 bytes: one allocator block, no rounding
  auto b = gb::randn({4, 64}).requires_grad_();  // 1024 bytes
  {
    Adam opt({w, b}, AdamOptions(0.01).amsgrad(true).weight_decay(0.1));
    (w.sum() + (b * b).sum()).backward();
    opt.step();
    CHECK(by_state() - before == 3 * (512 + 1024));  // exp_avg, exp_avg_sq, max_exp_avg_sq
    opt.step();
    CHECK(by_state() - before == 3 * (512 + 1024));  // no growth on later steps
  }
  CHECK(by_state() == before);
}

TEST_CASE("groups, skipped parameters and the closure") {
  auto a = param({1}), b = param({1}), c = param({1});
  std::vector<gb::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<gb::Tensor>{a, c});
  groups.emplace_back(std::vector<gb::Tensor>{b}, std::make_unique<AdamOptions>(0.5));
  Adam opt(groups, AdamOptions(0.1));
  auto loss = opt.step([&] {
    auto l = (a * 2 + b * 2).sum();
    l.backward();
    return l;
  });
  CHECK(loss.item<double>() == 4);
  gbtest::expect(a, {0.9}, 0, 1e-7);
  gbtest::expect(b, {0.5}, 0, 1e-7);
  gbtest::expect(c, {1}, 0, 0);
  CHECK(opt.state().count(c.unsafe_impl()) == 0);
}

TEST_CASE("state_dict -> a fresh optimizer continues bit for bit") {
  auto run = [](Adam& opt, gb::Tensor& p, int from, int to) {
    for (int i = from; i < to; ++i) {
      opt.zero_grad();
      ((p * p).sum() * (1.0 + 0.3 * i)).backward();
      opt.step();
    }
  };
  auto opts = AdamOptions(0.05).betas(std::make_tuple(0.8, 0.99)).amsgrad(true).weight_decay(0.01);
  auto p = gb::randn({3, 2}).requires_grad_();
  auto q = p.detach().clone().requires_grad_();
  Adam straight({p}, opts);
  run(straight, p, 0, 7);
  Adam first({q}, opts);
  run(first, q, 0, 4);
  auto sd = first.state_dict();
  CHECK(sd["state.0.step"].item<double>() == 4);
  CHECK(sd["param_groups.0.beta1"].item<double>() == 0.8);
  CHECK(sd["param_groups.0.amsgrad"].item<double>() == 1);
  auto q2 = q.detach().clone().requires_grad_();
  Adam resumed({q2});
  resumed.load_state_dict(sd);
  run(resumed, q2, 4, 7);
  CHECK(gb::equal(p, q2));
}

TEST_CASE("each step is one optimizer span named Adam.step; its ops nest inside") {
  optim_test::check_step_spans("Adam.step", [](gb::Tensor w) {
    return std::unique_ptr<gb::optim::Optimizer>(new gb::optim::Adam({w}, gb::optim::AdamOptions(0.1)));
  });
}
