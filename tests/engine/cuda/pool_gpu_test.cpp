// tests/engine/cuda/pool_gpu_test.cpp — GPU tier: max_pool2d (with indices), avg_pool2d and adaptive_avg_pool2d on
// cuda (engine/cuda/pool.cu) against the cpu's: outputs and indices, first and second derivatives, over kernel sizes,
// strides, padding, dilation, ceil_mode, count_include_pad, divisor_override, NaN windows and non-dividing adaptive
// sizes; then a small CNN's training steps on cuda (cuDNN convolutions and batch norm, these pools) against the cpu.
#include <limits>

#include "support/check.h"

using gbtest::kGpu;

namespace {

// f on both devices, with first and second derivatives of sum(f(x)^2) w.r.t. x.
template <class F>
void check_pool(const gb::Tensor& x, F f, double tol) {
  gb::Tensor xc = x.clone().requires_grad_(), xg = x.to(kGpu).requires_grad_();
  gb::Tensor yc = f(xc), yg = f(xg);
  REQUIRE(yg.device() == kGpu);
  gbtest::check_close(yg, yc, tol, tol);
  gb::Tensor gc = gb::autograd::grad({yc.square().sum()}, {xc}, {}, true, true)[0];
  gb::Tensor gg = gb::autograd::grad({yg.square().sum()}, {xg}, {}, true, true)[0];
  gbtest::check_close(gg, gc, tol, tol);
  gc.square().sum().backward();
  gg.square().sum().backward();
  gbtest::check_close(xg.grad(), xc.grad(), tol, tol);
}

}  // namespace

TEST_CASE("max_pool2d on cuda: the cpu's values and indices, gradients of both orders") {
  gb::manual_seed(61);
  for (gb::ScalarType t : {gb::kFloat, gb::kDouble, gb::kHalf}) {
    CAPTURE(gb::to_string(t));
    gb::Tensor x = gb::randn({2, 3, 11, 9}).to(t);
    struct Case {
      int64_t k, s, p, d;
      bool ceil;
    };
    for (Case c : {Case{2, 2, 0, 1, false}, Case{3, 2, 1, 1, false}, Case{3, 2, 1, 1, true}, Case{3, 1, 1, 2, false},
                   Case{2, 3, 1, 1, true}}) {
      CAPTURE(c.k);
      CAPTURE(c.s);
      auto [vc, ic] = gb::max_pool2d_with_indices(x, c.k, c.s, c.p, c.d, c.ceil);
      auto [vg, ig] = gb::max_pool2d_with_indices(x.to(kGpu), c.k, c.s, c.p, c.d, c.ceil);
      CHECK(gb::equal(vg.cpu(), vc));  // a maximum is one of the inputs: no rounding anywhere
      CHECK(gb::equal(ig.cpu(), ic));
      check_pool(
          x.to(gb::kDouble).to(t), [&](const gb::Tensor& v) { return gb::max_pool2d(v, c.k, c.s, c.p, c.d, c.ceil); },
          t == gb::kHalf ? 1e-2 : 1e-6);
    }
  }
  // a window holding NaN gives NaN and the NaN's index, as on the cpu; unbatched (C, H, W) input
  gb::Tensor x = gb::randn({2, 6, 6});
  x.index_put_({0, 1, 2}, std::numeric_limits<float>::quiet_NaN());
  auto [vc, ic] = gb::max_pool2d_with_indices(x, 2, 2, 0, 1, false);
  auto [vg, ig] = gb::max_pool2d_with_indices(x.to(kGpu), 2, 2, 0, 1, false);
  CHECK(gb::equal(ig.cpu(), ic));
  CHECK(vg.cpu().isnan().sum().item().to_double() == 1.0);
  CHECK(std::isnan(vg.cpu()[0][0][1].item().to_double()));
}

TEST_CASE("avg_pool2d and adaptive_avg_pool2d on cuda equal the cpu's, gradients of both orders") {
  gb::manual_seed(62);
  for (gb::ScalarType t : {gb::kFloat, gb::kDouble}) {
    CAPTURE(gb::to_string(t));
    gb::Tensor x = gb::randn({2, 3, 10, 7}).to(t);
    const double tol = t == gb::kDouble ? 1e-12 : 1e-6;
    check_pool(
        x, [](const gb::Tensor& v) { return gb::avg_pool2d(v, 2); }, tol);
    check_pool(
        x, [](const gb::Tensor& v) { return gb::avg_pool2d(v, 3, 2, 1); }, tol);
    check_pool(
        x, [](const gb::Tensor& v) { return gb::avg_pool2d(v, 3, 2, 1, true, false); }, tol);
    check_pool(
        x,
        [](const gb::Tensor& v) {
          return gb::avg_pool2d(v, {3, 2}, {2, 3}, {1, 1}, true, true, 5);
        },
        tol);
    for (std::vector<int64_t> size : {std::vector<int64_t>{1, 1}, {3, 3}, {4, 5}, {10, 7}, {13, 2}}) {
      CAPTURE(size);
      check_pool(
          x, [&](const gb::Tensor& v) { return gb::adaptive_avg_pool2d(v, size); }, tol);
    }
  }
}

TEST_CASE("a small CNN's training steps on cuda match the cpu's") {
  gb::backends::cudnn::allow_tf32 = false;
  auto net = [] {
    gb::manual_seed(63);
    return gb::nn::Sequential(gb::nn::Conv2d(gb::nn::Conv2dOptions(1, 8, 3).padding(1)), gb::nn::BatchNorm2d(8),
                              gb::nn::ReLU(), gb::nn::MaxPool2d(2),
                              gb::nn::Conv2d(gb::nn::Conv2dOptions(8, 16, 3).padding(1)), gb::nn::BatchNorm2d(16),
                              gb::nn::ReLU(), gb::nn::AdaptiveAvgPool2d(gb::nn::AdaptiveAvgPool2dOptions({2, 2})),
                              gb::nn::Flatten(), gb::nn::Linear(64, 10));
  };
  gb::nn::Sequential cpu_net = net(), gpu_net = net();
  gpu_net->to(kGpu);
  gb::optim::SGD cpu_opt(cpu_net->parameters(), gb::optim::SGDOptions(0.05).momentum(0.9));
  gb::optim::SGD gpu_opt(gpu_net->parameters(), gb::optim::SGDOptions(0.05).momentum(0.9));
  gb::manual_seed(64);
  gb::Tensor x = gb::randn({16, 1, 12, 12}), y = gb::randint(0, 10, {16});
  for (int step = 0; step < 3; ++step) {
    CAPTURE(step);
    cpu_opt.zero_grad();
    gpu_opt.zero_grad();
    gb::Tensor lc = gb::nn::functional::cross_entropy(cpu_net->forward(x), y);
    gb::Tensor lg = gb::nn::functional::cross_entropy(gpu_net->forward(x.to(kGpu)), y.to(kGpu));
    lc.backward();
    lg.backward();
    CHECK(lg.item().to_double() == doctest::Approx(lc.item().to_double()).epsilon(1e-4));
    cpu_opt.step();
    gpu_opt.step();
  }
  auto pc = cpu_net->parameters(), pg = gpu_net->parameters();
  for (size_t i = 0; i < pc.size(); ++i) gbtest::check_close(pg[i], pc[i], 1e-3, 1e-4);
  auto bc = cpu_net->buffers(), bg = gpu_net->buffers();
  for (size_t i = 0; i < bc.size(); ++i) gbtest::check_close(bg[i].to(bc[i].scalar_type()), bc[i], 1e-4, 1e-4);
  gb::backends::cudnn::allow_tf32 = true;
}
