// tests/engine/optim/rmsprop_test.cpp — RMSprop: hand-computed steps (plain, centered, momentum, weight decay),
// option checks, state, and a state dict that resumes bit for bit.
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

using gb::optim::RMSprop;
using gb::optim::RMSpropOptions;

TEST_CASE("plain and weight-decayed RMSprop by hand") {
  auto p = param({1}), q = param({1});
  RMSprop plain({p}, RMSpropOptions(0.01));
  RMSprop wd({q}, RMSpropOptions(0.01).weight_decay(0.5));
  set_grad(p, {2});
  set_grad(q, {2});
  plain.step();
  wd.step();
  // s = 0.01 * g^2; p -= lr * g / (sqrt(s) + eps)
  gbtest::expect(p, {1 - 0.01 * 2 / (std::sqrt(0.04) + 1e-8)}, 0, 1e-15);
  gbtest::expect(q, {1 - 0.01 * 2.5 / (std::sqrt(0.0625) + 1e-8)}, 0, 1e-15);
  set_grad(p, {1});
  plain.step();
  const double s2 = 0.99 * 0.04 + 0.01 * 1;
  gbtest::expect(p, {1 - 0.01 * 2 / (std::sqrt(0.04) + 1e-8) - 0.01 * 1 / (std::sqrt(s2) + 1e-8)}, 0, 1e-15);
}

TEST_CASE("centered with momentum by hand") {
  auto p = param({1});
  RMSprop opt({p}, RMSpropOptions(0.01).alpha(0.9).centered(true).momentum(0.5));
  set_grad(p, {2});
  opt.step();
  // s = 0.1 * 4 = 0.4, a = 0.1 * 2 = 0.2, avg = sqrt(0.4 - 0.04) + eps, buf = g / avg
  const double buf1 = 2 / (std::sqrt(0.4 - 0.2 * 0.2) + 1e-8);
  gbtest::expect(p, {1 - 0.01 * buf1}, 0, 1e-15);
  set_grad(p, {-1});
  opt.step();
  const double s2 = 0.9 * 0.4 + 0.1 * 1, a2 = 0.9 * 0.2 + 0.1 * -1;
  const double buf2 = 0.5 * buf1 + -1 / (std::sqrt(s2 - a2 * a2) + 1e-8);
  gbtest::expect(p, {1 - 0.01 * buf1 - 0.01 * buf2}, 0, 1e-14);
  auto& st = static_cast<gb::optim::RMSpropParamState&>(*opt.state().at(p.unsafe_impl()));
  CHECK(st.step() == 2);
  gbtest::expect(st.grad_avg(), {a2}, 0, 1e-16);
  gbtest::expect(st.momentum_buffer(), {buf2}, 0, 1e-13);
}

TEST_CASE("option checks use PyTorch's messages; state only what the options need") {
  auto p = param({1});
  auto msg = [&](RMSpropOptions o) {
    try {
      RMSprop opt({p}, o);
    } catch (const gb::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(msg(RMSpropOptions(-0.1)).find("Invalid learning rate: -0.1") == 0);
  CHECK(msg(RMSpropOptions().eps(-1)).find("Invalid epsilon value: -1") == 0);
  CHECK(msg(RMSpropOptions().momentum(-1)).find("Invalid momentum value: -1") == 0);
  CHECK(msg(RMSpropOptions().weight_decay(-1)).find("Invalid weight_decay value: -1") == 0);
  CHECK(msg(RMSpropOptions().alpha(-1)).find("Invalid alpha value: -1") == 0);
  RMSprop opt({p});
  set_grad(p, {1});
  opt.step();
  auto sd = opt.state_dict();
  CHECK(sd.contains("state.0.square_avg"));
  CHECK(sd.contains("state.0.step"));
  CHECK(!sd.contains("state.0.momentum_buffer"));
  CHECK(!sd.contains("state.0.grad_avg"));
  CHECK(sd["param_groups.0.alpha"].item<double>() == 0.99);
}

TEST_CASE("state_dict -> a fresh optimizer continues bit for bit") {
  auto run = [](RMSprop& opt, gb::Tensor& p, int from, int to) {
    for (int i = from; i < to; ++i) {
      opt.zero_grad();
      ((p * p * p).sum() * (1.0 + 0.2 * i)).backward();
      opt.step();
    }
  };
  auto opts = RMSpropOptions(0.01).centered(true).momentum(0.9).weight_decay(0.01);
  auto p = gb::randn({2, 3}).requires_grad_();
  auto q = p.detach().clone().requires_grad_();
  RMSprop straight({p}, opts);
  run(straight, p, 0, 5);
  RMSprop first({q}, opts);
  run(first, q, 0, 3);
  auto sd = first.state_dict();
  auto q2 = q.detach().clone().requires_grad_();
  RMSprop resumed({q2});
  resumed.load_state_dict(sd);
  run(resumed, q2, 3, 5);
  CHECK(gb::equal(p, q2));
}

TEST_CASE("each step is one optimizer span named RMSprop.step; its ops nest inside") {
  optim_test::check_step_spans("RMSprop.step", [](gb::Tensor w) {
    return std::unique_ptr<gb::optim::Optimizer>(new gb::optim::RMSprop({w}, gb::optim::RMSpropOptions(0.1)));
  });
}
