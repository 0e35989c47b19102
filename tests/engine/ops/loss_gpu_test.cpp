// tests/engine/ops/loss_gpu_test.cpp — GPU tier: nll_loss and cross_entropy on cuda (engine/cuda/loss.cu) against
// the CPU: 1-D, 2-D and spatial inputs, class weights, ignore_index, label smoothing, every reduction, gradients
// and double backward with the CPU's node names, float32/float16 inputs, the bounds check on the device; then a
// classifier trained on cuda as on the cpu.
#include <cmath>
#include <utility>
#include <vector>

#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("nll_loss and cross_entropy on cuda equal the cpu") {
  gb::manual_seed(41);
  gb::Tensor logits = gb::randn({8, 5}, gb::kDouble);
  gb::Tensor target = gb::tensor(std::vector<int64_t>{0, 4, 2, 2, -100, 1, 3, 0});
  gb::Tensor weight = gb::tensor({1.0, 2.0, 0.5, 1.5, 3.0}, gb::kDouble);
  for (gb::Reduction r : {gb::Reduction::Mean, gb::Reduction::Sum, gb::Reduction::None}) {
    CAPTURE(int(r));
    gb::Tensor lp = gb::log_softmax(logits, 1);
    gbtest::check_close(gb::nll_loss(lp.to(kGpu), target.to(kGpu), {}, r), gb::nll_loss(lp, target, {}, r), 1e-12, 1e-12);
    gbtest::check_close(gb::nll_loss(lp.to(kGpu), target.to(kGpu), weight.to(kGpu), r),
                        gb::nll_loss(lp, target, weight, r), 1e-12, 1e-12);
    gbtest::check_close(gb::cross_entropy(logits.to(kGpu), target.to(kGpu), weight.to(kGpu), r, -100, 0.1),
                        gb::cross_entropy(logits, target, weight, r, -100, 0.1), 1e-12, 1e-12);
    gb::Tensor in_range = gb::clamp(target, gb::Scalar(0), std::nullopt);  // ignore_index 2 this time
    gbtest::check_close(gb::cross_entropy(logits.to(kGpu), in_range.to(kGpu), {}, r, 2),
                        gb::cross_entropy(logits, in_range, {}, r, 2), 1e-12, 1e-12);
  }
  // spatial (N, C, H, W) and 1-D (C) inputs
  gb::Tensor img = gb::randn({2, 3, 4, 4}, gb::kDouble);
  gb::Tensor tmap = gb::randint(0, 3, {2, 4, 4});
  gbtest::check_close(gb::cross_entropy(img.to(kGpu), tmap.to(kGpu)), gb::cross_entropy(img, tmap), 1e-12, 1e-12);
  gb::Tensor one = gb::randn({5}, gb::kDouble);
  gbtest::check_close(gb::cross_entropy(one.to(kGpu), gb::tensor(int64_t(3)).to(kGpu)),
                      gb::cross_entropy(one, gb::tensor(int64_t(3))), 1e-12, 1e-12);
}

TEST_CASE("gradients of cross_entropy on cuda equal the cpu") {
  gb::manual_seed(42);
  gb::Tensor x = gb::randn({16, 7}, gb::kDouble).requires_grad_(true);
  gb::Tensor xg = x.detach().to(kGpu).requires_grad_(true);
  gb::Tensor target = gb::randint(0, 7, {16});
  gb::Tensor weight = gb::rand({7}, gb::kDouble) + 0.5;
  gb::cross_entropy(x, target, weight, gb::Reduction::Mean, -100, 0.05).backward();
  gb::cross_entropy(xg, target.to(kGpu), weight.to(kGpu), gb::Reduction::Mean, -100, 0.05).backward();
  gbtest::check_close(xg.grad(), x.grad(), 1e-10, 1e-12);
}

// cross_entropy's compact backward on cuda (ops/log_softmax_onehot.h; softmax.cu's kernel reading one entry per row):
// the bits of nll_loss(log_softmax(x)), whose nodes pass the dense gradient, and one N x C buffer fewer in backward.
TEST_CASE("cross_entropy's compact backward on cuda: the dense path's bits, one N x C buffer fewer") {
  gb::manual_seed(44);
  for (gb::ScalarType dt : {gb::kFloat32, gb::kFloat64})
    for (gb::Reduction r : {gb::Reduction::Mean, gb::Reduction::Sum, gb::Reduction::None}) {
      CAPTURE(std::string(gb::to_string(dt)));
      CAPTURE(int(r));
      const int64_t n = 96, c = 30000;
      gb::Tensor x0 = (gb::randn({n, c}, gb::TensorOptions().dtype(dt)) * 4.0).to(kGpu);
      gb::Tensor t = gb::randint(0, c, {n});
      t.index_put_({0}, 1);  // ignored below
      t = t.to(kGpu);
      gb::Tensor w = (gb::rand({c}, gb::TensorOptions().dtype(dt)) + 0.5).to(kGpu);
      gb::Tensor gout = r == gb::Reduction::None ? gb::randn({n}, gb::TensorOptions().dtype(dt)).to(kGpu) : gb::Tensor();
      auto run = [&](bool compact, int64_t& peak) {
        gb::Tensor x = x0.detach().clone().requires_grad_();
        gb::Tensor l = compact ? gb::cross_entropy(x, t, w, r, 1) : gb::nll_loss(gb::log_softmax(x, 1), t, w, r, 1);
        gb::cuda::synchronize();
        gb::memory::reset_peak_stats(kGpu);
        const int64_t before = gb::memory::memory_stats(kGpu).allocated_bytes[gb::memory::kAll].current;
        l.backward(gout);
        gb::cuda::synchronize();
        peak = gb::memory::memory_stats(kGpu).allocated_bytes[gb::memory::kAll].peak - before;
        return std::make_pair(l.cpu(), x.grad().cpu());
      };
      int64_t peak_compact = 0, peak_dense = 0;
      auto [lc, gc] = run(true, peak_compact);
      auto [ld, gd] = run(false, peak_dense);
      CHECK(gb::equal(lc, ld));
      CHECK(gb::equal(gc, gd));  // no NaN here: equal compares the bits' values
      const int64_t nc = n * c * gb::element_size(dt);
      CHECK(peak_compact < nc + nc / 2);
      CHECK(peak_dense >= 2 * nc);
      // and the cpu's values
      gb::Tensor xc = x0.cpu().requires_grad_();
      gb::cross_entropy(xc, t.cpu(), w.cpu(), r, 1).backward(gout.defined() ? gout.cpu() : gb::Tensor());
      gbtest::check_close(gc, xc.grad(), dt == gb::kFloat64 ? 1e-12 : 1e-5, 1e-6);
    }
}

TEST_CASE("nll_loss on cuda: the cpu's nodes, double backward, float32 and float16, all targets ignored") {
  gb::manual_seed(45);
  gb::Tensor lp = gb::log_softmax(gb::randn({6, 4, 3}, gb::kDouble), 1);
  gb::Tensor target = gb::randint(0, 4, {6, 3});
  gb::Tensor weight = gb::rand({4}, gb::kDouble) + 0.5;
  for (gb::Reduction r : {gb::Reduction::Mean, gb::Reduction::Sum, gb::Reduction::None}) {
    CAPTURE(int(r));
    gb::Tensor xc = lp.clone().requires_grad_(true), xg = lp.to(kGpu).requires_grad_(true);
    gb::Tensor lc = gb::nll_loss(xc, target, weight, r), lg = gb::nll_loss(xg, target.to(kGpu), weight.to(kGpu), r);
    CHECK(lg.grad_fn()->name() == lc.grad_fn()->name());  // NllLoss2DBackward0, not a composition
    // the upstream gradient v requires grad: d(sum(h * dL/dx))/dv is nll_loss's own gather again
    gb::Tensor vc = gb::rand(lc.sizes(), gb::kDouble).requires_grad_(true);
    gb::Tensor vg = vc.detach().to(kGpu).requires_grad_(true);
    gb::Tensor gc = gb::autograd::grad({lc}, {xc}, {vc}, true, true)[0];
    gb::Tensor gg = gb::autograd::grad({lg}, {xg}, {vg}, true, true)[0];
    gbtest::check_close(gg, gc, 1e-12, 1e-12);
    CHECK(gg.grad_fn()->name() == gc.grad_fn()->name());  // NllLossBackwardBackward0
    gb::Tensor hc = gb::randn(gc.sizes(), gb::kDouble);
    gb::Tensor dvc = gb::autograd::grad({(gc * hc).sum()}, {vc})[0];
    gb::Tensor dvg = gb::autograd::grad({(gg * hc.to(kGpu)).sum()}, {vg})[0];
    gbtest::check_close(dvg, dvc, 1e-12, 1e-12);
  }
  gb::Tensor lp32 = gb::log_softmax(gb::randn({32, 10}), 1);
  gb::Tensor t32 = gb::randint(0, 10, {32});
  gbtest::check_close(gb::nll_loss(lp32.to(kGpu), t32.to(kGpu)), gb::nll_loss(lp32, t32), 1e-6, 1e-6);
  gb::Tensor h = gb::nll_loss(lp32.to(gb::kHalf).to(kGpu), t32.to(kGpu));
  CHECK(h.scalar_type() == gb::kHalf);
  gbtest::check_close(h.to(gb::kFloat), gb::nll_loss(lp32.to(gb::kHalf), t32).to(gb::kFloat), 1e-3, 1e-3);
  gb::Tensor all_ignored = gb::full({4}, -100, gb::kInt64);
  CHECK(std::isnan(gb::nll_loss(lp32.narrow(0, 0, 4).to(kGpu), all_ignored.to(kGpu)).item().to_double()));
}

TEST_CASE("a target out of range is refused on cuda too, at the next synchronization, without waiting") {
  gb::Tensor lp = gb::log_softmax(gb::randn({2, 3}), 1).to(kGpu);
  gb::Tensor l = gb::nll_loss(lp, gb::tensor(std::vector<int64_t>{0, 3}).to(kGpu));  // returns at once
  CHECK_THROWS_WITH(l.item(), doctest::Contains("nll_loss() on cuda:0: index 3 is out of bounds for dimension 1 "
                                                "with size 3"));
  CHECK(std::isfinite(gb::nll_loss(lp, gb::tensor(std::vector<int64_t>{0, 2}).to(kGpu)).item().to_double()));
}

TEST_CASE("a classifier trained on cuda learns what the cpu one learns") {
  // two Gaussian blobs per class in 10-D, 4 classes
  gb::manual_seed(43);
  gb::Tensor centers = gb::randn({4, 10}) * 3;
  gb::Tensor y = gb::randint(0, 4, {512});
  gb::Tensor x = centers.index_select(0, y) + gb::randn({512, 10});
  auto train = [&](gb::Device dev) {
    gb::manual_seed(44);
    gb::nn::Sequential net(gb::nn::Linear(10, 32), gb::nn::ReLU(), gb::nn::Linear(32, 4));
    net->to(dev);
    gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.2).momentum(0.9));
    gb::Tensor xd = x.to(dev), yd = y.to(dev);
    double loss = 0;
    for (int step = 0; step < 40; ++step) {
      opt.zero_grad();
      gb::Tensor l = gb::cross_entropy(net->forward(xd), yd);
      l.backward();
      opt.step();
      loss = l.item().to_double();
    }
    const double acc = gb::eq(net->forward(xd).cpu().argmax(1, false), y).to(gb::kFloat).mean().item().to_double();
    return std::pair<double, double>{loss, acc};
  };
  auto [loss_cpu, acc_cpu] = train(gb::kCPU);
  auto [loss_gpu, acc_gpu] = train(kGpu);
  CHECK(acc_gpu >= 0.95);
  CHECK(loss_gpu == doctest::Approx(loss_cpu).epsilon(1e-3));
  CHECK(acc_gpu == doctest::Approx(acc_cpu).epsilon(0.01));
}
