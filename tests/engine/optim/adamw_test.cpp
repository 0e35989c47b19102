// tests/engine/optim/adamw_test.cpp — AdamW: decoupled decay by hand (and unlike Adam's L2), AMSGrad, defaults,
// option checks, and a state dict that resumes bit for bit.
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

using gb::optim::AdamW;
using gb::optim::AdamWOptions;

TEST_CASE("decoupled weight decay: p *= 1 - lr * wd, the moments never see it") {
  auto p = param({1, -2});
  AdamW opt({p}, AdamWOptions(0.1).weight_decay(0.1));
  set_grad(p, {0.5, 1});
  opt.step();
  // first step: Adam moves each element by lr * g / (|g| + eps) (times bias corrections that cancel)
  const double d0 = 0.05 / (std::sqrt(0.00025) / std::sqrt(0.001) + 1e-8);
  const double d1 = 0.1 / (std::sqrt(0.001) / std::sqrt(0.001) + 1e-8);
  gbtest::expect(p, {1 * 0.99 - 0.1 * d0 / 0.1, -2 * 0.99 - 0.1 * d1 / 0.1}, 0, 1e-14);
  auto& st = static_cast<gb::optim::AdamWParamState&>(*opt.state().at(p.unsafe_impl()));
  gbtest::expect(st.exp_avg(), {0.05, 0.1}, 0, 1e-16);  // (1 - beta1) * g, no decay term
}

TEST_CASE("AMSGrad keeps the largest second moment") {
  auto p = param({1});
  AdamW opt({p}, AdamWOptions(0.1).weight_decay(0).amsgrad(true));
  set_grad(p, {0.5});
  opt.step();
  set_grad(p, {0});
  opt.step();
  const double p1 = 1 - 0.05 / (std::sqrt(0.00025) / std::sqrt(0.001) + 1e-8);
  gbtest::expect(p, {p1 - (0.1 / 0.19) * 0.045 / (std::sqrt(0.00025) / std::sqrt(1 - 0.999 * 0.999) + 1e-8)}, 0, 1e-14);
}

TEST_CASE("defaults and checks") {
  CHECK(AdamWOptions().weight_decay() == 1e-2);
  CHECK(AdamWOptions().lr() == 1e-3);
  auto p = param({1});
  try {
    AdamW opt({p}, AdamWOptions(-1));
    FAIL("no error");
  } catch (const gb::Error& e) {
    CHECK(std::string(e.what()).find("Invalid learning rate: -1") == 0);
  }
  AdamW opt({p});
  CHECK(std::string(opt.name()) == "AdamW");
}

TEST_CASE("state_dict -> a fresh optimizer continues bit for bit") {
  auto run = [](AdamW& opt, gb::Tensor& p, int from, int to) {
    for (int i = from; i < to; ++i) {
      opt.zero_grad();
      ((p * p).sum() * (1.0 - 0.1 * i)).backward();
      opt.step();
    }
  };
  auto opts = AdamWOptions(0.02).amsgrad(true).weight_decay(0.3);
  auto p = gb::randn({4}).requires_grad_();
  auto q = p.detach().clone().requires_grad_();
  AdamW straight({p}, opts);
  run(straight, p, 0, 6);
  AdamW first({q}, opts);
  run(first, q, 0, 2);
  auto sd = first.state_dict();
  auto q2 = q.detach().clone().requires_grad_();
  AdamW resumed({q2});
  resumed.load_state_dict(sd);
  CHECK(resumed.param_groups()[0].options().hyperparameters()[4].second == 0.3);  // weight_decay
  run(resumed, q2, 2, 6);
  CHECK(gb::equal(p, q2));
}

TEST_CASE("each step is one optimizer span named AdamW.step; its ops nest inside") {
  optim_test::check_step_spans("AdamW.step", [](gb::Tensor w) {
    return std::unique_ptr<gb::optim::Optimizer>(new gb::optim::AdamW({w}, gb::optim::AdamWOptions(0.1)));
  });
}
