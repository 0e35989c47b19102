// Tests engine/optim/rmsprop_update.cpp: the fused RMSprop pass equals the unfused ops (PyTorch's
// _single_tensor_rmsprop, optim/rmsprop.cpp's general path) bit for bit, for every option, on every instruction set
// this CPU has, across the pool's split of a parameter list; its statistics equal the monitor's scans; what it does
// not take goes to the ops, and RMSprop's step agrees either way.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include <cmath>

#include "core/cpu_isa.h"
#include "engine/optim/isa_list.h"
#include "monitor/scan.h"
#include "optim/rmsprop_update.h"

using gb::detail::CpuIsa;
using gb::optim::detail::RmspropCoefs;
using gb::optim::detail::RmspropStepSums;
using gb::optim::detail::RmspropTensors;

namespace {

// The unfused reference, op by op as optim/rmsprop.cpp's general path.
void reference(RmspropTensors t) {
  gb::NoGradGuard ng;
  const RmspropCoefs& c = t.c;
  gb::Tensor g = c.maximize ? t.grad.neg() : t.grad;
  if (c.weight_decay != 0) g = g.add(t.p, c.weight_decay);
  t.square_avg.mul_(c.alpha).addcmul_(g, g, 1 - c.alpha);
  gb::Tensor avg;
  if (c.centered) {
    t.grad_avg.mul_(c.alpha).add_(g, 1 - c.alpha);
    avg = gb::addcmul(t.square_avg, t.grad_avg, t.grad_avg, -1).sqrt_();
  } else {
    avg = t.square_avg.sqrt();
  }
  avg.add_(c.eps);
  if (c.momentum > 0) {
    t.momentum_buffer.mul_(c.momentum).addcdiv_(g, avg);
    t.p.add_(t.momentum_buffer, -c.lr);
  } else {
    t.p.addcdiv_(g, avg, -c.lr);
  }
}

// A parameter with state from earlier steps (a positive square average above the gradient average's square).
RmspropTensors make(std::vector<int64_t> shape, const RmspropCoefs& c) {
  RmspropTensors t;
  t.p = gb::randn(shape);
  t.grad = gb::randn(shape);
  t.square_avg = gb::rand(shape) * 0.5 + 0.25;
  if (c.centered) t.grad_avg = (gb::rand(shape) - 0.5) * 0.5;
  if (c.momentum > 0) t.momentum_buffer = gb::randn(shape) * 0.1;
  t.c = c;
  return t;
}
RmspropTensors twin(const RmspropTensors& t) {
  auto copy = [](const gb::Tensor& x) { return x.defined() ? x.clone() : gb::Tensor(); };
  return {t.p.clone(), t.grad, t.square_avg.clone(), copy(t.grad_avg), copy(t.momentum_buffer), t.c};
}
void check_same(const RmspropTensors& a, const RmspropTensors& b) {
  CHECK(gb::equal(a.p, b.p));
  CHECK(gb::equal(a.square_avg, b.square_avg));
  if (a.c.centered) CHECK(gb::equal(a.grad_avg, b.grad_avg));
  if (a.c.momentum > 0) CHECK(gb::equal(a.momentum_buffer, b.momentum_buffer));
}

}  // namespace

TEST_CASE("the fused pass equals the ops bit for bit: every option, every instruction set") {
  struct Case {
    double weight_decay, momentum;
    bool centered, maximize;
  };
  for (const Case& k :
       {Case{0, 0, false, false}, Case{1e-2, 0, false, false}, Case{0, 0.9, false, false}, Case{0, 0, true, false},
        Case{1e-2, 0.9, true, false}, Case{0.1, 0.5, false, true}, Case{0, 0.9, true, true}}) {
    for (CpuIsa isa : optim_test::isas()) {
      for (bool stats : {false, true}) {
        CAPTURE(gb::detail::cpu_isa_name(isa));
        CAPTURE(stats);
        CAPTURE(k.weight_decay);
        CAPTURE(k.momentum);
        CAPTURE(k.centered);
        CAPTURE(k.maximize);
        gb::detail::CpuIsaGuard guard(isa);
        gb::manual_seed(1);
        RmspropCoefs c{1e-2, 0.99, 1e-8, k.weight_decay, k.momentum, k.centered, k.maximize};
        RmspropTensors t = make({37, 29}, c);  // 1073 elements: whole blocks, a partial one and a tail of 8-lane groups
        RmspropTensors r = twin(t);
        REQUIRE(gb::optim::detail::rmsprop_fusable(t));
        const uint32_t v = t.p._version(), vs = t.square_avg._version();
        std::vector<RmspropStepSums> sums;
        gb::Tensor before = t.p.clone();
        gb::optim::detail::rmsprop_fused_update({t}, stats ? &sums : nullptr);
        CHECK(t.p._version() == v + 1);
        CHECK(t.square_avg._version() == vs + 1);
        reference(r);
        check_same(t, r);
        CHECK_FALSE(gb::equal(t.p, before));
        if (stats) {
          REQUIRE(sums.size() == 1);
          CHECK(sums[0].grad.sumsq ==
                doctest::Approx(t.grad.to(gb::kDouble).pow(2).sum().item<double>()).epsilon(1e-6));
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
  std::vector<RmspropTensors> items;
  for (std::vector<int64_t> shape :
       std::vector<std::vector<int64_t>>{{3}, {64, 32}, {1}, {300001}, {257}, {7, 9}, {40000}, {255}}) {
    RmspropCoefs c{1e-3, 0.99, 1e-6, 0, items.size() % 2 ? 0.9 : 0.0, items.size() % 3 == 0, false};  // mixed options
    items.push_back(make(shape, c));
  }
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    gb::set_num_threads(threads);
    std::vector<RmspropTensors> a, ra;
    for (const auto& t : items) {
      a.push_back(twin(t));
      ra.push_back(twin(t));
    }
    std::vector<RmspropStepSums> sums;
    gb::optim::detail::rmsprop_fused_update(a, &sums);
    REQUIRE(sums.size() == a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      CAPTURE(i);
      reference(ra[i]);
      check_same(a[i], ra[i]);
      const auto gs = gb::monitor::detail::scan(a[i].grad);
      CHECK(sums[i].grad.n == a[i].p.numel());
      CHECK(sums[i].grad.sumsq == doctest::Approx(gs.sumsq).epsilon(1e-6));
      CHECK(sums[i].grad.max_abs == gs.max_abs);
    }
  }
  gb::set_num_threads(2);
}

TEST_CASE("the statistics count NaN, Inf and zeros as the scans do, and a NaN spreads as in the ops") {
  gb::manual_seed(2);
  RmspropCoefs c{1e-2, 0.99, 1e-8, 0, 0.9, true, false};
  RmspropTensors t = make({100003}, c);
  t.grad.narrow(0, 7, 3).fill_(0.0);
  t.grad.narrow(0, 100, 1).fill_(std::nan(""));
  t.grad.narrow(0, 100002, 1).fill_(-INFINITY);
  RmspropTensors r = twin(t);
  std::vector<RmspropStepSums> sums;
  gb::optim::detail::rmsprop_fused_update({t}, &sums);
  const auto gs = gb::monitor::detail::scan(t.grad);
  CHECK(sums[0].grad.zeros == 3);
  CHECK(sums[0].grad.nan == 1);
  CHECK(sums[0].grad.inf == 1);
  CHECK(sums[0].grad.zeros == gs.zeros);
  CHECK(sums[0].grad.max_abs == INFINITY);
  reference(r);
  CHECK(gb::equal(t.p.isnan(), r.p.isnan()));
  CHECK(t.p.isnan().sum().item<int64_t>() == 2);  // the NaN gradient, and the Inf one (centered: Inf - Inf)
  CHECK(gb::equal(t.p.masked_fill(t.p.isnan(), 0), r.p.masked_fill(r.p.isnan(), 0)));
}

TEST_CASE("what the fused pass does not take") {
  RmspropCoefs c;
  RmspropTensors t = make({4, 5}, c);
  CHECK(gb::optim::detail::rmsprop_fusable(t));
  RmspropTensors u = t;
  u.grad = t.grad.t().contiguous().t();  // a transposed gradient
  CHECK_FALSE(gb::optim::detail::rmsprop_fusable(u));
  u = t;
  u.square_avg = t.square_avg.to(gb::kDouble);
  CHECK_FALSE(gb::optim::detail::rmsprop_fusable(u));
  u = t;
  u.c.centered = true;  // no grad_avg
  CHECK_FALSE(gb::optim::detail::rmsprop_fusable(u));
  u = t;
  u.c.momentum = 0.9;  // no momentum buffer
  CHECK_FALSE(gb::optim::detail::rmsprop_fusable(u));
}

TEST_CASE("RMSprop runs float32 cpu parameters fused, others through the ops, to the same numbers") {
  // A float64 twin of each parameter goes through the ops; the float32 one through the pass. After 5 steps they
  // agree to float32 precision, with every option on.
  gb::manual_seed(4);
  gb::Tensor w = gb::randn({33, 17}).requires_grad_(), b = gb::randn({17}).requires_grad_();
  gb::Tensor w64 = w.detach().to(gb::kDouble).requires_grad_(), b64 = b.detach().to(gb::kDouble).requires_grad_();
  const auto opts = gb::optim::RMSpropOptions(1e-2).alpha(0.9).momentum(0.5).centered(true).weight_decay(1e-3);
  gb::optim::RMSprop o32(std::vector<gb::Tensor>{w, b}, opts), o64(std::vector<gb::Tensor>{w64, b64}, opts);
  gb::Tensor x = gb::randn({8, 33});
  const auto allocations = [] { return gb::memory::memory_stats(gb::kCPU).allocation[gb::memory::kAll].allocated; };
  for (int step = 0; step < 5; ++step) {
    o32.zero_grad();
    o64.zero_grad();
    (x.matmul(w) + b).tanh().sum().backward();
    (x.to(gb::kDouble).matmul(w64) + b64).tanh().sum().backward();
    const int64_t before = allocations();
    o32.step();
    // after the first step (which makes the state) the float32 step is the fused pass: no temporary at all, where
    // the ops make two a parameter (weight decay's sum, centering's difference: the float64 step shows it)
    if (step > 0) CHECK(allocations() == before);
    const int64_t before64 = allocations();
    o64.step();
    if (step > 0) CHECK(allocations() - before64 == 2 * 2);
  }
  CHECK(gb::allclose(w.detach().to(gb::kDouble), w64.detach(), 1e-4, 1e-5));
  CHECK(gb::allclose(b.detach().to(gb::kDouble), b64.detach(), 1e-4, 1e-5));
  CHECK_FALSE(gb::allclose(w.detach().to(gb::kDouble), gb::randn({33, 17}).to(gb::kDouble)));
}
