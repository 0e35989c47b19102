// Tests engine/optim/adagrad_update.cpp: the fused Adagrad pass equals the unfused ops (PyTorch's
// _single_tensor_adagrad, optim/adagrad.cpp's general path) bit for bit, for every option, on every instruction set
// this CPU has, across the pool's split of a parameter list; its statistics equal the monitor's scans; what it does
// not take goes to the ops, and Adagrad's step agrees either way, without a temporary when fused.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include <cmath>

#include "core/cpu_isa.h"
#include "engine/optim/isa_list.h"
#include "monitor/scan.h"
#include "optim/adagrad_update.h"

using gb::detail::CpuIsa;
using gb::optim::detail::AdagradCoefs;
using gb::optim::detail::AdagradTensors;
using gb::optim::detail::FusedStepSums;

namespace {

// The unfused reference, op by op as optim/adagrad.cpp's general path.
void reference(AdagradTensors t) {
  gb::NoGradGuard ng;
  const AdagradCoefs& c = t.c;
  gb::Tensor g = c.maximize ? t.grad.neg() : t.grad;
  if (c.weight_decay != 0) g = g.add(t.p, c.weight_decay);
  const double clr = c.lr / (1 + (c.step - 1) * c.lr_decay);
  t.sum.addcmul_(g, g, 1);
  gb::Tensor std = t.sum.sqrt().add_(c.eps);
  t.p.addcdiv_(g, std, -clr);
}

AdagradTensors make(std::vector<int64_t> shape, const AdagradCoefs& c) {
  return {gb::randn(shape), gb::randn(shape), gb::rand(shape) * 2, c};
}
AdagradTensors twin(const AdagradTensors& t) { return {t.p.clone(), t.grad, t.sum.clone(), t.c}; }
void check_same(const AdagradTensors& a, const AdagradTensors& b) {
  CHECK(gb::equal(a.p, b.p));
  CHECK(gb::equal(a.sum, b.sum));
}

}  // namespace

TEST_CASE("the fused pass equals the ops bit for bit: every option, every instruction set, any split") {
  struct Case {
    double lr_decay, weight_decay;
    bool maximize;
    double step;
  };
  for (const Case& k :
       {Case{0, 0, false, 1}, Case{1e-3, 0, false, 4}, Case{0, 1e-2, false, 2}, Case{1e-2, 0.1, true, 7}}) {
    for (CpuIsa isa : optim_test::isas()) {
      for (bool stats : {false, true}) {
        CAPTURE(gb::detail::cpu_isa_name(isa));
        CAPTURE(stats);
        CAPTURE(k.weight_decay);
        CAPTURE(k.maximize);
        gb::detail::CpuIsaGuard guard(isa);
        gb::manual_seed(1);
        AdagradTensors t = make({37, 29}, {1e-2, k.lr_decay, k.weight_decay, 1e-10, k.maximize, k.step});
        AdagradTensors r = twin(t);
        REQUIRE(gb::optim::detail::adagrad_fusable(t));
        const uint32_t v = t.p._version(), vs = t.sum._version();
        gb::Tensor before = t.p.clone();
        std::vector<FusedStepSums> sums;
        gb::optim::detail::adagrad_fused_update({t}, stats ? &sums : nullptr);
        CHECK(t.p._version() == v + 1);
        CHECK(t.sum._version() == vs + 1);
        reference(r);
        check_same(t, r);
        CHECK_FALSE(gb::equal(t.p, before));
        if (stats) {
          REQUIRE(sums.size() == 1);
          CHECK(sums[0].update_sumsq ==
                doctest::Approx((t.p - before).to(gb::kDouble).pow(2).sum().item<double>()).epsilon(1e-5));
          // the parameter before its update (the monitor's update ratio is against it)
          CHECK(sums[0].param_sumsq == doctest::Approx(before.to(gb::kDouble).pow(2).sum().item<double>()).epsilon(1e-6));
        }
      }
    }
  }
  // a list, one range over the pool: each item equals its own ops, its statistics the monitor's scan
  gb::manual_seed(3);
  std::vector<AdagradTensors> items;
  for (std::vector<int64_t> shape : std::vector<std::vector<int64_t>>{{3}, {300001}, {257}, {7, 9}, {40000}})
    items.push_back(make(shape, {1e-2, 0, 0, 1e-10, false, 1.0 + double(items.size())}));
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    gb::set_num_threads(threads);
    std::vector<AdagradTensors> a, ra;
    for (const auto& t : items) {
      a.push_back(twin(t));
      ra.push_back(twin(t));
    }
    std::vector<FusedStepSums> sums;
    gb::optim::detail::adagrad_fused_update(a, &sums);
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

TEST_CASE("what the fused pass does not take; Adagrad agrees fused and not, and a fused step allocates nothing") {
  AdagradTensors t = make({4, 5}, {});
  CHECK(gb::optim::detail::adagrad_fusable(t));
  AdagradTensors u = t;
  u.grad = t.grad.t().contiguous().t();
  CHECK_FALSE(gb::optim::detail::adagrad_fusable(u));
  u = t;
  u.sum = t.sum.to(gb::kDouble);
  CHECK_FALSE(gb::optim::detail::adagrad_fusable(u));

  gb::manual_seed(4);
  gb::Tensor w = gb::randn({33, 17}).requires_grad_(), w64 = w.detach().to(gb::kDouble).requires_grad_();
  const auto opts = gb::optim::AdagradOptions(1e-1).lr_decay(1e-2).weight_decay(1e-3).initial_accumulator_value(0.1);
  gb::optim::Adagrad o32(std::vector<gb::Tensor>{w}, opts), o64(std::vector<gb::Tensor>{w64}, opts);
  gb::Tensor x = gb::randn({8, 33});
  const auto allocations = [] { return gb::memory::memory_stats(gb::kCPU).allocation[gb::memory::kAll].allocated; };
  for (int step = 0; step < 5; ++step) {
    o32.zero_grad();
    o64.zero_grad();
    x.matmul(w).tanh().sum().backward();
    x.to(gb::kDouble).matmul(w64).tanh().sum().backward();
    const int64_t before = allocations();
    o32.step();
    if (step > 0) CHECK(allocations() == before);  // the ops make two temporaries (weight decay's sum, sqrt)
    const int64_t before64 = allocations();
    o64.step();
    if (step > 0) CHECK(allocations() - before64 == 2);
  }
  CHECK(gb::allclose(w.detach().to(gb::kDouble), w64.detach(), 1e-4, 1e-5));
}
