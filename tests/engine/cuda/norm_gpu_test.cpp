// tests/engine/cuda/norm_gpu_test.cpp — GPU tier: layer_norm's and group_norm's forward on cuda (engine/cuda/norm.cu)
// against the cpu in every floating dtype, with and without weight and bias, their saved statistics through the
// gradients (the ops' formulas on cuda), and create_graph through them.
#include "support/check.h"

using gbtest::kGpu;

namespace {

double norm_tolerance(gb::ScalarType t) {
  return t == gb::kDouble ? 1e-11 : t == gb::kFloat ? 1e-5 : t == gb::kHalf ? 4e-3 : 3e-2;
}

// f(x, w, b) on both devices, the output and the three gradients of sum(f * g).
template <class F>
void check_norm(const gb::Tensor& x, const gb::Tensor& w, const gb::Tensor& b, F f, double tol) {
  auto run = [&](const gb::Device& d) {
    gb::Tensor xd = x.to(d).requires_grad_();
    gb::Tensor wd = w.defined() ? w.to(d).requires_grad_() : gb::Tensor();
    gb::Tensor bd = b.defined() ? b.to(d).requires_grad_() : gb::Tensor();
    gb::Tensor y = f(xd, wd, bd);
    gb::manual_seed(99);
    (y * gb::randn(y.sizes()).to(y.scalar_type()).to(d)).sum().backward();
    return std::tuple{y.cpu(), xd.grad().cpu(), wd.defined() ? wd.grad().cpu() : gb::Tensor(),
                      bd.defined() ? bd.grad().cpu() : gb::Tensor()};
  };
  auto [yc, gxc, gwc, gbc] = run(gb::kCPU);
  auto [yg, gxg, gwg, gbg] = run(kGpu);
  gbtest::check_close(yg, yc, tol, tol);
  gbtest::check_close(gxg, gxc, tol * 4, tol * 4);
  if (gwc.defined()) gbtest::check_close(gwg, gwc, tol * 8, tol * 8);
  if (gbc.defined()) gbtest::check_close(gbg, gbc, tol * 8, tol * 8);
}

}  // namespace

TEST_CASE("layer_norm on cuda equals the cpu in every floating dtype, with its gradients") {
  for (gb::ScalarType t : {gb::kFloat, gb::kDouble, gb::kHalf, gb::kBFloat16}) {
    CAPTURE(gb::to_string(t));
    gb::manual_seed(81);
    gb::Tensor x = (gb::randn({4, 7, 96}) * 3 + 2).to(t), w = gb::rand({96}).to(t), b = gb::randn({96}).to(t);
    auto ln = [](std::vector<int64_t> shape) {
      return [shape](const gb::Tensor& x, const gb::Tensor& w, const gb::Tensor& b) {
        return gb::layer_norm(x, shape, w, b, 1e-5);
      };
    };
    check_norm(x, w, b, ln({96}), norm_tolerance(t));
    check_norm(x, {}, {}, ln({96}), norm_tolerance(t));
    check_norm(x, w.reshape({1, 96}).expand({7, 96}).contiguous(), {}, ln({7, 96}), norm_tolerance(t));
  }
  // a long row (more elements than a block has threads) and a one-element row
  gb::Tensor x = gb::randn({3, 5000});
  check_norm(
      x, {}, {},
      [](const gb::Tensor& v, const gb::Tensor&, const gb::Tensor&) { return gb::layer_norm(v, {5000}, {}, {}, 1e-5); },
      1e-5);
  check_norm(
      gb::randn({6, 1}), {}, {},
      [](const gb::Tensor& v, const gb::Tensor&, const gb::Tensor&) { return gb::layer_norm(v, {1}, {}, {}, 1e-5); },
      1e-6);
}

TEST_CASE("group_norm on cuda equals the cpu, with its gradients") {
  for (gb::ScalarType t : {gb::kFloat, gb::kDouble, gb::kHalf}) {
    CAPTURE(gb::to_string(t));
    gb::manual_seed(82);
    gb::Tensor x = (gb::randn({3, 12, 5, 6}) * 2 - 1).to(t), w = gb::rand({12}).to(t), b = gb::randn({12}).to(t);
    for (int64_t groups : {1, 3, 12}) {
      CAPTURE(groups);
      check_norm(
          x, w, b,
          [groups](const gb::Tensor& v, const gb::Tensor& wv, const gb::Tensor& bv) {
            return gb::group_norm(v, groups, wv, bv, 1e-5);
          },
          norm_tolerance(t));
    }
    check_norm(
        x.reshape({3, 12, 30}), {}, {},
        [](const gb::Tensor& v, const gb::Tensor&, const gb::Tensor&) { return gb::group_norm(v, 4, {}, {}, 1e-5); },
        norm_tolerance(t));
  }
}

TEST_CASE("create_graph through layer_norm on cuda gives the cpu's second derivatives") {
  gb::manual_seed(83);
  gb::Tensor x = gb::randn({5, 8}, gb::kDouble), w = gb::rand({8}, gb::kDouble);
  auto second = [&](const gb::Device& d) {
    gb::Tensor xd = x.to(d).requires_grad_(), wd = w.to(d).requires_grad_();
    gb::Tensor y = gb::layer_norm(xd, {8}, wd, {}, 1e-5);
    gb::Tensor gx = gb::autograd::grad({y.pow(3).sum()}, {xd}, {}, true, true)[0];
    gx.square().sum().backward();
    return xd.grad().cpu();
  };
  gbtest::check_close(second(kGpu), second(gb::kCPU), 1e-9, 1e-9);
}
