// Tests engine/optim/sgd_update.cpp: the fused SGD update equals the unfused ops (PyTorch's _single_tensor_sgd) for
// every option, across the pool's split of a large tensor, and its statistics equal the monitor's scans of the
// gradient, the update and the parameter after it.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include <cmath>

#include "monitor/scan.h"
#include "optim/sgd_update.h"

using gb::optim::detail::SgdCoefs;
using gb::optim::detail::SgdStepSums;

namespace {

// The unfused reference, op by op as optim/sgd.cpp's general path.
void reference(gb::Tensor p, const gb::Tensor& g, gb::Tensor buf, const SgdCoefs& c) {
  gb::NoGradGuard ng;
  gb::Tensor d = c.maximize ? g.neg() : g;
  if (c.weight_decay != 0) d = d.add(p, c.weight_decay);
  if (buf.defined()) {
    buf.mul_(c.momentum).add_(d, 1 - c.dampening);
    d = c.nesterov ? d.add(buf, c.momentum) : buf;
  }
  p.add_(d, -c.lr);
}

void check_close(const gb::Tensor& a, const gb::Tensor& b) { CHECK(gb::allclose(a, b, 1e-6, 1e-7)); }

}  // namespace

TEST_CASE("the fused update equals the unfused ops for every option, with and without the statistics") {
  struct Case {
    double momentum, dampening, weight_decay;
    bool nesterov, maximize;
  };
  for (const Case& k : {Case{0.9, 0, 0, false, false}, Case{0.9, 0.1, 1e-2, false, false},
                        Case{0.9, 0, 1e-3, true, false}, Case{0.5, 0, 0, false, true}, Case{0, 0, 1e-2, false, false},
                        Case{0, 0, 0, false, false}, Case{0.9, 0, 0, true, false}}) {
    for (bool stats : {false, true}) {
      CAPTURE(stats);
      CAPTURE(k.momentum);
      CAPTURE(k.nesterov);
      CAPTURE(k.maximize);
      gb::manual_seed(1);
      gb::Tensor p = gb::randn({37, 29}), g = gb::randn({37, 29});  // 1073 elements: blocks and a tail
      gb::Tensor buf = k.momentum != 0 ? gb::randn({37, 29}) : gb::Tensor();
      gb::Tensor p2 = p.clone(), buf2 = buf.defined() ? buf.clone() : gb::Tensor();
      SgdCoefs c{0.05, k.momentum, k.dampening, k.weight_decay, k.nesterov, k.maximize};
      REQUIRE(gb::optim::detail::sgd_fusable(p, g, buf));
      const uint32_t v = p._version();
      SgdStepSums sums;
      gb::optim::detail::sgd_update(p, g, buf, c, stats ? &sums : nullptr);
      CHECK(p._version() == v + 1);
      const gb::Tensor before = p2.clone();
      reference(p2, g, buf2, c);
      check_close(p, p2);
      if (buf.defined()) check_close(buf, buf2);
      if (stats) {
        CHECK(sums.grad.sumsq == doctest::Approx(g.to(gb::kDouble).pow(2).sum().item<double>()).epsilon(1e-6));
        CHECK(sums.update_sumsq ==
              doctest::Approx((p2 - before).to(gb::kDouble).pow(2).sum().item<double>()).epsilon(1e-4));
        // the parameter before its update (the monitor's update ratio is against it)
        CHECK(sums.param_sumsq == doctest::Approx(before.to(gb::kDouble).pow(2).sum().item<double>()).epsilon(1e-6));
      }
    }
  }
}

TEST_CASE("the statistics of the fused pass equal the scans, on a tensor the pool splits, with NaN, Inf and zeros") {
  gb::manual_seed(2);
  const int64_t n = 300001;  // above the grain: several chunks, and a tail
  gb::Tensor p = gb::randn({n}), g = gb::randn({n}), buf = gb::randn({n});
  g.narrow(0, 7, 3).fill_(0.0);
  gb::Tensor p_before = p.clone(), buf_before = buf.clone();
  SgdCoefs c{0.01, 0.9, 0, 1e-4, false, false};
  SgdStepSums sums;
  gb::optim::detail::sgd_update(p, g, buf, c, &sums);
  const auto gs = gb::monitor::detail::scan(g);
  CHECK(sums.grad.scanned);
  CHECK(sums.grad.n == n);
  CHECK(sums.grad.zeros == 3);
  CHECK(sums.grad.nonfinite() == 0);
  CHECK(sums.grad.sumsq == doctest::Approx(gs.sumsq).epsilon(1e-6));
  CHECK(sums.grad.max_abs == doctest::Approx(gs.max_abs).epsilon(1e-7));
  gb::Tensor step = (p_before - p).to(gb::kDouble);
  CHECK(sums.update_sumsq == doctest::Approx(step.pow(2).sum().item<double>()).epsilon(1e-5));
  CHECK(sums.param_sumsq == doctest::Approx(p_before.to(gb::kDouble).pow(2).sum().item<double>()).epsilon(1e-6));
  // and the update itself, split across the pool, equals the ops
  reference(p_before, g, buf_before, c);
  check_close(p, p_before);
  check_close(buf, buf_before);

  g.narrow(0, 100, 1).fill_(std::nan(""));
  g.narrow(0, n - 1, 1).fill_(-INFINITY);
  gb::optim::detail::sgd_update(p, g, buf, c, &sums);
  CHECK(sums.grad.nan == 1);
  CHECK(sums.grad.inf == 1);
  CHECK(std::isnan(sums.grad.norm()));
  CHECK(sums.grad.max_abs == INFINITY);
}

TEST_CASE("what the fused pass does not take") {
  gb::Tensor p = gb::randn({4, 5}), g = gb::randn({4, 5});
  CHECK_FALSE(gb::optim::detail::sgd_fusable(p, g.t().contiguous().t(), gb::Tensor()));  // a transposed gradient
  CHECK_FALSE(gb::optim::detail::sgd_fusable(p.to(gb::kDouble), g.to(gb::kDouble), gb::Tensor()));
  CHECK_FALSE(gb::optim::detail::sgd_fusable(p, gb::randn({5, 4}), gb::Tensor()));
  CHECK(gb::optim::detail::sgd_fusable(p, g, gb::Tensor()));
}
