// Tests engine/optim/adam_update.cpp: the fused Adam/AdamW pass equals the unfused ops (PyTorch's _single_tensor_adam
// and _single_tensor_adamw) bit for bit, for every option, on every instruction set this CPU has, across the pool's
// split of a parameter list; its statistics equal the monitor's scans; and what it does not take goes to the ops.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include <cmath>

#include "core/cpu_isa.h"
#include "engine/optim/isa_list.h"
#include "monitor/scan.h"
#include "optim/adam_update.h"

using gb::optim::detail::AdamCoefs;
using gb::optim::detail::AdamStepSums;
using gb::optim::detail::AdamTensors;
using gb::detail::CpuIsa;

namespace {

// The unfused reference, op by op as optim/adam.cpp's and adamw.cpp's general paths.
void reference(AdamTensors t) {
  gb::NoGradGuard ng;
  const AdamCoefs& c = t.c;
  gb::Tensor g = c.maximize ? t.grad.neg() : t.grad;
  if (c.decoupled && c.weight_decay != 0) t.p.mul_(1 - c.lr * c.weight_decay);
  if (!c.decoupled && c.weight_decay != 0) g = g.add(t.p, c.weight_decay);
  t.exp_avg.mul_(c.beta1).add_(g, 1 - c.beta1);
  t.exp_avg_sq.mul_(c.beta2).addcmul_(g, g, 1 - c.beta2);
  const double bc1 = 1 - std::pow(c.beta1, c.step), bc2s = std::sqrt(1 - std::pow(c.beta2, c.step));
  gb::Tensor denom;
  if (c.amsgrad) {
    t.max_exp_avg_sq.copy_(gb::maximum(t.max_exp_avg_sq, t.exp_avg_sq));
    denom = (t.max_exp_avg_sq.sqrt() / bc2s).add_(c.eps);
  } else {
    denom = (t.exp_avg_sq.sqrt() / bc2s).add_(c.eps);
  }
  t.p.addcdiv_(t.exp_avg, denom, -c.lr / bc1);
}

// A parameter of `shape` with random moments (a step > 1 has non-zero ones) and a twin for the reference.
AdamTensors make(std::vector<int64_t> shape, const AdamCoefs& c) {
  AdamTensors t;
  t.p = gb::randn(shape);
  t.grad = gb::randn(shape);
  t.exp_avg = gb::randn(shape) * 0.1;
  t.exp_avg_sq = gb::rand(shape) * 0.01;
  if (c.amsgrad) t.max_exp_avg_sq = gb::rand(shape) * 0.01;
  t.c = c;
  return t;
}
AdamTensors twin(const AdamTensors& t) {
  return {t.p.clone(), t.grad, t.exp_avg.clone(), t.exp_avg_sq.clone(),
          t.max_exp_avg_sq.defined() ? t.max_exp_avg_sq.clone() : gb::Tensor(), t.c};
}
void check_same(const AdamTensors& a, const AdamTensors& b) {
  CHECK(gb::equal(a.p, b.p));
  CHECK(gb::equal(a.exp_avg, b.exp_avg));
  CHECK(gb::equal(a.exp_avg_sq, b.exp_avg_sq));
  if (a.c.amsgrad) CHECK(gb::equal(a.max_exp_avg_sq, b.max_exp_avg_sq));
}

}  // namespace

TEST_CASE("the fused pass equals the ops bit for bit: Adam and AdamW, every option, every instruction set") {
  struct Case {
    double weight_decay;
    bool amsgrad, maximize, decoupled;
    double step;
  };
  for (const Case& k : {Case{0, false, false, false, 1}, Case{1e-2, false, false, false, 3},
                        Case{0, true, false, false, 2}, Case{0.1, true, true, false, 7}, Case{0, false, true, false, 1},
                        Case{1e-2, false, false, true, 1}, Case{0.1, true, false, true, 4}, Case{0, false, false, true, 2}}) {
    for (CpuIsa isa : optim_test::isas()) {
      for (bool stats : {false, true}) {
        CAPTURE(gb::detail::cpu_isa_name(isa));
        CAPTURE(stats);
        CAPTURE(k.weight_decay);
        CAPTURE(k.amsgrad);
        CAPTURE(k.maximize);
        CAPTURE(k.decoupled);
        gb::detail::CpuIsaGuard guard(isa);
        gb::manual_seed(1);
        AdamCoefs c{2e-3, 0.9, 0.999, 1e-8, k.weight_decay, k.amsgrad, k.maximize, k.decoupled, k.step};
        AdamTensors t = make({37, 29}, c);  // 1073 elements: whole blocks, a partial one and a tail of 8-lane groups
        AdamTensors r = twin(t);
        REQUIRE(gb::optim::detail::adam_fusable(t));
        const uint32_t v = t.p._version(), vm = t.exp_avg._version();
        std::vector<AdamStepSums> sums;
        gb::Tensor before = t.p.clone();
        gb::optim::detail::adam_fused_update({t}, stats ? &sums : nullptr);
        CHECK(t.p._version() == v + 1);
        CHECK(t.exp_avg._version() == vm + 1);
        reference(r);
        check_same(t, r);
        if (stats) {
          REQUIRE(sums.size() == 1);
          CHECK(sums[0].grad.sumsq == doctest::Approx(t.grad.to(gb::kDouble).pow(2).sum().item<double>()).epsilon(1e-6));
          CHECK(sums[0].update_sumsq ==
                doctest::Approx((t.p - before).to(gb::kDouble).pow(2).sum().item<double>()).epsilon(1e-5));
          // the parameter before its update (the monitor's update ratio is against it)
          CHECK(sums[0].param_sumsq == doctest::Approx(before.to(gb::kDouble).pow(2).sum().item<double>()).epsilon(1e-6));
        }
      }
    }
  }
}

TEST_CASE("a list of parameters is one range: each equals its own ops however the pool splits it") {
  gb::manual_seed(3);
  AdamCoefs c{1e-3, 0.9, 0.999, 1e-8, 1e-2, false, false, true, 5};
  // tiny ones a thread shares, one spanning several chunks of the pool, a tail of every length mod 8
  std::vector<AdamTensors> items, refs;
  for (std::vector<int64_t> shape : std::vector<std::vector<int64_t>>{
           {3}, {64, 32}, {1}, {300001}, {257}, {7, 9}, {40000}, {255}}) {
    AdamCoefs ci = c;
    ci.step = 1 + double(items.size());  // per-parameter steps (a parameter added later to the optimizer)
    items.push_back(make(shape, ci));
    refs.push_back(twin(items.back()));
  }
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    gb::set_num_threads(threads);
    std::vector<AdamTensors> a, ra;
    for (size_t i = 0; i < items.size(); ++i) {
      a.push_back(twin(items[i]));
      ra.push_back(twin(refs[i]));
    }
    std::vector<AdamStepSums> sums;
    std::vector<gb::Tensor> before;
    for (const AdamTensors& x : a) before.push_back(x.p.clone());
    gb::optim::detail::adam_fused_update(a, &sums);
    REQUIRE(sums.size() == a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      CAPTURE(i);
      reference(ra[i]);
      check_same(a[i], ra[i]);
      const auto gs = gb::monitor::detail::scan(a[i].grad);
      CHECK(sums[i].grad.n == a[i].p.numel());
      CHECK(sums[i].grad.sumsq == doctest::Approx(gs.sumsq).epsilon(1e-6));
      CHECK(sums[i].grad.max_abs == gs.max_abs);
      CHECK(sums[i].param_sumsq == doctest::Approx(before[i].to(gb::kDouble).pow(2).sum().item<double>()).epsilon(1e-6));
    }
  }
  gb::set_num_threads(2);
}

TEST_CASE("the statistics count NaN, Inf and zeros as the scans do, and a NaN moves into the moments as in the ops") {
  gb::manual_seed(2);
  AdamCoefs c{1e-3, 0.9, 0.999, 1e-8, 0, true, false, false, 3};
  AdamTensors t = make({100003}, c);
  t.grad.narrow(0, 7, 3).fill_(0.0);
  t.grad.narrow(0, 100, 1).fill_(std::nan(""));
  t.grad.narrow(0, 100002, 1).fill_(-INFINITY);
  t.max_exp_avg_sq.narrow(0, 500, 1).fill_(std::nan(""));  // amsgrad's max keeps a NaN (gb::maximum)
  AdamTensors r = twin(t);
  std::vector<AdamStepSums> sums;
  gb::optim::detail::adam_fused_update({t}, &sums);
  const auto gs = gb::monitor::detail::scan(t.grad);
  CHECK(sums[0].grad.zeros == 3);
  CHECK(sums[0].grad.nan == 1);
  CHECK(sums[0].grad.inf == 1);
  CHECK(sums[0].grad.zeros == gs.zeros);
  CHECK(sums[0].grad.max_abs == INFINITY);
  CHECK(std::isnan(sums[0].grad.norm()));
  reference(r);
  CHECK(gb::equal(t.p.isnan(), r.p.isnan()));
  CHECK(t.p.isnan().sum().item<int64_t>() == 3);  // the NaN gradient, the Inf one (Inf/Inf) and the NaN max
  CHECK(gb::equal(t.p.masked_fill(t.p.isnan(), 0), r.p.masked_fill(r.p.isnan(), 0)));
  CHECK(gb::equal(t.max_exp_avg_sq.isnan(), r.max_exp_avg_sq.isnan()));
}

TEST_CASE("what the fused pass does not take") {
  AdamCoefs c;
  AdamTensors t = make({4, 5}, c);
  CHECK(gb::optim::detail::adam_fusable(t));
  AdamTensors u = t;
  u.grad = t.grad.t().contiguous().t();  // a transposed gradient
  CHECK_FALSE(gb::optim::detail::adam_fusable(u));
  u = t;
  u.exp_avg = t.exp_avg.to(gb::kDouble);
  CHECK_FALSE(gb::optim::detail::adam_fusable(u));
  u = t;
  u.c.amsgrad = true;  // no max_exp_avg_sq
  CHECK_FALSE(gb::optim::detail::adam_fusable(u));
  u = t;
  u.grad = gb::randn({5, 4});
  CHECK_FALSE(gb::optim::detail::adam_fusable(u));
}

TEST_CASE("Adam and AdamW run float32 cpu parameters fused, others through the ops, to the same numbers") {
  // A float64 twin of each parameter goes through the ops; the float32 one through the pass. After 5 steps they
  // agree to float32 precision.
  for (bool decoupled : {false, true}) {
    CAPTURE(decoupled);
    gb::manual_seed(4);
    gb::Tensor w = gb::randn({33, 17}).requires_grad_(), b = gb::randn({17}).requires_grad_();
    gb::Tensor w64 = w.detach().to(gb::kDouble).requires_grad_(), b64 = b.detach().to(gb::kDouble).requires_grad_();
    std::unique_ptr<gb::optim::Optimizer> o32, o64;
    if (decoupled) {
      o32 = std::make_unique<gb::optim::AdamW>(std::vector<gb::Tensor>{w, b}, gb::optim::AdamWOptions(1e-2));
      o64 = std::make_unique<gb::optim::AdamW>(std::vector<gb::Tensor>{w64, b64}, gb::optim::AdamWOptions(1e-2));
    } else {
      o32 = std::make_unique<gb::optim::Adam>(std::vector<gb::Tensor>{w, b},
                                              gb::optim::AdamOptions(1e-2).weight_decay(1e-2).amsgrad(true));
      o64 = std::make_unique<gb::optim::Adam>(std::vector<gb::Tensor>{w64, b64},
                                              gb::optim::AdamOptions(1e-2).weight_decay(1e-2).amsgrad(true));
    }
    for (int s = 0; s < 5; ++s) {
      gb::Tensor g = gb::randn({33, 17});
      w.set_grad(g.clone());
      b.set_grad(g.sum(0));
      w64.set_grad(g.to(gb::kDouble));
      b64.set_grad(g.to(gb::kDouble).sum(0));
      o32->step();
      o64->step();
    }
    CHECK(gb::allclose(w.detach().to(gb::kDouble), w64.detach(), 1e-5, 1e-6));
    CHECK(gb::allclose(b.detach().to(gb::kDouble), b64.detach(), 1e-5, 1e-6));
  }
}
