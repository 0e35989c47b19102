// tests/engine/ops/norm_test.cpp — batch_norm (training/eval, running-stat updates), layer_norm, group_norm:
// hand-computed values, gradients (gradcheck, gradgradcheck, fused vs differentiable backward), dtypes, errors.
#include <limits>

#include "core/cpu_isa.h"
#include "engine/ops/row_kernel_checks.h"
#include "support/check.h"

using gbtest::check_close;
using gbtest::check_values;
using gbtest::gradgradcheck1;

namespace {

// Gradients of sum(f(inputs) * probe) w.r.t. inputs, with or without create_graph.
gb::variable_list grads_of(const std::function<gb::Tensor(const gb::variable_list&)>& f, const gb::variable_list& in,
                           bool create_graph) {
  gb::manual_seed(99);
  auto y = f(in);
  auto probe = gb::randn(y.sizes(), gb::kFloat64);
  return gb::autograd::grad({(y * probe).sum()}, in, {}, std::nullopt, create_graph);
}
// layer_norm over the last dim with w and b (either may be undefined) and its gradients for g, as values.
gbtest::Values layer_norm_values(const gb::Tensor& x, const gb::Tensor& w, const gb::Tensor& b, const gb::Tensor& g) {
  std::vector<gb::Tensor> inputs{x};
  if (w.defined()) inputs.insert(inputs.end(), {w, b});
  auto y = gb::layer_norm(x, {x.size(-1)}, w, b);
  gbtest::Values out{gbtest::values(y)};
  for (const gb::Tensor& t : gb::autograd::grad({y}, inputs, {g})) out.push_back(gbtest::values(t));
  return out;
}
}  // namespace

TEST_CASE("batch_norm training normalizes with batch statistics and updates the running ones") {
  auto x = gb::tensor({{1.0, 2.0}, {3.0, 6.0}});
  auto rm = gb::zeros({2});
  auto rv = gb::ones({2});
  auto v0 = rm._version();
  auto y = gb::batch_norm(x, gb::tensor({2.0, 3.0}), gb::tensor({0.5, -1.0}), rm, rv, true, 0.1, 0.0);
  check_values(y, {-1.5, -4, 2.5, 2});
  check_values(rm, {0.2, 0.4});
  check_values(rv, {1.1, 1.7}, 1e-6);  // unbiased variances 2 and 8
  CHECK(rm._version() > v0);
  // eval: the running statistics
  auto ye = gb::batch_norm(x, {}, {}, rm, rv, false, 0.1, 0.0);
  check_values(ye, {0.8 / std::sqrt(1.1), 1.6 / std::sqrt(1.7), 2.8 / std::sqrt(1.1), 5.6 / std::sqrt(1.7)}, 1e-6);
  check_values(rm, {0.2, 0.4});  // unchanged in eval
  // eval without running statistics falls back to batch statistics
  check_values(gb::batch_norm(x, {}, {}, {}, {}, false, 0.1, 0.0), {-1, -1, 1, 1});
}

TEST_CASE("batch_norm over (N,C,H,W) matches the definition, in every float dtype") {
  gb::manual_seed(7);
  auto x = gb::randn({4, 3, 5, 6}, gb::kFloat64) * 3 + 1;
  auto w = gb::randn({3}, gb::kFloat64), b = gb::randn({3}, gb::kFloat64);
  auto mean = x.mean({0, 2, 3}, true);
  auto var = ((x - mean) * (x - mean)).mean({0, 2, 3}, true);
  auto want = (x - mean) / (var + 1e-5).pow(0.5) * w.view({1, 3, 1, 1}) + b.view({1, 3, 1, 1});
  auto rm = gb::zeros({3}, gb::kFloat64), rv = gb::ones({3}, gb::kFloat64);
  check_close(gb::batch_norm(x, w, b, rm, rv, true, 0.5, 1e-5), want, 1e-10, 1e-10);
  check_close(rv, 0.5 + 0.5 * var.view({3}) * (120.0 / 119.0), 1e-10, 1e-10);
  auto y32 = gb::batch_norm(x.to(gb::kFloat), w.to(gb::kFloat), b.to(gb::kFloat), {}, {}, true, 0.1, 1e-5);
  CHECK(y32.scalar_type() == gb::kFloat);
  check_close(y32, want, 1e-4, 1e-4);
  auto yh = gb::batch_norm(x.to(gb::kHalf), w.to(gb::kHalf), b.to(gb::kHalf), {}, {}, true, 0.1, 1e-5);
  CHECK(yh.scalar_type() == gb::kHalf);
  check_close(yh, want, 2e-2, 2e-2);
  auto xt = x.transpose(2, 3);  // non-contiguous
  check_close(gb::batch_norm(xt, w, b, {}, {}, true, 0.1, 1e-5), want.transpose(2, 3), 1e-10, 1e-10);
}

TEST_CASE("batch_norm gradients") {
  gb::manual_seed(8);
  auto x = gb::randn({3, 2, 4, 3}, gbtest::f64_grad());
  auto w = gb::randn({2}, gbtest::f64_grad()), b = gb::randn({2}, gbtest::f64_grad());
  auto rm = gb::randn({2}, gb::kFloat64), rv = gb::rand({2}, gb::kFloat64) + 0.5;
  auto train = [](const gb::variable_list& v) { return gb::batch_norm(v[0], v[1], v[2], {}, {}, true, 0.1, 1e-5); };
  auto eval = [rm, rv](const gb::variable_list& v) {
    return gb::batch_norm(v[0], v[1], v[2], rm, rv, false, 0.1, 1e-5);
  };
  CHECK(train({x, w, b}).grad_fn()->name() == "NativeBatchNormBackward0");
  CHECK(gbtest::gradcheck1(train, {x, w, b}));
  CHECK(gbtest::gradcheck1(eval, {x, w, b}));
  CHECK(gbtest::gradcheck1(
      [](const gb::variable_list& v) { return gb::batch_norm(v[0], {}, {}, {}, {}, true, 0.1, 1e-5); }, {x}));
  auto x2 = gb::randn({5, 3}, gbtest::f64_grad());  // (N, C)
  auto w3 = gb::randn({3}, gbtest::f64_grad());
  CHECK(gbtest::gradcheck1(
      [](const gb::variable_list& v) { return gb::batch_norm(v[0], v[1], {}, {}, {}, true, 0.1, 1e-5); }, {x2, w3}));
  CHECK(gradgradcheck1(train, {x, w, b}));
  CHECK(gradgradcheck1(eval, {x, w, b}));
  // the fused first-order kernel and the differentiable formulas agree
  auto fused = grads_of(train, {x, w, b}, false), formula = grads_of(train, {x, w, b}, true);
  for (size_t i = 0; i < 3; ++i) check_close(fused[i], formula[i], 1e-10, 1e-10);
  auto fused_e = grads_of(eval, {x, w, b}, false), formula_e = grads_of(eval, {x, w, b}, true);
  for (size_t i = 0; i < 3; ++i) check_close(fused_e[i], formula_e[i], 1e-10, 1e-10);
}

TEST_CASE("layer_norm: values, gradients, dtypes") {
  auto x = gb::tensor({{1.0, 2.0, 3.0}, {2.0, 4.0, 6.0}});
  const double r = std::sqrt(1.5);
  check_values(gb::layer_norm(x, {3}, {}, {}, 0.0), {-r, 0, r, -r, 0, r}, 1e-6);
  check_values(gb::layer_norm(x, {3}, gb::tensor({1.0, 2.0, 3.0}), gb::tensor({0.0, 0.0, 1.0}), 0.0),
               {-r, 0, 3 * r + 1, -r, 0, 3 * r + 1}, 1e-5);
  gb::manual_seed(9);
  auto x3 = gb::randn({2, 3, 4, 5}, gbtest::f64_grad());
  auto m = x3.mean({2, 3}, true);
  auto var = ((x3 - m) * (x3 - m)).mean({2, 3}, true);
  check_close(gb::layer_norm(x3, {4, 5}), (x3 - m) / (var + 1e-5).pow(0.5), 1e-10, 1e-10);
  auto w = gb::randn({4, 5}, gbtest::f64_grad()), b = gb::randn({4, 5}, gbtest::f64_grad());
  auto f = [](const gb::variable_list& v) { return gb::layer_norm(v[0], {4, 5}, v[1], v[2]); };
  CHECK(f({x3, w, b}).grad_fn()->name() == "NativeLayerNormBackward0");
  CHECK(gbtest::gradcheck1(f, {x3, w, b}));
  CHECK(gradgradcheck1(f, {x3, w, b}));
  auto x1 = gb::randn({6}, gbtest::f64_grad());  // no leading dims
  auto w1 = gb::randn({6}, gbtest::f64_grad());
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::layer_norm(v[0], {6}, v[1]); }, {x1, w1}));
  auto xh = x3.detach().to(gb::kBFloat16);
  auto yh = gb::layer_norm(xh, {5});
  CHECK(yh.scalar_type() == gb::kBFloat16);
  check_close(yh, gb::layer_norm(xh.to(gb::kFloat), {5}), 2e-2, 2e-2);
}

TEST_CASE("group_norm: values, gradients") {
  auto x = gb::tensor({1.0, 3.0, 10.0, 20.0}).view({1, 4, 1});
  check_values(gb::group_norm(x, 2, gb::tensor({1.0, 2.0, 3.0, 4.0}), gb::tensor({0.0, 0.0, 0.0, 1.0}), 0.0),
               {-1, 2, -3, 5}, 1e-6);
  gb::manual_seed(10);
  auto x4 = gb::randn({2, 6, 3, 2}, gbtest::f64_grad());
  // one group = layer_norm over (C, H, W); C groups = instance norm
  check_close(gb::group_norm(x4, 1), gb::layer_norm(x4, {6, 3, 2}), 1e-10, 1e-10);
  auto w = gb::randn({6}, gbtest::f64_grad()), b = gb::randn({6}, gbtest::f64_grad());
  auto f = [](const gb::variable_list& v) { return gb::group_norm(v[0], 3, v[1], v[2]); };
  CHECK(f({x4, w, b}).grad_fn()->name() == "NativeGroupNormBackward0");
  CHECK(gbtest::gradcheck1(f, {x4, w, b}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::group_norm(v[0], 6); }, {x4}));
  CHECK(gradgradcheck1(f, {x4, w, b}));
  auto y32 = gb::group_norm(x4.detach().to(gb::kFloat), 3, w.detach().to(gb::kFloat), b.detach().to(gb::kFloat));
  check_close(y32, f({x4, w, b}), 1e-4, 1e-4);
}

TEST_CASE("normalization errors") {
  auto x = gb::ones({2, 4, 3});
  CHECK_THROWS_WITH_AS(gb::batch_norm(x, gb::ones({3}), {}, {}, {}, true, 0.1, 1e-5),
                       "batch_norm: weight should contain 4 elements not 3 (input of size [2, 4, 3])", gb::Error);
  CHECK_THROWS_WITH_AS(gb::batch_norm(x, {}, {}, gb::zeros({2}), gb::ones({2}), false, 0.1, 1e-5),
                       doctest::Contains("running_mean should contain 4 elements not 2"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::batch_norm(gb::ones({1, 4}), {}, {}, {}, {}, true, 0.1, 1e-5),
                       "Expected more than 1 value per channel when training, got input size [1, 4]", gb::Error);
  CHECK_THROWS_WITH_AS(gb::batch_norm(gb::ones({4}), {}, {}, {}, {}, true, 0.1, 1e-5),
                       doctest::Contains("expected input with at least 2 dims"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::layer_norm(gb::ones({2, 3}), {4}),
                       "Given normalized_shape=[4], expected input with shape [*, 4], but got input of size[2, 3]",
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::layer_norm(gb::ones({2, 4}), {4}, gb::ones({3})),
                       "Expected weight to be of same shape as normalized_shape, but got weight of shape [3] and "
                       "normalized_shape = [4]",
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::group_norm(gb::ones({2, 6, 4}), 4),
                       "Expected number of channels in input to be divisible by num_groups, but got input of shape "
                       "[2, 6, 4] and num_groups=4",
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::group_norm(gb::ones({2, 6, 4}), 3, gb::ones({3})),
                       "Expected weight to be a vector of size equal to the number of channels in input, but got "
                       "weight of shape [3] and input of shape [2, 6, 4]",
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::layer_norm(gb::ones({2, 3}, gb::kInt64), {3}), doctest::Contains("floating-point"),
                       gb::Error);
}

// The fused first-order backward (one pass per row) against the composite one, which create_graph selects: the same
// gradients for x, weight and bias, with and without affine parameters, a row length with a tail, two normalized
// dims, several leading dims, float64, float32 and float16; the forward against the formula in float64; under every
// instruction set this CPU has.
TEST_CASE("layer_norm: the fused backward equals the differentiable composite") {
  using gb::detail::CpuIsa;
  gb::manual_seed(4);
  struct Case {
    std::vector<int64_t> shape, normalized;
    bool weight, bias;
    gb::ScalarType dtype;
    double tol;
  };
  const Case cases[] = {
      {{6, 13}, {13}, true, true, gb::kDouble, 1e-12},     {{3, 4, 5}, {4, 5}, true, false, gb::kDouble, 1e-12},
      {{2, 3, 40}, {40}, false, true, gb::kDouble, 1e-12}, {{5, 9}, {9}, false, false, gb::kDouble, 1e-12},
      {{64, 256}, {256}, true, true, gb::kFloat, 2e-5},    {{7, 33}, {33}, true, true, gb::kHalf, 2e-2},
  };
  for (const Case& k : cases)
    for (CpuIsa isa : {CpuIsa::baseline, CpuIsa::avx2, CpuIsa::avx512}) {
      if (static_cast<int>(isa) > static_cast<int>(gb::detail::cpu_isa_supported())) continue;  // not on this CPU
      gb::detail::CpuIsaGuard guard(isa);
      CAPTURE(gb::detail::cpu_isa_name(isa));
      CAPTURE(k.shape);
      CAPTURE(gb::python_name(k.dtype));
      auto x = (gb::randn(k.shape, gb::kDouble) * 2 + 0.5).to(k.dtype).requires_grad_();
      auto w = k.weight ? gb::randn(k.normalized, gb::kDouble).to(k.dtype).requires_grad_() : gb::Tensor();
      auto b = k.bias ? gb::randn(k.normalized, gb::kDouble).to(k.dtype).requires_grad_() : gb::Tensor();
      auto g = gb::randn(k.shape, gb::kDouble).to(k.dtype);
      std::vector<gb::Tensor> inputs{x};
      if (k.weight) inputs.push_back(w);
      if (k.bias) inputs.push_back(b);
      auto y = gb::layer_norm(x, k.normalized, w, b);
      {
        std::vector<int64_t> dims;
        for (size_t d = 0; d < k.normalized.size(); ++d) dims.push_back(int64_t(k.shape.size() - 1 - d));
        auto x64 = x.detach().to(gb::kDouble);
        auto m = x64.mean(dims, true);
        auto want = (x64 - m) / ((x64 - m).pow(2).mean(dims, true) + 1e-5).sqrt();
        if (k.weight) want = want * w.detach().to(gb::kDouble);
        if (k.bias) want = want + b.detach().to(gb::kDouble);
        check_close(y.detach().to(gb::kDouble), want, k.tol * 10, k.tol * 10);
      }
      auto fused = gb::autograd::grad({y}, inputs, {g}, true);
      auto composite = gb::autograd::grad({y}, inputs, {g}, true, true);  // create_graph: the composite form
      REQUIRE(fused.size() == composite.size());
      for (size_t i = 0; i < fused.size(); ++i) {
        CAPTURE(i);
        CHECK(fused[i].scalar_type() == composite[i].scalar_type());
        CHECK(fused[i].sizes() == composite[i].sizes());
        check_close(fused[i].to(gb::kDouble), composite[i].detach().to(gb::kDouble), k.tol, k.tol);
      }
    }
}

// layer_norm's float rows run on 64-byte vectors written out, so every instruction set gives the baseline's bits for
// y, dx, dweight and dbias; with and without a weight, a row with a tail, and more rows than one partial block (16).
TEST_CASE("float layer_norm, forward and backward, gives the same bits under every instruction set") {
  gb::manual_seed(22);
  for (int64_t D : {7, 64, 1000})
    for (bool affine : {true, false}) {
      CAPTURE(D);
      CAPTURE(affine);
      auto x = (gb::randn({37, D}) * 2.0 + 0.5).requires_grad_();
      auto w = affine ? gb::randn({D}).requires_grad_() : gb::Tensor();
      auto b = affine ? gb::randn({D}).requires_grad_() : gb::Tensor();
      auto g = gb::randn({37, D});
      gbtest::check_same_bits_on_every_isa([&] { return layer_norm_values(x, w, b, g); });
    }
}

// Outputs far bigger than the cache go out through non-temporal stores: the same bits as plain stores, for y and
// dx, rows on and off a 16-byte boundary. The threshold is set to 0 so that small tensors take that path.
TEST_CASE("float layer_norm through streaming stores gives the plain stores' bits") {
  gb::manual_seed(24);
  for (int64_t D : {7, 1000, 1001}) {
    CAPTURE(D);
    auto x = (gb::randn({19, D}) * 2.0 + 0.5).requires_grad_();
    auto w = gb::randn({D}).requires_grad_(), b = gb::randn({D}).requires_grad_();
    auto g = gb::randn({19, D});
    gbtest::check_streamed_equals_plain([&] { return layer_norm_values(x, w, b, g); });
  }
}

// batch_norm's kernels (statistics, the affine pass, the fused backward) are compiled per instruction set: every set
// gives the baseline's bits for y, dx, dweight and dbias, in training and with running statistics, float and double,
// a spatial size with a tail (5x5) and without (8x8).
TEST_CASE("batch_norm, forward and backward, gives the same bits under every instruction set") {
  gb::manual_seed(25);
  for (gb::ScalarType dt : {gb::kFloat, gb::kDouble})
    for (int64_t hw : {5, 8})
      for (bool training : {true, false}) {
        CAPTURE(hw);
        CAPTURE(training);
        auto x = (gb::randn({6, 3, hw, hw}, dt) * 3.0 + 1.5).requires_grad_();
        auto w = gb::randn({3}, dt).requires_grad_(), b = gb::randn({3}, dt).requires_grad_();
        auto g = gb::randn({6, 3, hw, hw}, dt);
        gbtest::check_same_bits_on_every_isa([&] {
          auto rm = gb::zeros({3}, dt), rv = gb::ones({3}, dt) * 2.0;
          auto y = gb::batch_norm(x, w, b, rm, rv, training, 0.1, 1e-5);
          gbtest::Values out{gbtest::values(y), gbtest::values(rm), gbtest::values(rv)};
          for (const gb::Tensor& t : gb::autograd::grad({y}, {x, w, b}, {g})) out.push_back(gbtest::values(t));
          return out;
        });
      }
}

TEST_CASE("group_norm's forward gives the same bits under every instruction set, and the definition's values") {
  gb::manual_seed(26);
  for (gb::ScalarType dt : {gb::kFloat, gb::kDouble})
    for (int64_t hw : {3, 7}) {  // rows of 2 x 9 and 2 x 49 elements: vector bodies and tails
      CAPTURE(hw);
      auto x = gb::randn({3, 8, hw, hw}, dt) * 2.0 + 0.5;
      auto w = gb::randn({8}, dt), b = gb::randn({8}, dt);
      gbtest::check_same_bits_on_every_isa([&] {
        return gbtest::Values{gbtest::values(gb::group_norm(x, 4, w, b)), gbtest::values(gb::group_norm(x, 2))};
      });
      // against the definition, in double
      auto xd = x.to(gb::kDouble).view({3, 4, -1});
      auto mean = xd.mean({2}, true), var = xd.var({2}, 0, true);
      auto want = ((xd - mean) / (var + 1e-5).sqrt()).view(x.sizes()) * w.to(gb::kDouble).view({1, 8, 1, 1}) +
                  b.to(gb::kDouble).view({1, 8, 1, 1});
      check_close(gb::group_norm(x, 4, w, b).to(gb::kDouble), want, 1e-5, 1e-5);
    }
}
